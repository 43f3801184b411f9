"""A restart during an outage never leaves a ghost alert (issue 35), on ibsim with the real tools.

A cable of an ibsim fat tree is cut (``Unlink``): the ``link_down`` condition opens one critical
event. The server is killed (SIGKILL) and started again: its engine raises the condition again with
its ``since`` kept, and the event goes on (whatever number its frames continue from). The
cable is relinked: the event closes at the relink, with the start of the cut, the duration between
them and a tick count of that duration; no condition stays active (events, conditions API,
overview), the ``link_up`` is an event too, and a second restart changes none of it. The variant
kills only the ``run_engine`` process beside a web server on Redis, and restarts Redis meanwhile: the
new engine numbers its frames from 1 again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from datetime import datetime

import pytest
import websockets

from fabric_engine.topology.generate import fat_tree
from tests.support.faults import private_redis
from tests.support.server import ROOT, redis_namespace, running_server

pytestmark = [pytest.mark.realtools, pytest.mark.services]

SETUP = r"""
import json
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.models import CollectorConfig
f = Fabric.objects.create(name="ibsim", slug="ibsim", mode="telemetry", tick_s=1.0)
CollectorConfig.objects.create(fabric=f, environment=json.loads('ENV'), timeout_s=20.0, interval_s=2.0,
                               shard_size=8, stale_after_s=600.0)
"""
CABLE = {"leaf03 port 5", "spine01 port 3"}
HELD_S = 20.0  # the outage before the restart: longer than the new engine takes to reach the same sequence number
#: The link-health grading every 2 s (default 10 s): the down's link_down_long closes at the first grading after the
#: relink, which :func:`relinked` waits for.
HEALTH = {"IBWEB_HEALTH_INTERVAL_S": "2"}


def get(server, path: str):
    request = urllib.request.Request(server.url + path, headers={"Cookie": server.cookie})
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read())


def wait_for(what: str, check, timeout_s: float = 60.0):
    deadline = time.monotonic() + timeout_s
    while True:
        with contextlib.suppress(OSError):  # a server still starting
            if got := check():
                return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def events(server, kind: str) -> list[dict]:
    return get(server, f"/api/fabrics/fabrics/ibsim/events/?kind={kind}&limit=50")["results"]


def conditions(server) -> list[dict]:
    return get(server, "/api/telemetry/fabrics/ibsim/conditions/")["conditions"]


async def _first_frame_seq(server) -> int:
    async with websockets.connect(f"{server.ws_url}/ws/fabrics/ibsim/live/", max_size=None,
                                  additional_headers={"Cookie": server.cookie, "Origin": server.url}) as ws:
        while True:
            msg = json.loads(await asyncio.wait_for(ws.recv(), 60))
            if msg.get("type") == "frame":
                return msg["seq"]


def frame_seq(server, timeout_s: float = 90.0) -> int:
    """The sequence number of the next live frame of the fabric (connecting again while the feed restarts)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return asyncio.run(_first_frame_seq(server))
        except (OSError, TimeoutError, websockets.exceptions.WebSocketException):
            assert time.monotonic() < deadline, "no live frame"
            time.sleep(1.0)


def cut(sim, server) -> dict:
    """Unlink the cable; the one open link_down event once it is there."""
    sim.console('Unlink "leaf03"[5]')
    [event] = wait_for("the link_down condition", lambda: events(server, "link_down"), 60)
    assert event["active"] and event["severity"] == "critical"
    assert {event["details"]["a"], event["details"]["b"]} == CABLE
    return event


def still_open(server, event: dict) -> None:
    """After a restart: the same event, still open, and the condition with its ``since`` kept."""
    [again] = wait_for("the new engine's first ticks", lambda: events(server, "link_down"), 60)
    assert again["id"] == event["id"] and again["active"] and again["first_seen"] == event["first_seen"]
    [condition] = wait_for("the condition again", lambda: [c for c in conditions(server) if c["id"] == event["id"]],
                           60)
    # no ghost: nothing else open is a link_down, and whatever else is open is of the cut cable's ends (the link-health
    # grading's link_down_long, if it graded the down since)
    others = [c for c in conditions(server) if c["id"] != event["id"]]
    assert all(c["kind"] != "link_down" and set(c["ends"]) <= CABLE | {"leaf03", "spine01"} for c in others), others
    assert condition["since"] == pytest.approx(
        datetime.fromisoformat(event["first_seen"]).timestamp(), abs=0.01)


def relinked(sim, server, event: dict, t_cut: float) -> dict:
    """Relink the cable: the one event closes with the right start, end, duration and count; nothing active."""
    t_relink = time.time()
    sim.console('ReLink "leaf03"[5]')
    # A relinked port trains to Init; the subnet manager's next sweep makes it Active, as a running SM does at the
    # port's trap. Left in Init, every LID-routed packet through it is discarded (PortXmitDiscards): a real error.
    sim.run_opensm(["-o"])
    [closed] = wait_for("the event to close", lambda: [e for e in events(server, "link_down") if not e["active"]],
                        60)
    assert closed["id"] == event["id"] and len(events(server, "link_down")) == 1
    start, end = (datetime.fromisoformat(closed[k]).timestamp() for k in ("first_seen", "cleared_at"))
    assert t_cut - 1 <= start <= t_cut + 15, "starts at the cut (within a sweep or two)"
    assert t_relink - 1 <= end <= t_relink + 20, "ends at the relink (within a sweep or two)"
    assert closed["duration_s"] == pytest.approx(end - start, abs=0.01)
    assert abs(closed["count"] - (end - start)) <= 1, "one tick a second, counted from the clock"
    assert conditions(server) == []
    # the link-health conditions of the down (link_down_long at both ends) close at the next grading of the
    # readings, every IBWEB_HEALTH_INTERVAL_S (:data:`HEALTH`): then nothing critical is left, a ghost would stay
    wait_for("no critical event left", lambda: get(
        server, "/api/fabrics/fabrics/ibsim/events/summary/")["active"]["critical"] == 0, 40)
    card = next(c for c in get(server, "/api/fabrics/overview/")["fabrics"] if c["slug"] == "ibsim")
    assert card["alerts"]["critical"] == 0
    ups = wait_for("the link_up event", lambda: events(server, "link_up"), 30)
    assert {ups[0]["details"]["a"], ups[0]["details"]["b"]} == CABLE
    return closed


def no_write_failed(*logs) -> None:
    for log in logs:
        text = log.read_text()
        assert "record_alerts" not in text and "CHECK constraint" not in text, text[-3000:]
        assert "event writes" not in text, text[-3000:]


def test_a_server_restart_during_an_outage_leaves_one_event_that_closes_at_the_relink(ibsim, tmp_path):
    design = fat_tree(hosts=16, radix=8, speed="HDR")
    sim = ibsim(design, sim_host="gpu0001", tools=("perfquery", "iblinkinfo"))
    sim.run_opensm(["-o"])
    env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    setup = SETUP.replace("ENV", json.dumps(env))
    with running_server(tmp_path, extra_env=HEALTH, setup=setup, name="before") as server:
        wait_for("the first discovery to become the reference",
                 lambda: get(server, "/api/telemetry/fabrics/ibsim/reference/")["at"], 90)
        t_cut = time.time()
        event = cut(sim, server)
        time.sleep(HELD_S)
        server.proc.kill()  # no clean shutdown
        server.proc.wait()
    with running_server(tmp_path, extra_env=HEALTH, name="after") as server:
        still_open(server, event)
        time.sleep(3.0)
        relinked(sim, server, event, t_cut)
        logs = [server.log]
    # a second restart: still one event, closed
    with running_server(tmp_path, extra_env=HEALTH, name="again") as server:
        time.sleep(5.0)
        [event_again] = events(server, "link_down")
        assert event_again["id"] == event["id"] and not event_again["active"] and conditions(server) == []
        assert get(server, "/api/fabrics/fabrics/ibsim/events/summary/")["active"]["critical"] == 0
    no_write_failed(tmp_path / "before.log", *logs, tmp_path / "again.log")


def _engine(env: dict, log, workdir) -> subprocess.Popen:
    """``run_engine ibsim`` in ``workdir`` (umad2sim leaves its ``sys-<pid>`` directories where the tools run)."""
    return subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "run_engine", "ibsim"], cwd=workdir, env=env,
                            stdout=log, stderr=subprocess.STDOUT)


def test_an_engine_restart_with_redis_restarted_during_an_outage_leaves_no_ghost(ibsim, tmp_path):
    design = fat_tree(hosts=16, radix=8, speed="HDR")
    sim = ibsim(design, sim_host="gpu0001", tools=("perfquery", "iblinkinfo"))
    sim.run_opensm(["-o"])
    collector = {k: v for k, v in sim.client_env("gpu0001").items()
                 if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    with private_redis(tmp_path) as redis:
        extra = {"REDIS_URL": redis.url, "IBWEB_ENGINE_EMBEDDED": "0", "IBWEB_CELERY_EAGER": "1",
                 "IBWEB_LOG_LEVEL": "INFO", **HEALTH}
        with running_server(tmp_path, extra_env=extra, setup=SETUP.replace("ENV", json.dumps(collector))) as server:
            env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path), "IBWEB_REDIS_NAMESPACE": redis_namespace(tmp_path),
                   "DATABASE_URL": f"sqlite:///{tmp_path / 'server.sqlite3'}", **extra}
            logs = [tmp_path / "engine-1.log", tmp_path / "engine-2.log"]
            engine = _engine(env, logs[0].open("wb"), tmp_path)
            try:
                wait_for("the first discovery to become the reference",
                         lambda: get(server, "/api/telemetry/fabrics/ibsim/reference/")["at"], 90)
                t_cut = time.time()
                event = cut(sim, server)
                time.sleep(HELD_S)
                seq_before = frame_seq(server)
                engine.kill()
                engine.wait()
                redis.restart(down_s=1.0)  # the sequence numbers and the runtime record are gone with it
                engine = _engine(env, logs[1].open("wb"), tmp_path)
                assert frame_seq(server) < seq_before, "the new engine numbers its frames from 1 again"
                still_open(server, event)
                time.sleep(3.0)
                relinked(sim, server, event, t_cut)
            finally:
                engine.kill()
                engine.wait()
    no_write_failed(*logs)
