"""The emulator with link health faults: readings each tick, a flapping cable down in the flow model."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.errors import FabricEngineError
from fabric_engine.scenario import build_emulator

GB = 1e9
SPEC = {"topology": {"generator": "fat_tree", "hosts": 8, "radix": 4, "speed": "NDR"}, "routing": "minhop",
        "jobs": [{"name": "pair", "tenant": "t", "hosts": 2, "placement": "packed", "pattern": "ring_allreduce",
                  "buffer_gb": 400, "compute_s": 0.0}],
        "tick_s": 1.0, "seed": 1}
FLAP = {"kind": "flapping", "link": "leaf01 1", "period_s": 20, "down_s": 3, "start_s": 5}


def test_without_a_health_key_there_are_no_readings():
    emu = build_emulator(SPEC)
    emu.step(now=0.0)
    assert emu.health is None and emu.health_readings is None


def test_each_tick_reads_every_cable_end():
    emu = build_emulator({**SPEC, "health": []})
    emu.step(now=100.0)
    first = emu.health_readings
    emu.step(now=101.0)
    assert len(first) == 2 * emu.fabric.num_links and (first["t"] == 100.0).all()
    assert (emu.health_readings["t"] == 101.0).all() and (emu.health_readings["window_s"] > first["window_s"]).all()


def test_a_flapping_cable_is_down_in_the_flow_model_during_its_down_window():
    emu = build_emulator({**SPEC, "health": [FLAP]})
    f = emu.fabric
    c = int(f.out_link(f.node("leaf01"), 1)) % f.num_links  # the cable of a host of the job
    assert {int(f.a_node[c]), int(f.b_node[c])} & set(emu.jobs[0].hosts.tolist())
    rows = []
    for t in range(30):
        s = emu.step(now=float(t))
        rows.append((t, float(s.rate_gbps[c] + s.rate_gbps[c + f.num_links]), s.job("pair").comm_s,
                     int(emu.health_readings["up"][c])))
    down = [t for t, rate, _, up in rows if up == 0]
    assert down == [5, 6, 7, 25, 26, 27]
    for t, rate, comm_s, up in rows:
        if up == 0:  # nothing crosses the down cable: the job's collective stalls
            assert rate == 0.0 and comm_s == np.inf, t
        elif t > 0:
            assert rate > 0 and np.isfinite(comm_s), t
    assert all(np.isfinite(r[2]) for r in rows[8:25])  # back once the cable is up


def test_the_spec_is_checked_before_routing():
    with pytest.raises(FabricEngineError, match=r"^health\[0\]\.link: no node 'nosuch'"):
        build_emulator({**SPEC, "health": [{**FLAP, "link": "nosuch 1"}]})
    with pytest.raises(FabricEngineError, match=r"^health: expected a list"):
        build_emulator({**SPEC, "health": {"kind": "flapping"}})
