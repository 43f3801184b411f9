"""The foundation slice on the demo fabric: generator shape, min-hop LFTs, solver, emulator."""

import numpy as np
import pytest
import scipy.sparse as sp

from fabric_engine.flows import max_min_fair
from fabric_engine.routing import NO_PATH, route
from fabric_engine.routing.minhop import switch_distances
from fabric_engine.scenario import DEMO_SPEC, build_emulator, build_fabric
from fabric_engine.topology import KIND_SWITCH, ROLES


@pytest.fixture(scope="module")
def demo():
    return build_fabric(DEMO_SPEC["topology"])


@pytest.fixture(scope="module")
def demo_routing(demo):
    return route(demo, "minhop")


def test_demo_shape(demo):
    gpu = demo.hosts[demo.role[demo.hosts] == ROLES.index("gpu")]
    storage = demo.hosts[demo.role[demo.hosts] == ROLES.index("storage")]
    assert (len(gpu), len(storage), demo.num_switches) == (512, 8, 49)
    # 512 GPU cables + 16 storage ports + 17 leaves x 32 spines
    assert demo.num_links == 512 + 8 * 2 + 17 * 32
    leaves = np.flatnonzero(demo.tier == 1)
    spines = np.flatnonzero(demo.tier == 2)
    assert len(leaves) == 17 and len(spines) == 32
    assert np.all(demo.capacity_gbps == 400.0)
    # each GPU leaf: 32 hosts; the storage leaf: the 8 servers' 16 ports; every leaf one cable to each spine
    assert np.all(np.bincount(demo.host_leaf[gpu], minlength=demo.num_nodes)[leaves[:16]] == 32)
    assert np.all(demo.nports[storage] == 2) and set(demo.node_name[demo.host_leaf[storage]]) == {"sleaf01"}
    sw_sw = (demo.kind[demo.a_node] == KIND_SWITCH) & (demo.kind[demo.b_node] == KIND_SWITCH)
    pairs = set(zip(demo.a_node[sw_sw].tolist(), demo.b_node[sw_sw].tolist(), strict=True))
    assert pairs == {(int(a), int(b)) for a in leaves for b in spines}


def test_every_lid_reachable_from_every_switch_on_a_shortest_path(demo, demo_routing):
    f, lft = demo, demo_routing.lft
    dist = switch_distances(f)
    si = f.switch_index
    for lid in range(1, f.max_lid + 1):
        node = f.lid_to_node[lid]
        target = si[node] if f.kind[node] == KIND_SWITCH else si[f.host_leaf[node]]
        ports = lft[:, lid]
        assert not np.any(ports == NO_PATH), f"LID {lid} unreachable"
        here = np.flatnonzero(np.arange(f.num_switches) != target)
        peers = f.dl_dst[f.port_out_link[f.port_offset[f.switches[here]] + ports[here].astype(np.int64) - 1]]
        assert np.all(dist[si[peers], target] == dist[here, target] - 1), f"LID {lid}: a hop is not minimal"


def test_all_pairs_paths_are_minimal_and_spread(demo, demo_routing):
    h = demo.hosts[demo.role[demo.hosts] == ROLES.index("gpu")]
    src, dst = np.repeat(h, len(h)), np.tile(h, len(h))
    keep = src != dst
    m, broken = demo_routing.paths(src[keep], dst[keep], return_broken=True)
    assert not broken.any()
    same_leaf = demo.host_leaf[src[keep]] == demo.host_leaf[dst[keep]]
    hops = np.diff(m.indptr)
    assert np.all(hops[same_leaf] == 2) and np.all(hops[~same_leaf] == 4)
    # min-hop spreads destinations: every GPU leaf up-port carries the same number of destination LIDs
    gpu_leaf = np.isin(demo.dl_src, demo.host_leaf[h])
    up = gpu_leaf & (demo.tier[demo.dl_src] == 1) & (demo.tier[demo.dl_dst] == 2)
    load = np.asarray(m[~same_leaf].sum(axis=0)).ravel()[up]
    assert load.max() == load.min()


def test_trace_follows_the_lfts(demo, demo_routing):
    hops = demo_routing.trace("gpu0001", "gpu0500")
    names = [h["name"] for h in hops]
    assert names[0] == "gpu0001" and names[1] == "leaf01" and names[2].startswith("spine") and names[-1] == "gpu0500"


def reference_max_min(paths: list[set[int]], capacity: list[float]) -> list[float]:
    """Plain progressive filling: raise all unfrozen flows equally, freeze on saturated links."""
    rate = [0.0] * len(paths)
    frozen = [False] * len(paths)
    free = list(capacity)
    while not all(frozen):
        counts = [sum(1 for i, p in enumerate(paths) if not frozen[i] and e in p) for e in range(len(free))]
        step = min(free[e] / counts[e] for e in range(len(free)) if counts[e])
        for i in range(len(paths)):
            if not frozen[i]:
                rate[i] += step
        for e in range(len(free)):
            free[e] -= step * counts[e]
        for e in range(len(free)):
            if counts[e] and free[e] <= 1e-9:
                for i, p in enumerate(paths):
                    if e in p:
                        frozen[i] = True
    return rate


@pytest.mark.parametrize("seed", range(25))
def test_solver_matches_reference_and_is_feasible(seed):
    rng = np.random.default_rng(seed)
    n_flows, n_links = int(rng.integers(1, 12)), int(rng.integers(1, 8))
    paths = [set(rng.choice(n_links, size=int(rng.integers(1, n_links + 1)), replace=False).tolist())
             for _ in range(n_flows)]
    cap = rng.uniform(1, 100, size=n_links).round(1)
    rows = [i for i, p in enumerate(paths) for _ in p]
    cols = [e for p in paths for e in p]
    inc = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_flows, n_links))
    got = max_min_fair(inc, cap)
    assert np.allclose(got, reference_max_min(paths, cap.tolist()), rtol=1e-9, atol=1e-9)
    assert np.all(inc.T @ got <= cap * (1 + 1e-9))


def test_solver_respects_demands():
    inc = sp.csr_matrix(np.array([[1, 0], [1, 1], [0, 1]]))
    rate = max_min_fair(inc, np.array([10.0, 10.0]), demand=np.array([1.0, np.inf, 2.0]))
    assert rate.tolist() == [1.0, 8.0, 2.0]


def test_emulator_breathes_and_stays_feasible():
    emu = build_emulator(DEMO_SPEC)
    states = [emu.step(now=1000.0 + i) for i in range(12)]
    assert [s.seq for s in states] == list(range(1, 13))
    for s in states:
        assert s.rate_gbps.shape == (2 * emu.fabric.num_links,)
        assert np.all(s.rate_gbps <= emu.capacity * (1 + 1e-6))
    totals = np.array([s.throughput_gbps for s in states])
    assert totals.max() > 1.5 * totals.min() > 0, "load should change as jobs iterate"
    assert {j.tenant for j in states[0].jobs} == {"acme", "globex", "initech"} and len(states[0].jobs) == 8
