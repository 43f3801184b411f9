"""A cable cut on ibsim stays a condition until it is cabled again: in events, /metrics, the overview and the map.

A real server with its embedded engine watches an ibsim fat tree through the real
``iblinkinfo``/``perfquery`` (sweeps every 2 s). ``Unlink`` of a leaf-spine cable raises one
``link_down`` condition that is still active many sweeps later (the events API and page
counts, ``infiniband_port_state`` at 1 for both its ports, the live frames' alerts with the
ends' node indices for the map); ``ReLink`` clears it, with its duration. Re-cabling a port to
another peer keeps each cable's history apart: the port's history says when it was re-cabled,
the new cable has no values from before, the cable left unplugged keeps its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.request
from datetime import datetime

import pytest
import websockets

from fabric_engine.topology.generate import fat_tree
from tests.support.server import running_server

pytestmark = [pytest.mark.realtools, pytest.mark.services]

SETUP = r"""
import json
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.models import CollectorConfig
f = Fabric.objects.create(name="ibsim", slug="ibsim", mode="telemetry", tick_s=1.0)
CollectorConfig.objects.create(fabric=f, environment=json.loads('ENV'), timeout_s=20.0, interval_s=2.0,
                               shard_size=8, stale_after_s=600.0)
"""
HELD_S = 30.0  # fifteen sweeps: an edge-triggered alert would have cleared long before


def get(server, path: str):
    request = urllib.request.Request(server.url + path, headers={"Cookie": server.cookie})
    with urllib.request.urlopen(request, timeout=30) as r:
        body = r.read().decode()
    return json.loads(body) if path.startswith("/api/") else body


def wait_for(what: str, check, timeout_s: float = 60.0):
    deadline = time.monotonic() + timeout_s
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def link_down_events(server) -> list[dict]:
    rows = get(server, "/api/fabrics/fabrics/ibsim/events/?kind=link_down&limit=50")
    return rows["results"] if isinstance(rows, dict) else rows


def down_states(server) -> set[tuple[str, str]]:
    text = get(server, "/metrics?fabric=ibsim")
    return {(line.split('name="')[1].split('"')[0], line.split('",port="')[1].split('"')[0])
            for line in text.splitlines() if line.startswith("infiniband_port_state{") and line.endswith(" 1")}


async def frame_alerts(server, seconds: float = 6.0) -> list[dict]:
    """The condition alerts of the newest live frame (as the map reads them)."""
    alerts: list[dict] = []
    async with websockets.connect(f"{server.ws_url}/ws/fabrics/ibsim/live/", max_size=None,
                                  additional_headers={"Cookie": server.cookie, "Origin": server.url}) as ws:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            with contextlib.suppress(TimeoutError):
                msg = json.loads(await asyncio.wait_for(ws.recv(), 1))
                if msg.get("type") == "frame":
                    alerts = [a for a in msg.get("alerts", []) if a.get("condition")]
    return alerts


def test_a_cut_cable_stays_a_condition_until_relinked(ibsim, tmp_path):
    design = fat_tree(hosts=16, radix=8, speed="HDR")
    sim = ibsim(design, sim_host="gpu0001", tools=("perfquery", "iblinkinfo"))
    sim.run_opensm(["-o"])
    env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    with running_server(tmp_path, setup=SETUP.replace("ENV", json.dumps(env))) as server:
        reference = wait_for("the first discovery to become the reference",
                             lambda: (r := get(server, "/api/telemetry/fabrics/ibsim/reference/"))["at"] and r, 90)
        assert (reference["switches"], reference["hosts"], reference["cables"], reference["by"]) == (8, 16, 32, None)
        assert link_down_events(server) == []

        sim.console('Unlink "leaf03"[5]')
        [event] = wait_for("the link_down condition", lambda: link_down_events(server), 60)
        assert event["active"] and event["severity"] == "critical"
        assert {event["details"]["a"], event["details"]["b"]} == {"leaf03 port 5", "spine01 port 3"}
        time.sleep(HELD_S)

        [still] = link_down_events(server)
        assert still["id"] == event["id"] and still["active"], "the condition cleared while the cable is out"
        summary = get(server, "/api/fabrics/fabrics/ibsim/events/summary/")
        assert summary["active"]["critical"] >= 1
        overview = get(server, "/api/fabrics/overview/")
        card = next(c for c in overview["fabrics"] if c["slug"] == "ibsim")
        assert card["alerts"]["critical"] == summary["active"]["critical"]
        assert down_states(server) == {("leaf03", "5"), ("spine01", "3")}
        page = get(server, "/fabrics/ibsim/events/")
        assert f"{summary['active']['critical']} critical" in page and "measured against the reference cabling" in page
        [alert] = [a for a in asyncio.run(frame_alerts(server)) if a["kind"] == "link_down"]
        assert alert["cable"] == -1 and sorted(alert["ports"]) == [3, 5] and min(alert["nodes"]) >= 0
        assert alert["since"] <= time.time() - HELD_S

        sim.console('ReLink "leaf03"[5]')
        [cleared] = wait_for("the condition to clear",
                             lambda: [e for e in link_down_events(server) if not e["active"]], 60)
        assert cleared["id"] == event["id"] and cleared["cleared_at"]
        lasted = datetime.fromisoformat(cleared["cleared_at"]) - datetime.fromisoformat(cleared["first_seen"])
        assert lasted.total_seconds() >= HELD_S and cleared["count"] >= HELD_S  # ticks of 1 s
        assert down_states(server) == set()
        assert not [a for a in asyncio.run(frame_alerts(server)) if a["kind"] == "link_down"]

        # re-cable leaf03 port 5 from spine01 port 3 to spine01 port 4 (leaf04's): history follows each cable
        t_recabled = time.time()
        for line in ('Unlink "leaf03"[5]', 'Unlink "leaf04"[5]', 'Link "leaf03"[5] "spine01"[4]'):
            sim.console(line)
        port = wait_for("the re-cabling in the port's history", lambda: (p := get(
            server, "/api/fabrics/fabrics/ibsim/ports/leaf03/5/history/?seconds=600"))["recabled"] and p, 60)
        [change] = port["recabled"]
        assert (change["from"]["node"], change["from"]["port"], change["to"]["node"], change["to"]["port"]) == (
            "spine01", 3, "spine01", 4)
        assert change["t"] >= t_recabled - 1 and (port["rx"]["node"], port["rx"]["port"]) == ("spine01", 4)
        new = get(server, f"/api/fabrics/fabrics/ibsim/links/{port['link']}/history/?seconds=600")
        before = [r for t, r in zip(new["t"], new["rate"], strict=True) if t < change["t"] - 1]
        assert before and all(r is None for r in before), "the old cable's values under the new peer"
        assert (new["tx"]["node"], new["rx"]["node"], new["rx"]["port"]) == ("leaf03", "spine01", 4)
        old = get(server, "/api/fabrics/fabrics/ibsim/ports/leaf04/5/history/?seconds=600")
        # (a tick before the second sweep measured nothing: no value, not down; issue 35)
        kept = [(r, d) for t, r, d in zip(old["t"], old["rate"], old["down"], strict=True) if t < t_recabled - 1]
        assert kept and any(r is not None for r, _ in kept) and not any(d for _, d in kept), \
            "leaf04 port 5's own history before it was cut"
