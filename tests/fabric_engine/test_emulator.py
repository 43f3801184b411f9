"""The emulator's time model, congestion estimates, QoS, job start/stop, and the feed frame."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fabric_engine.emulator import Background, Emulator
from fabric_engine.errors import FabricEngineError
from fabric_engine.policy import Policy
from fabric_engine.routing import Routing, route
from fabric_engine.scenario import DEMO_SPEC, build_emulator
from fabric_engine.topology.generate import fat_tree
from fabric_engine.workload import Job

GB = 1e9
#: The frame header's sections (its per-link arrays are encoded apart: tests/ibweb/live/feed/test_feed_encodings.py).
HEADER_KEYS = {"v", "type", "seq", "t", "tick_s", "totals", "jobs", "alerts", "hotspots", "sharp", "storage", "twin",
               "congestion_tree"}


@pytest.fixture(scope="module")
def tiny():
    """4 leaves x 2 hosts, 2 spines, NDR (400 Gb/s)."""
    return fat_tree(hosts=8, radix=4)


@pytest.fixture(scope="module")
def thin():
    """2 leaves x 3 hosts and one spine: a 3:1 oversubscribed tree, one uplink per leaf."""
    return fat_tree(hosts=6, radix=4, oversubscription=3)


def uplink(f, host):
    return int(f.port_out_link[f.port_offset[host]])


def test_alone_job_time_and_breathing(tiny):
    h = tiny.hosts[:2]  # same leaf
    job = Job("j", "t", h, buffer_bytes=GB, compute_s=0.18)
    emu = Emulator(route(tiny), [job], tick_s=0.05)
    states = [emu.step(now=i * 0.05) for i in range(40)]
    # Ring of 2: each rank sends 2 (n - 1) / n S = 1 GB = 8 Gb at 400 Gb/s: 20 ms.
    assert states[-1].job("j").comm_alone_s == pytest.approx(0.02)
    assert all(s.job("j").slowdown == pytest.approx(1.0) for s in states)
    # 2 s of 0.2 s iterations: 10 collectives, 80 Gb through the host's uplink.
    assert states[-1].job("j").iterations == 10
    carried = sum(float(s.rate_gbps[uplink(tiny, h[0])]) * 0.05 for s in states)
    assert carried == pytest.approx(80.0, rel=1e-4)
    # The fabric breathes: ticks without traffic and ticks with.
    active = [s.job("j").active for s in states]
    assert any(active) and not all(active)
    busy = next(s for s in states if s.job("j").active)
    assert busy.job("j").achieved_gbps == pytest.approx(800.0)  # two flows at line rate
    assert busy.job("j").demand_gbps == pytest.approx(800.0)


def test_contention_slowdown_limiting_link_and_congestion(thin):
    h = thin.hosts
    a = Job("a", "x", [h[0], h[3]], buffer_bytes=GB, compute_s=0.001)
    b = Job("b", "y", [h[1], h[4]], buffer_bytes=GB, compute_s=0.001)
    emu = Emulator(route(thin), [a, b], tick_s=0.1)
    s = emu.step(now=0.0)
    up = uplink(thin, h[0])
    leaf_up = int(np.flatnonzero((thin.dl_src == thin.dl_dst[up]) & (thin.tier[thin.dl_dst] == 2))[0])
    for name in ("a", "b"):
        js = s.job(name)
        assert js.slowdown == pytest.approx(2.0)
        assert js.comm_alone_s == pytest.approx(0.02) and js.comm_s == pytest.approx(0.04)
        assert js.achieved_gbps == pytest.approx(400.0)
        assert leaf_up in js.limiting_links or thin.reverse(leaf_up) in js.limiting_links
    # Both: compute 1 ms, collective 40 ms, compute 1 ms, collective 40 ms, compute 1 ms, 17 ms of a third.
    frac = 0.097 / 0.1
    assert s.congestion[leaf_up] == pytest.approx(2.0 * frac, rel=1e-3)
    assert s.util[leaf_up] == pytest.approx(frac, rel=1e-3)
    assert s.ecn[leaf_up] == pytest.approx(1 - 0.9 / (2 * frac), rel=1e-3)
    # Half the offered load waits, on the shared uplink and (backpressure) at the senders' HCAs:
    # 0.5 x 0.1 s in ticks of one NDR symbol time (8 bits / 100 Gb/s per lane = 0.08 ns).
    assert s.xmit_wait[leaf_up] == pytest.approx(0.5 * 0.1e9 / 0.08, rel=1e-4)
    assert s.xmit_wait[up] == pytest.approx(0.5 * 0.1e9 / 0.08, rel=1e-4)
    assert s.xmit_wait[uplink(thin, h[2])] == 0
    assert (s.offered_gbps >= s.rate_gbps - 1e-3).all()
    top = s.hotspots[0]
    assert top["congestion"] == pytest.approx(2.0 * frac, rel=1e-3)
    assert {j["id"] for j in top["jobs"]} == {"a", "b"}
    ranks = [h["congestion"] for h in s.hotspots]
    assert ranks == sorted(ranks, reverse=True)


def test_vl_arbitration_weights_share_the_bottleneck(thin):
    h = thin.hosts
    a = Job("a", "x", [h[0], h[3]], buffer_bytes=GB, compute_s=0.001, sl=1)
    b = Job("b", "y", [h[1], h[4]], buffer_bytes=GB, compute_s=0.001, sl=0)
    qos = {"sl2vl": list(range(15)) + [15], "vlarb_high": [], "vlarb_low": [[0, 1], [1, 3]]}
    emu = Emulator(route(thin), [a, b], tick_s=0.1, policy=Policy.from_dict(thin, {"qos": qos}))
    s = emu.step(now=0.0)
    # Weights 3:1 on the shared uplink: 300 and 100 Gb/s instead of 400.
    assert s.job("a").slowdown == pytest.approx(4 / 3)
    assert s.job("b").slowdown == pytest.approx(4.0)


def test_strict_priority_starves_the_low_class(thin):
    h = thin.hosts
    a = Job("a", "x", [h[0], h[3]], buffer_bytes=GB, compute_s=0.001, sl=1)
    b = Job("b", "y", [h[1], h[4]], buffer_bytes=GB, compute_s=0.001, sl=0)
    qos = {"sl2vl": list(range(15)) + [15], "vlarb_high": [[1, 4]], "vlarb_low": [[0, 4]]}
    emu = Emulator(route(thin), [a, b], tick_s=0.1, policy=Policy.from_dict(thin, {"qos": qos}))
    s = emu.step(now=0.0)
    assert s.job("a").slowdown == pytest.approx(1.0)
    assert s.job("b").slowdown == np.inf and s.job("b").as_dict()["slowdown"] is None


def test_run_window_start_stop_repeat(tiny):
    job = Job("w", "t", tiny.hosts[:2], buffer_bytes=GB, compute_s=0.1, start_s=1.0, stop_s=2.0, repeat_s=3.0)
    emu = Emulator(route(tiny), [job], tick_s=0.5)
    phases = [emu.step(now=0).job("w").phase for _ in range(10)]
    assert phases[:2] == ["waiting", "waiting"]
    assert phases[2] in ("compute", "comm") and phases[3] in ("compute", "comm")
    assert phases[4:8] == ["stopped"] * 4
    assert phases[8] in ("compute", "comm")


def test_start_and_stop_jobs_keep_the_others_state(tiny):
    emu = Emulator(route(tiny), [Job("a", "t", tiny.hosts[:2], buffer_bytes=GB, compute_s=0.1)], tick_s=0.5)
    for _ in range(4):
        emu.step(now=0)
    before = emu.step(now=0).job("a").iterations
    emu.start_job(Job("b", "u", tiny.hosts[2:6], buffer_bytes=GB, compute_s=0.1))
    s = emu.step(now=0)
    assert s.job("a").iterations > before and {j.name for j in s.jobs} == {"a", "b"}
    emu.stop_job("b")
    assert [j.name for j in emu.step(now=0).jobs] == ["a"]
    with pytest.raises(FabricEngineError, match="no job"):
        emu.stop_job("b")
    with pytest.raises(FabricEngineError, match="unique"):
        emu.start_job(Job("a", "t", tiny.hosts[2:4]))


def test_unrouted_flows_stall_the_job_and_raise_an_alert(tiny):
    cable = int(np.flatnonzero((tiny.a_node == tiny.hosts[0]) | (tiny.b_node == tiny.hosts[0]))[0])
    broken = tiny.without_links([cable])
    emu = Emulator(route(broken), [Job("j", "t", tiny.hosts[:3], buffer_bytes=GB, compute_s=0.01)], tick_s=0.1)
    s = emu.step(now=0)
    assert {"kind": "no_route", "job": "j", "flows": 2} in s.alerts
    assert s.job("j").slowdown == np.inf and emu.step(now=0).job("j").iterations == 0


def test_background_only(tiny):
    emu = Emulator(route(tiny), [], Background(fraction=0.5, gbps=10.0), tick_s=1.0, seed=3)
    s = emu.step(now=0)
    # 4 senders x 10 Gb/s, all delivered to hosts.
    assert s.throughput_gbps == pytest.approx(40.0)
    assert s.hotspots and s.hotspots[0]["jobs"][0]["id"] == "background"


def test_demo_state_fills_every_frame_section():
    emu = build_emulator(DEMO_SPEC)
    f = emu.fabric
    totals = {"hosts": f.num_hosts, "switches": f.num_switches, "links": f.num_links}
    states = [emu.step() for _ in range(8)]
    frames = [s.frame_header(totals) for s in states]
    fr = frames[-1]
    assert set(fr) == HEADER_KEYS
    assert fr["v"] == 1 and fr["type"] == "frame" and fr["seq"] == 8
    arrays = {"rate": states[-1].rate_gbps, **states[-1].link_arrays()}
    assert set(arrays) == {"rate", "util", "offered", "xmit_wait", "ecn"}
    for key, values in arrays.items():
        assert values.shape == (2 * f.num_links,) and np.isfinite(values).all(), key
    assert arrays["offered"] is states[-1].offered_gbps and (arrays["offered"] >= arrays["rate"] - 1e-3).all()
    json.dumps(fr, allow_nan=False)
    assert {"hosts", "switches", "links", "throughput_gbps", "hottest", "congested_links"} <= set(fr["totals"])
    assert len(fr["jobs"]) == 8 and len({j["tenant"] for j in fr["jobs"]}) == 3
    patterns = {j["pattern"] for j in fr["jobs"]}
    assert {"ring_allreduce", "all_to_all", "tree_allreduce", "pipeline", "hierarchical_allreduce"} <= patterns
    assert any(j["active"] for fr in frames for j in fr["jobs"])
    assert any(j["slowdown"] and j["slowdown"] > 1.0 for fr in frames for j in fr["jobs"])


def test_scenario_errors_name_the_field():
    with pytest.raises(FabricEngineError, match="background"):
        build_emulator({**DEMO_SPEC, "background": {"fraction": 0.2, "bogus": 1}})
    with pytest.raises(FabricEngineError, match=r"jobs\[0\]"):
        build_emulator({**DEMO_SPEC, "jobs": [{"name": "x", "tenant": "t", "hosts": 4, "pattern": "nope"}]})
    if not hasattr(Routing, "adaptive_paths"):
        with pytest.raises(FabricEngineError, match="adaptive"):
            build_emulator({**DEMO_SPEC, "adaptive": True})



def test_the_emulator_counts_traffic_between_switches_apart_from_what_hosts_receive(thin):
    h = thin.hosts
    emu = Emulator(route(thin), [Job("a", "x", [h[0], h[3]], buffer_bytes=GB, compute_s=0.001)], tick_s=0.1)
    s = emu.step(now=0.0)
    core = (thin.kind[thin.dl_src] == 1) & (thin.kind[thin.dl_dst] == 1)
    into_hosts = thin.kind[thin.dl_dst] == 0
    assert s.switch_gbps == pytest.approx(float(s.rate_gbps[core].sum()), rel=1e-5) and s.switch_gbps > 0
    assert s.throughput_gbps == pytest.approx(float(s.rate_gbps[into_hosts].sum()), rel=1e-5)
    assert s.frame_header({})["totals"]["switch_gbps"] == pytest.approx(s.switch_gbps, abs=1e-3)
