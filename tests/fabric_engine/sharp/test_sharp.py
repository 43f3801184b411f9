"""SHARP: reduction trees, the aggregation manager's limits and fallback, and the flows of a SHARP all-reduce."""

import numpy as np
import pytest

from fabric_engine.emulator import Emulator
from fabric_engine.errors import FabricEngineError
from fabric_engine.routing import route
from fabric_engine.scenario import DEMO_SPEC, build_emulator
from fabric_engine.sharp import (
    AggregationManager,
    SharpConfig,
    aggregated_bytes,
    generation_for,
    link_bytes,
    sharp_allreduce,
    sharp_job_params,
)
from fabric_engine.topology.generate import fat_tree
from fabric_engine.workload import Job, expand_jobs

S = 1e9


@pytest.fixture(scope="module")
def small():
    """4 leaves x 2 hosts, 2 spines, NDR (400 Gb/s); one cable from every leaf to each spine."""
    f = fat_tree(hosts=8, radix=4)
    return f, route(f)


def _tree(routing, hosts, generation="quantum2"):
    am = AggregationManager(routing, SharpConfig(generation))
    return am, am.allocate("j", "t", hosts).tree


def test_sharp_flows_move_hand_computed_bytes(small):
    f, r = small
    hosts = f.hosts[:4]  # leaves 1 and 2
    _, tree = _tree(r, hosts)
    job = Job("j", "t", hosts, pattern="sharp_allreduce", buffer_bytes=S, params=sharp_job_params({}, tree))
    pf = sharp_allreduce(job, f)
    # 4 host links + 2 leaf->spine edges, each up and down, S bytes each.
    assert len(pf.nbytes) == 12 and np.all(pf.nbytes == S)
    per_link = np.asarray(pf.incidence.multiply(pf.nbytes[:, None]).sum(axis=0)).ravel()
    assert sorted(per_link[per_link > 0].tolist()) == [S] * 12
    assert link_bytes(pf.nbytes, pf.incidence) == 12 * S
    assert aggregated_bytes(tree, S) == 6 * S
    # Only the root spine carries SHARP traffic among the spines.
    spine_links = np.flatnonzero((f.tier[f.dl_src] == 2) | (f.tier[f.dl_dst] == 2))
    used = spine_links[per_link[spine_links] > 0]
    assert {int(f.dl_src[d]) for d in used} | {int(f.dl_dst[d]) for d in used} >= {tree.root}
    assert len(used) == 4
    # The ring on the same hosts: rank i -> i+1 moves 1.5 S over 2 hops (same leaf) or 4 (across): 18 S on the wire.
    ring = expand_jobs([Job("r", "t", hosts, buffer_bytes=S)], f, r.paths)
    assert link_bytes(ring.flows.nbytes, ring.incidence) == pytest.approx(18 * S)
    # Every SHARP flow is capped at 95% of the slowest tree link.
    assert np.all(pf.demand_gbps == pytest.approx(0.95 * 400.0))


def test_emulator_sharp_time_bytes_and_savings(small):
    f, r = small
    am = AggregationManager(r, SharpConfig("quantum2"))
    job = Job("j", "t", f.hosts[:4], buffer_bytes=S, compute_s=0.0, sharp=True)
    emu = Emulator(r, [job], tick_s=1.0, sharp=am)
    s = emu.step(now=0)
    fr = s.frame_header({})
    j = fr["sharp"]["jobs"][0]
    assert fr["jobs"][0]["sharp"] is True and fr["jobs"][0]["pattern"] == "ring_allreduce"
    assert j["on"] and j["tree"]["root_name"] == "spine01"
    # S at 0.95 x 400 Gb/s; the ring: 1.5 S over 400 Gb/s links, one flow per link.
    assert emu.sharp.sharp_s[0] == pytest.approx(8.0 / 380.0, rel=1e-9)
    assert emu.sharp.ring_s[0] == pytest.approx(12.0 / 400.0, rel=1e-9)
    assert (j["allreduce_s_sharp"], j["allreduce_s_without"]) == (round(8.0 / 380.0, 4), 0.03)
    collectives = 1.0 / (8.0 / 380.0)  # communicating the whole tick
    assert j["bytes_aggregated"] == pytest.approx(6 * S * collectives, rel=1e-6)
    assert j["bytes_kept_off_wire"] == pytest.approx((18 - 12) * S * collectives, rel=1e-6)
    assert fr["sharp"]["kept_off_wire_gbps"] == pytest.approx(6 * S * 8e-9 * collectives, rel=1e-6)
    # Links: host links carry 380 Gb/s each way, the two leaf->spine01 edges too, spine02 nothing.
    rate = s.rate_gbps
    host_up = f.port_out_link[f.port_offset[f.hosts[:4]]]
    assert np.allclose(rate[host_up], 380.0) and np.allclose(rate[f.reverse(host_up)], 380.0)
    spine2 = f.node("spine02")
    assert rate[(f.dl_src == spine2) | (f.dl_dst == spine2)].sum() == 0


def test_tree_is_valid_on_a_three_level_fat_tree():
    f = fat_tree(hosts=16, radix=4, levels=3)
    r = route(f, "minhop")
    hosts = f.hosts[[0, 3, 6, 9, 12, 15]]  # several pods
    am, tree = _tree(r, hosts)
    leaves = set(f.host_leaf[hosts].tolist())
    tree_leaves = {int(s) for s in tree.switches if f.tier[s] == 1}
    assert tree_leaves == leaves, "covers exactly the job's leaves"
    assert f.tier[tree.root] == 3
    assert np.all(f.tier[tree.parent] == f.tier[tree.child] + 1), "every edge goes up"
    assert np.all(f.dl_src[tree.up_links] == tree.child) and np.all(f.dl_dst[tree.up_links] == tree.parent)
    # A tree: one parent per non-root switch, every switch reaches the root.
    assert len(np.unique(tree.child)) == len(tree.child) == len(tree.switches) - 1
    parent = dict(zip(tree.child.tolist(), tree.parent.tolist(), strict=True))
    for s in tree.switches:
        node, hops = int(s), 0
        while node != tree.root:
            node, hops = parent[node], hops + 1
            assert hops < 10
    # The routing's up-ports: each edge is the LFT's port toward the root's LID.
    lid = f.lid[tree.root]
    ports = r.lft[f.switch_index[tree.child], lid]
    assert np.all(f.port_out_link[f.port_offset[tree.child] + ports.astype(np.int64) - 1] == tree.up_links)
    # Within one pod the root is a spine of that pod.
    _, pod_tree = _tree(r, f.hosts[[0, 2]])
    assert f.tier[pod_tree.root] == 2
    # On one leaf the tree is that leaf alone.
    _, leaf_tree = _tree(r, f.hosts[[0, 1]])
    assert leaf_tree.root == f.host_leaf[f.hosts[0]] and len(leaf_tree.up_links) == 0


def test_limits_per_switch_port_and_subnet(small):
    f, r = small
    h = f.hosts
    # Quantum HDR: one active streaming tree per switch.
    am = AggregationManager(r, SharpConfig("quantum"))
    assert am.allocate("a", "t", h[:4]).tree is not None
    refused = am.allocate("b", "t", h[[1, 4]])
    assert refused.tree is None and "leaf01" in refused.reason and "1 per switch" in refused.reason
    assert am.events[-1]["kind"] == "fallback" and am.events[-1]["job"] == "b"
    assert am.switch_trees.max() <= 1
    am.release("a")
    assert am.allocate("b", "t", h[[1, 4]]).tree is not None and am.switch_trees.sum() == 3
    # Quantum-2: one tree per port, two per switch (NCCL plugin): a second job on the same leaves takes the other spine.
    am = AggregationManager(r, SharpConfig("quantum2"))
    a = am.allocate("a", "t", h[[0, 2]]).tree
    b = am.allocate("b", "t", h[[1, 3]]).tree
    assert a.root != b.root and am.port_trees.max() == 1
    c = am.allocate("c", "t", h[[0, 3]])
    assert c.tree is None and "2 per switch" in c.reason
    # Per-port limit alone: with four flows per switch, the third job on those leaves still finds no free up-port.
    am = AggregationManager(r, SharpConfig("quantum2", flows_per_switch=4))
    am.allocate("a", "t", h[[0, 2]])
    am.allocate("b", "t", h[[1, 3]])
    assert "already carries 1 active tree" in am.allocate("c", "t", h[[0, 3]]).reason
    # Subnet-wide tree count.
    am = AggregationManager(r, SharpConfig("quantum2", sat_trees=1))
    am.allocate("a", "t", h[:2])
    assert "all 1 streaming trees" in am.allocate("b", "t", h[4:6]).reason


def test_fallback_in_the_emulator_runs_the_ring_and_says_so(small):
    f, r = small
    am = AggregationManager(r, SharpConfig("quantum", allowed_tenants={"acme"}))
    jobs = [Job("a", "acme", f.hosts[:4], buffer_bytes=S, compute_s=0.0, sharp=True),
            Job("b", "acme", f.hosts[4:8], buffer_bytes=S, compute_s=0.0, sharp=True),
            Job("c", "other", f.hosts[4:6], buffer_bytes=S, compute_s=0.0, sharp=True, start_s=2.0)]
    emu = Emulator(r, jobs[:2], tick_s=1.0, sharp=am)
    fr = emu.step(now=0).frame_header({})
    on = {j["id"]: j["on"] for j in fr["sharp"]["jobs"]}
    assert on == {"a": True, "b": True} and fr["sharp"]["trees_in_use"] == 2
    # A third job whose tenant is not allowed: falls back, an alert and an event say why.
    emu.start_job(jobs[2])
    for t in range(1, 4):
        fr = emu.step(now=t).frame_header({})
    c = next(j for j in fr["sharp"]["jobs"] if j["id"] == "c")
    assert not c["on"] and "not allowed" in c["reason"]
    assert {"kind": "sharp_fallback", "job": "c", "reason": c["reason"]} in fr["alerts"]
    assert any(e["kind"] == "fallback" and e["job"] == "c" for e in fr["sharp"]["events"])
    state = next(j for j in fr["jobs"] if j["id"] == "c")
    # Its own ring of two ranks: each sends 2 (n - 1) / n S = S at 400 Gb/s.
    assert state["sharp"] is False and state["comm_alone_s"] == pytest.approx(8.0 / 400.0, rel=1e-3)


def test_trees_are_released_when_jobs_stop_and_taken_when_they_start(small):
    f, r = small
    am = AggregationManager(r, SharpConfig("quantum"))
    first = Job("first", "t", f.hosts[:4], buffer_bytes=S, compute_s=0.1, sharp=True, stop_s=2.0)
    second = Job("second", "t", f.hosts[[1, 5]], buffer_bytes=S, compute_s=0.1, sharp=True, start_s=3.0)
    emu = Emulator(r, [first, second], tick_s=1.0, sharp=am)
    emu.step(now=0)
    assert set(am.trees) == {"first"}
    emu.step(now=1)
    emu.step(now=2)  # first's window closed
    assert am.trees == {} and am.switch_trees.sum() == 0
    fr = emu.step(now=3).frame_header({})  # second starts and gets leaf01, free again
    assert set(am.trees) == {"second"}
    assert [e["kind"] for e in fr["sharp"]["events"]] == ["allocated", "released", "allocated"]


def test_manager_and_pattern_errors(small):
    f, r = small
    job = Job("j", "t", f.hosts[:4], pattern="sharp_allreduce")
    with pytest.raises(FabricEngineError, match="needs a tree"):
        expand_jobs([job], f, r.paths)
    with pytest.raises(FabricEngineError, match="generation"):
        SharpConfig("quantum9")
    with pytest.raises(FabricEngineError, match="efficiency"):
        SharpConfig(efficiency=1.5)
    assert generation_for(f) == "quantum2" and generation_for(fat_tree(hosts=8, radix=4, speed="HDR")) == "quantum"
    assert generation_for(fat_tree(hosts=8, radix=4, speed="EDR")) is None
    with pytest.raises(FabricEngineError, match="sharp: unknown key"):
        build_emulator({**DEMO_SPEC, "sharp": {"bogus": 1}})


def test_demo_runs_sharp_with_a_tenant_fallback():
    emu = build_emulator(DEMO_SPEC)
    fr = emu.step(now=0).frame_header({})
    sharp = fr["sharp"]
    on = {j["id"]: j["on"] for j in sharp["jobs"]}
    assert on == {"llama-70b": True, "bert-ft": True, "rlhf-7b": True, "diffusion-xl": False}
    assert sharp["trees_in_use"] == 3 and all(s["trees"] <= s["limit"] for s in sharp["switches"])
    for j in sharp["jobs"]:
        if j["on"]:
            assert j["allreduce_s_sharp"] < j["allreduce_s_without"]
