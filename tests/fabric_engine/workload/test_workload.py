"""Jobs, communication patterns (hand-computed byte counts), placement and flow expansion."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from fabric_engine.errors import FabricEngineError
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree
from fabric_engine.workload import (
    KIND_BACKGROUND,
    KIND_SHARP,
    PATTERNS,
    Flows,
    Job,
    PatternFlows,
    btree_parents,
    expand_jobs,
    place_packed,
    place_scattered,
    register_pattern,
    rings_within,
    run_window,
)

GB = 1e9


@pytest.fixture(scope="module")
def small():
    # 8 leaves x 4 hosts, 4 spines.
    return fat_tree(hosts=32, radix=8)


def flows_of(fabric, hosts, pattern, buffer=GB, **params):
    fl, inc = Job("j", "t", hosts, pattern=pattern, buffer_bytes=buffer, params=params).expand(fabric)
    return fl, inc


def test_ring_bytes_and_pairs(small):
    h = small.hosts[:5]
    fl, inc = flows_of(small, h, "ring_allreduce")
    assert inc is None
    assert fl.src.tolist() == h.tolist() and fl.dst.tolist() == np.roll(h, -1).tolist()
    np.testing.assert_allclose(fl.nbytes, 2 * 4 / 5 * GB)
    assert np.isinf(fl.demand_gbps).all() and (fl.job == -1).all()


@pytest.mark.parametrize("n", [2, 3, 6, 7, 8, 13, 64])
def test_btree_is_a_binary_tree_rooted_at_zero(n):
    parent = btree_parents(n)
    assert parent[0] == -1 and ((parent[1:] >= 0) & (parent[1:] < n)).all()
    assert np.bincount(parent[1:], minlength=n).max() <= 2
    # Every rank reaches the root.
    node = np.arange(n)
    for _ in range(n):
        node = np.where(node > 0, parent[np.maximum(node, 0)], 0)
    assert (node == 0).all()


@pytest.mark.parametrize("n", [6, 7, 8])
def test_double_tree(small, n):
    h = small.hosts[:n]
    fl, _ = flows_of(small, h, "tree_allreduce", buffer=4 * GB)
    # Two trees of n - 1 edges, each edge both ways, half the buffer per edge and direction.
    assert len(fl) == 4 * (n - 1)
    np.testing.assert_allclose(fl.nbytes, 2 * GB)
    assert not (fl.src == fl.dst).any()
    # Every rank sends and receives the same amount over both trees.
    sent = np.bincount(fl.src, weights=fl.nbytes, minlength=small.num_nodes)[h]
    recv = np.bincount(fl.dst, weights=fl.nbytes, minlength=small.num_nodes)[h]
    np.testing.assert_allclose(sent, recv)
    if n % 2 == 0:
        # Mirrored second tree: a leaf of tree 1 (no children) is an inner node of tree 2.
        parent = btree_parents(n)
        leaves1 = set(range(n)) - set(parent[1:].tolist())
        inner2 = {n - 1 - int(p) for p in parent[1:]}
        assert leaves1 & inner2


def test_hierarchical_hand_computed(small):
    # Hosts 0..3 under leaf A, 4..7 under leaf B: job of ranks 0, 1, 4, 5 (2 groups of 2).
    h = small.hosts[[0, 1, 4, 5]]
    fl, _ = flows_of(small, h, "hierarchical_allreduce", buffer=8 * GB)
    pairs = {(int(s), int(d)): b for s, d, b in zip(fl.src, fl.dst, fl.nbytes, strict=True)}
    a0, a1, b0, b1 = (int(x) for x in h)
    # Intra-group ring of 2: 2 (m - 1) / m * S = S each way.
    assert pairs[(a0, a1)] == pairs[(a1, a0)] == pairs[(b0, b1)] == pairs[(b1, b0)] == 8 * GB
    # Inter-group ring of 2 over shards of S / 2: 2 (g - 1) / g * S / m = S / 2.
    assert pairs[(a0, b0)] == pairs[(b0, a0)] == pairs[(a1, b1)] == pairs[(b1, a1)] == 4 * GB
    assert len(fl) == 8


def test_hierarchical_single_leaf_is_a_ring(small):
    h = small.hosts[:4]
    fl, _ = flows_of(small, h, "hierarchical_allreduce", buffer=GB)
    np.testing.assert_allclose(fl.nbytes, 1.5 * GB)
    assert len(fl) == 4


def test_all_to_all(small):
    h = small.hosts[:6]
    fl, _ = flows_of(small, h, "all_to_all", buffer=6 * GB)
    assert len(fl) == 30 and not (fl.src == fl.dst).any()
    assert len({(int(s), int(d)) for s, d in zip(fl.src, fl.dst, strict=True)}) == 30
    np.testing.assert_allclose(fl.nbytes, GB)


def test_pipeline(small):
    h = small.hosts[:8]
    fl, _ = flows_of(small, h, "pipeline", buffer=GB, stages=4)
    # 3 stage boundaries x 2 ranks per stage x (forward + backward).
    assert len(fl) == 12
    fwd = {(int(s), int(d)) for s, d in zip(fl.src[:6], fl.dst[:6], strict=True)}
    assert fwd == {(int(h[i]), int(h[i + 2])) for i in range(6)}
    with pytest.raises(FabricEngineError, match="stages 9"):
        flows_of(small, h, "pipeline", stages=9)


def test_uniform_random_is_seeded_and_never_self(small):
    h = small.hosts[:16]
    a, _ = flows_of(small, h, "uniform_random", seed=3)
    b, _ = flows_of(small, h, "uniform_random", seed=3)
    c, _ = flows_of(small, h, "uniform_random", seed=4)
    assert (a.dst == b.dst).all() and not (a.dst == c.dst).all()
    assert not (a.src == a.dst).any() and np.isin(a.dst, h).all()


def test_rings_within():
    nxt, size = rings_within(np.array([2, 0, 2, 2, 0, 1]))
    assert nxt.tolist() == [2, 4, 3, 0, 1, 5] and size.tolist() == [3, 2, 3, 3, 2, 1]


@pytest.mark.parametrize("kwargs, message", [
    ({"pattern": "nope"}, "unknown pattern"),
    ({"hosts": [1]}, "at least two"),
    ({"hosts": [1, 1, 2]}, "appears twice"),
    ({"sl": 16}, "SL 16"),
    ({"start_s": 5, "stop_s": 5}, "not after"),
    ({"repeat_s": 10}, "repeat_s needs stop_s"),
    ({"buffer_bytes": 0, "compute_s": 0}, "compute time or bytes"),
])
def test_job_validation(kwargs, message):
    args = {"name": "bad", "tenant": "t", "hosts": [1, 2, 3], **kwargs}
    with pytest.raises(FabricEngineError, match=message):
        Job(**args)


def test_run_window():
    start = np.array([0.0, 5.0, 5.0])
    stop = np.array([np.nan, 10.0, 10.0])
    repeat = np.array([np.nan, np.nan, 20.0])
    assert run_window(start, stop, repeat, 0.0).tolist() == [True, False, False]
    assert run_window(start, stop, repeat, 7.0).tolist() == [True, True, True]
    assert run_window(start, stop, repeat, 12.0).tolist() == [True, False, False]
    assert run_window(start, stop, repeat, 26.0).tolist() == [True, False, True]


def test_placement(small):
    packed = place_packed(small, 8, np.zeros(0, np.int64))
    assert len(np.unique(small.host_leaf[packed])) == 2
    # The two packed leaves are full: 8 scattered hosts go one per leaf over the 6 others, then wrap.
    scattered = place_scattered(small, 8, packed)
    assert np.bincount(small.host_leaf[scattered] - small.host_leaf[scattered].min()).tolist() == [2, 2, 1, 1, 1, 1]
    assert not np.isin(scattered, packed).any()
    with pytest.raises(FabricEngineError, match="33 hosts asked"):
        place_packed(small, 33, np.zeros(0, np.int64))


def test_flows_defaults_concat_and_take():
    f = Flows(np.array([0, 1]), np.array([1, 0]), np.array([5.0, 6.0]), kind=KIND_BACKGROUND)
    g = Flows.concat([f, f])
    assert len(g) == 4 and g.kind.tolist() == [KIND_BACKGROUND] * 4 and g.job.tolist() == [-1] * 4
    assert g.take(np.array([1, 2])).demand_gbps.tolist() == [6.0, 5.0]
    with pytest.raises(ValueError, match="length"):
        Flows(np.array([0, 1]), np.array([1, 0]), np.array([5.0]))


def test_expand_jobs_offsets_and_rows(small):
    r = route(small)
    jobs = [Job("a", "x", small.hosts[:4]), Job("b", "y", small.hosts[4:10], pattern="all_to_all"),
            Job("c", "x", small.hosts[10:12])]
    jf = expand_jobs(jobs, small, r.paths)
    assert jf.offsets.tolist() == [0, 4, 34, 36]
    assert jf.flows.tenant.tolist() == [0] * 4 + [1] * 30 + [0] * 2
    assert jf.rows(np.array([True, False, True])).tolist() == [0, 1, 2, 3, 34, 35]
    assert jf.incidence.shape == (36, 2 * small.num_links) and not jf.broken.any()
    # Rows equal the routed paths of the same pairs.
    assert (jf.incidence[4:34] != r.paths(jf.flows.src[4:34], jf.flows.dst[4:34])).nnz == 0


def test_a_pattern_with_its_own_incidence_plugs_in(small):
    """Issue 6 (SHARP): a pattern may bring incidence rows for transfers that end at switches."""
    r = route(small)
    e = 2 * small.num_links

    def up_to_leaf(job, fabric):
        h = job.hosts
        links = fabric.port_out_link[fabric.port_offset[h]]  # host -> leaf
        inc = sp.csr_matrix((np.ones(len(h)), (np.arange(len(h)), links)), shape=(len(h), e))
        return PatternFlows(h, h, np.full(len(h), job.buffer_bytes), inc)

    register_pattern("test_up_to_leaf", up_to_leaf)
    try:
        jobs = [Job("ring", "t", small.hosts[:4]), Job("agg", "t", small.hosts[4:8], pattern="test_up_to_leaf")]
        jf = expand_jobs(jobs, small, r.paths)
        own = jf.incidence[4:8]
        assert (own.getnnz(axis=1) == 1).all()
        assert own.indices.tolist() == small.port_out_link[small.port_offset[small.hosts[4:8]]].tolist()
        assert (jf.incidence[:4] != r.paths(small.hosts[:4], np.roll(small.hosts[:4], -1))).nnz == 0
        assert not jf.broken.any() and KIND_SHARP == 4
    finally:
        PATTERNS.pop("test_up_to_leaf")
