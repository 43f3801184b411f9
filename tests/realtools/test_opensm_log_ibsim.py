"""OpenSM's own log, written while ibsim cuts and relinks a cable, read as link-down evidence.

A real OpenSM (``-D 0x0f``: errors, info, verbose and debug, so it logs the ports it unlinks and the links it makes
again) runs on an ibsim fat tree and writes its log with ``-f``. ``Unlink "leaf01"[3]`` makes the leaf send trap
128 (link state change) and OpenSM sweep; it logs ``Unlinking local node ... port 3 / and remote node ... port 1``.
``ReLink`` does the same the other way (``Creating new link between: ...``). The log is read in pieces as the
collector does (:func:`~fabric_engine.health.opensm_log.tail`), and the evidence fed to a
:class:`~fabric_engine.health.downs.DownTracker` gives one down of both ends of that cable, timed by the traps.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from fabric_engine.health.downs import EXACT, DownTracker
from fabric_engine.health.opensm_log import feed, tail
from fabric_engine.topology.generate import fat_tree

pytestmark = pytest.mark.realtools

LEAF, SPINE = 0x98039B0300000001, 0x98039B0300000003  # leaf01 port 3 <-> spine01 port 1 in fat_tree(4, 4)


def _wait_for(path, text: str, after: int, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if path.exists() and text in path.read_text(errors="replace")[after:]:
            return
        assert time.monotonic() < deadline, f"OpenSM did not log {text!r}"
        time.sleep(0.2)


def test_a_cut_cable_is_one_down_of_both_ends_in_opensms_log(ibsim):
    f = fat_tree(hosts=4, radix=4, speed="HDR")
    assert (f.node_name[f.a_node[4]], int(f.a_port[4]), f.node_name[f.b_node[4]], int(f.b_port[4])) == \
        ("leaf01", 3, "spine01", 1)
    sim = ibsim(f, sim_host="gpu0001")
    cache = sim.workdir / "opensm"
    cache.mkdir(parents=True, exist_ok=True)
    log = cache / "opensm.log"
    sim.start_opensm(["-D", "0x0f", "-s", "2"], cache_dir=cache)
    _wait_for(log, "SUBNET UP", 0)
    tracker = DownTracker()
    t0 = time.time()
    ev, state = tail(log)  # the first sweep makes every cable's link: both ends of all 8 up
    assert len(ev) == 16 and (ev.up == 1).all() and {(LEAF, 3), (SPINE, 1)} <= set(zip(ev.guid.tolist(),
                                                                                       ev.port.tolist(), strict=True))
    assert feed(tracker, ev) == 16

    size = log.stat().st_size
    sim.console('Unlink "leaf01"[3]')
    _wait_for(log, "Unlinking local node", size)
    time.sleep(1.0)  # the rest of that sweep
    ev, state = tail(log, state)
    down = ev.up == 0
    assert sorted(zip(ev.guid[down].tolist(), ev.port[down].tolist(), strict=True)) == [(LEAF, 3), (SPINE, 1)]
    assert ev.exact[down].all() and len(ev.trap_t) >= 1  # timed by leaf01's trap 128
    assert set(ev.trap_guid.tolist()) == {LEAF}
    assert feed(tracker, ev) == 2

    size = log.stat().st_size
    sim.console('ReLink "leaf01"[3]')
    _wait_for(log, "Creating new link", size)
    time.sleep(1.0)
    ev, state = tail(log, state)
    back = ev.up == 1
    relinked = set(zip(ev.guid[back].tolist(), ev.port[back].tolist(), strict=True))
    assert {(LEAF, 3), (SPINE, 1)} <= relinked
    feed(tracker, ev)
    t1 = time.time()
    e = tracker.episodes()
    mine = np.flatnonzero((e["guid"] == LEAF) & (e["port"] == 3))
    assert mine.size == 1 and not e["open"][mine[0]]
    assert e["evidence"][mine[0]] & EXACT
    assert 0 < e["duration_lo"][mine[0]] <= e["duration_hi"][mine[0]] <= t1 - t0 + 1.0  # log: microseconds
    # nothing read twice: the next piece is empty
    again, _ = tail(log, state)
    assert not (again.up == 0).any()


@pytest.mark.django_db(transaction=True)
def test_the_collectors_sweep_keeps_the_downs_a_real_opensm_logged(ibsim):
    from django.core.cache import cache

    from ibweb.fabrics.choices import FabricMode
    from ibweb.fabrics.models import Fabric
    from ibweb.runtime import health_readings
    from ibweb.telemetry.models import CollectorConfig
    from ibweb.telemetry.sweeps import run_sweep

    cache.clear()
    sim = ibsim(fat_tree(hosts=4, radix=4, speed="HDR"), sim_host="gpu0001", tools=("perfquery", "iblinkinfo"))
    cache_dir = sim.workdir / "opensm"
    cache_dir.mkdir(parents=True, exist_ok=True)
    log = cache_dir / "opensm.log"
    sim.start_opensm(["-V", "-s", "2"], cache_dir=cache_dir)  # -V: verbose, the ports it unlinks logged
    _wait_for(log, "SUBNET UP", 0)
    env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    fabric = Fabric.objects.create(name="ibsim", slug="ibsim", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=fabric, environment=env, timeout_s=20.0, stale_after_s=600.0,
                                            opensm_log_path=str(log))
    run_sweep(config)
    size = log.stat().st_size
    sim.console('Unlink "leaf01"[3]')
    _wait_for(log, "Unlinking local node", size)
    run_sweep(config)
    _, ev = health_readings.log_downs(fabric.pk)
    down = {(g, p) for g, p, u in zip(ev["guid"].tolist(), ev["port"].tolist(), ev["up"].tolist(), strict=True)
            if u == 0}
    assert down == {(LEAF, 3), (SPINE, 1)} and ev["exact"][ev["up"] == 0].all()
    tracker = DownTracker()
    assert health_readings.LogDowns().feed(fabric.pk, tracker) == int(ev["t"].size)
    assert tracker.status()["down"].sum() == 2
    health_readings.forget(fabric.pk)
