"""fabric_engine.backpressure.credit_rates on small fabrics worked by hand: port-fair arbiters, head-of-line
blocking, back-pressure spreading up a chain of switches, virtual lanes, and the limits every result keeps."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.backpressure import Hops, credit_rates
from fabric_engine.errors import SolverError
from fabric_engine.flows import max_min_fair
from tests.reference.congestion import scenarios as S


def _solve(paths: list[list[int]], n_links: int, demand=None, vl=None, weights=None, queue=None):
    indptr = np.r_[0, np.cumsum([len(p) for p in paths])]
    hops = Hops.from_paths(indptr, np.concatenate(paths), n_links, vl=None if vl is None else np.array(vl),
                           queue=None if queue is None else np.array(queue),
                           n_vls=None if weights is None else len(weights))
    dem = np.full(len(paths), np.inf) if demand is None else np.array(demand, dtype=float)
    return credit_rates(hops, np.ones(n_links), dem, None if weights is None else np.array(weights, float))


def test_one_flow_gets_its_demand_or_the_link():
    assert np.allclose(_solve([[0, 1]], 2, demand=[0.3]).rate, [0.3])
    assert np.allclose(_solve([[0, 1]], 2).rate, [1.0])


def test_an_output_is_shared_among_input_ports_not_flows():
    # links: 0 a->S, 1 b->S, 2 S->c. Two flows from a (one buffer at S), one from b.
    res = _solve([[0, 2], [0, 2], [1, 2]], 3)
    assert np.allclose(res.rate, [0.25, 0.25, 0.5])
    assert res.converged


# links of a two-switch line: 0 a->S1, 1 b->S1, 2 S1->S2, 3 e->S2, 4 f->S2, 5 S2->c, 6 S2->d
HOT_A, VICTIM_B, HOT_E, HOT_F = [0, 2, 5], [1, 2, 6], [3, 5], [4, 5]


def test_a_victim_waits_behind_a_blocked_flow_in_its_buffer():
    res = _solve([HOT_A, VICTIM_B, HOT_E, HOT_F], 7)
    # S2->c: three input ports, 1/3 each; the S1->S2 buffer is half hot traffic, so it drains at 2/3
    assert np.allclose(res.rate, [1 / 3, 1 / 3, 1 / 3, 1 / 3], atol=1e-6)
    fair = max_min_fair(_incidence([HOT_A, VICTIM_B, HOT_E, HOT_F], 7), np.ones(7))
    assert np.isclose(fair[1], 2 / 3)  # what ideal congestion control would give the victim
    assert res.held[2] and res.held[0] and res.held[1] and not res.held[5]
    assert res.root[5] and not res.root[2]


def test_a_separate_virtual_lane_removes_the_blocking():
    res = _solve([HOT_A, VICTIM_B, HOT_E, HOT_F], 7, vl=[0, 1, 0, 0], weights=[1.0, 1.0])
    # the victim's lane is not held back: it gets what the hot lane leaves of S1->S2
    assert np.allclose(res.rate, [1 / 3, 2 / 3, 1 / 3, 1 / 3], atol=1e-6)


def test_vl_weights_split_a_link_between_busy_lanes():
    # two greedy flows on one link, VL 0 weight 3, VL 1 weight 1
    res = _solve([[0], [0]], 1, vl=[0, 1], weights=[3.0, 1.0])
    assert np.allclose(res.rate, [0.75, 0.25])


def test_back_pressure_spreads_hop_by_hop_up_a_chain():
    # 0 a->S1, 1 b->S1, 2 S1->S2, 3 S2->S3, 4 g->S3, 5 h->S3, 6 S3->c, 7 S2->d
    hot, victim, local_g, local_h = [0, 2, 3, 6], [1, 2, 7], [4, 6], [5, 6]
    res = _solve([hot, victim, local_g, local_h], 8)
    # S3->c: 3 inputs -> 1/3 each. S2->S3 carries only the hot flow: its buffer at S2 (from S1) is half
    # hot, so the victim two hops from the root is held to the hot flow's 1/3 too.
    assert np.allclose(res.rate, [1 / 3, 1 / 3, 1 / 3, 1 / 3], atol=1e-6)
    assert res.held[[0, 1, 2, 3]].all() and not res.held[[6, 7]].any()
    assert res.root.tolist() == [i == 6 for i in range(8)]


def test_rates_never_exceed_demand_or_capacity_on_random_fat_tree_traffic():
    rng = np.random.default_rng(11)
    ids = S.link_ids()
    for _ in range(20):
        src = rng.integers(0, S.HOSTS, 24)
        dst = (src + rng.integers(1, S.HOSTS, 24)) % S.HOSTS
        paths = [[ids[k] for k in S.route(int(s), int(d), int(d) % S.SPINES)] for s, d in zip(src, dst, strict=True)]
        dem = rng.choice([0.1, 0.5, 1.0, np.inf], 24)
        res = _solve(paths, len(ids), demand=dem, vl=rng.integers(0, 2, 24), weights=[1.0, 2.0])
        assert res.converged
        assert (res.rate <= np.minimum(dem, 1.0) + 1e-9).all()
        assert (res.link_rate <= 1.0 + 1e-6).all()
        assert (res.rate > 0).all()


def test_bad_input_is_refused():
    hops = Hops.from_paths(np.array([0, 2]), np.array([0, 1]), 2)
    with pytest.raises(SolverError, match="capacity"):
        credit_rates(hops, np.ones(3), np.ones(1))
    with pytest.raises(SolverError, match="demand"):
        credit_rates(hops, np.ones(2), np.ones(2))
    with pytest.raises(SolverError, match="vl_weight"):
        credit_rates(hops, np.ones(2), np.ones(1), np.array([1.0, 1.0]))


def _incidence(paths: list[list[int]], n_links: int):
    import scipy.sparse as sp

    rows = np.repeat(np.arange(len(paths)), [len(p) for p in paths])
    return sp.csr_matrix((np.ones(len(rows)), (rows, np.concatenate(paths))), shape=(len(paths), n_links))


@pytest.mark.parametrize("compiled", [None, False], ids=["default", "numpy"])
def test_a_starved_buffer_is_served_its_share_when_the_output_has_almost_no_room(compiled):
    """Three inputs of one output (400): 300 - 1e-7 and 100 all but fill it; the third asks for all but starts
    starved (its link held at 1e-9 by its own buffer's drain). Round robin would serve it if it had packets, so its
    buffer drains at the share it would get, not at what it sends plus the output's 1e-7 of room (a creep below the
    stop test's tolerance, taken for a fixed point): max-min among the inputs, 150 / 100 / 150."""
    import dataclasses

    hops = Hops.from_paths(np.array([0, 2, 4, 6]), np.array([1, 3, 2, 3, 0, 3]), 4)
    cap = np.full(4, 400.0)
    dem = np.array([300.0 - 1e-7, 100.0, np.inf])
    cold = credit_rates(hops, cap, dem, compiled=compiled)
    np.testing.assert_allclose(cold.rate, [150.0, 100.0, 150.0], rtol=1e-6)
    depart = cold.depart.copy()
    depart[hops.row == 0] = dem[0]
    depart[hops.row == 2] = 1e-9
    lane_cap = cap[hops.lane_link].copy()
    lane_cap[hops.lane_link == 0] = 1e-9
    warm = credit_rates(hops, cap, dem, start=dataclasses.replace(cold, depart=depart, lane_cap=lane_cap),
                        compiled=compiled)
    assert warm.converged
    np.testing.assert_allclose(warm.rate, [150.0, 100.0, 150.0], rtol=1e-6)
