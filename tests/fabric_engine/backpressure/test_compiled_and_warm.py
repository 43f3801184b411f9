"""fabric_engine.backpressure.solve: the compiled iteration (fabric_engine/_credit.c) gives the numpy one's rates
bit for bit (a solve that does not stop and returns the mean of its iterates too), and a solve warm-started from an
earlier result (``start=``) lands where a cold one does."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.backpressure import Hops, credit_rates
from fabric_engine.backpressure.solve import COMPILED, CreditResult
from fabric_engine.errors import SolverError
from tests.reference.congestion import scenarios as S

needs_c = pytest.mark.skipif(not COMPILED, reason="fabric_engine._credit is not built")


def random_case(seed: int, flows: int, n_vls: int = 1):
    """Random flows on the 16-host fat tree of the BookSim scenarios, a random spine each: ``(hops, capacity, demand,
    vl_weight)``. The cases of docs/workloads-and-congestion.md's Convergence paragraph are seeds 0-199 with
    ``20 + (7 * seed) % 180`` flows, two lanes for seeds that are multiples of 5."""
    rng = np.random.default_rng(seed)
    ids = S.link_ids()
    src = rng.integers(0, S.HOSTS, flows)
    dst = (src + rng.integers(1, S.HOSTS, flows)) % S.HOSTS
    spine = rng.integers(0, S.SPINES, flows)
    paths = [[ids[k] for k in S.route(int(s), int(d), int(p))] for s, d, p in zip(src, dst, spine, strict=True)]
    indptr = np.r_[0, np.cumsum([len(p) for p in paths])]
    hops = Hops.from_paths(indptr, np.concatenate(paths), len(ids), vl=rng.integers(0, n_vls, flows), n_vls=n_vls)
    demand = rng.choice([0.1, 0.5, 1.0, np.inf], flows)
    weights = np.arange(1.0, n_vls + 1)
    return hops, np.ones(len(ids)), demand, weights


@needs_c
@pytest.mark.parametrize("seed,flows,n_vls", [(0, 24, 1), (1, 100, 1), (2, 200, 1), (3, 24, 2), (4, 100, 3),
                                               (9, 83, 1)])
def test_compiled_iteration_equals_numpy(seed: int, flows: int, n_vls: int):
    # seeds 1, 4 and 9 do not stop within 400 iterations: the mean of the last 200 is returned
    hops, cap, dem, w = random_case(seed, flows, n_vls)
    for max_iter in (1, 7, 400):  # mid-way (damping switched on or not) and at the end
        c = credit_rates(hops, cap, dem, w, max_iter=max_iter, compiled=True)
        n = credit_rates(hops, cap, dem, w, max_iter=max_iter, compiled=False)
        _assert_same(c, n, max_iter)
    # on from a mean (a live tick's warm start), averaging from an iterate of one's choice
    c = credit_rates(hops, cap, dem, w, max_iter=50, start=c, average_from=11, compiled=True)
    n = credit_rates(hops, cap, dem, w, max_iter=50, start=n, average_from=11, compiled=False)
    _assert_same(c, n, "warm")
    assert c.converged or c.averaged == 40


def _assert_same(c: CreditResult, n: CreditResult, label) -> None:
    assert (c.iterations, c.converged, c.averaged) == (n.iterations, n.converged, n.averaged), label
    for field in ("rate", "link_rate", "link_cap", "held", "root", "depart", "lane_cap"):
        assert np.array_equal(getattr(c, field), getattr(n, field)), (field, label)


@needs_c
def test_compiled_iteration_equals_numpy_on_the_booksim_scenarios():
    for sc in S.SCENARIOS:
        p = S.paths(sc)
        hops = Hops.from_paths(p["indptr"], p["links"], p["n_links"], p["vl"], p["queue"], n_vls=len(sc.vl_weights))
        args = (hops, np.ones(p["n_links"]), p["demand"], np.array(sc.vl_weights))
        c, n = credit_rates(*args, compiled=True), credit_rates(*args, compiled=False)
        assert c.converged and n.converged and c.iterations == n.iterations, sc.name
        assert c.averaged == n.averaged == 0, sc.name
        assert np.array_equal(c.rate, n.rate), sc.name


@pytest.mark.parametrize("seed,flows,n_vls", [(5, 24, 1), (6, 24, 2), (7, 50, 1)])
def test_a_warm_start_lands_where_a_cold_solve_does(seed: int, flows: int, n_vls: int):
    hops, cap, dem, w = random_case(seed, flows, n_vls)
    cold = credit_rates(hops, cap, dem, w)
    assert cold.converged
    again = credit_rates(hops, cap, dem, w, start=cold)
    assert again.converged and again.iterations < cold.iterations
    assert np.allclose(again.rate, cold.rate, atol=1e-3)
    # the next tick: a fifth of the demands moved; from the last result it lands where a cold solve of it does
    moved = dem.copy()
    moved[::5] = np.where(np.isinf(moved[::5]), 0.5, np.inf)
    cold2 = credit_rates(hops, cap, moved, w)
    warm2 = credit_rates(hops, cap, moved, w, start=cold)
    assert cold2.converged and warm2.converged
    assert np.allclose(warm2.rate, cold2.rate, atol=1e-3)
    assert np.allclose(warm2.link_rate, cold2.link_rate, atol=1e-3)  # (caps that do not bind may differ)


def test_the_first_scenario_restarted_from_its_result_stays_put():
    p = S.paths(S.ISSUE)
    hops = Hops.from_paths(p["indptr"], p["links"], p["n_links"], p["vl"], p["queue"])
    cold = credit_rates(hops, np.ones(p["n_links"]), p["demand"])
    warm = credit_rates(hops, np.ones(p["n_links"]), p["demand"], start=cold)
    assert warm.iterations == 4 and warm.converged  # its longest path: 4 links
    assert np.allclose(warm.rate, cold.rate, atol=1e-4)


def test_a_start_from_other_hops_or_without_state_is_refused():
    hops, cap, dem, w = random_case(8, 24)
    other, *_ = random_case(9, 30)
    res = credit_rates(other, np.ones(other.n_links), np.full(other.rows, np.inf))
    with pytest.raises(SolverError, match="start"):
        credit_rates(hops, cap, dem, w, start=res)
    bare = CreditResult(rate=res.rate, link_rate=res.link_rate, link_cap=res.link_cap, held=res.held, root=res.root,
                        iterations=1, converged=True)
    with pytest.raises(SolverError, match="start"):
        credit_rates(other, np.ones(other.n_links), np.full(other.rows, np.inf), start=bare)
    with pytest.raises(SolverError, match="max_iter"):
        credit_rates(hops, cap, dem, w, max_iter=0)
    with pytest.raises(SolverError, match="average_from"):
        credit_rates(hops, cap, dem, w, average_from=0)


@needs_c
@pytest.mark.parametrize("seed,flows,n_vls", [(0, 24, 1), (1, 100, 1), (4, 100, 3)])
def test_a_solve_carried_on_in_its_scratch_iterates_as_one_that_sums_every_arrival(seed: int, flows: int, n_vls: int):
    """A live tick's solves: a few iterations each, carried on in place from the last, with demands that change
    (rows stop, start and change). With a Scratch the arrivals of the rows whose demand did not change are carried
    on from the last solve, not summed again: the iterates are the same, rounding aside."""
    from fabric_engine.backpressure import Scratch

    hops, cap, dem, w = random_case(seed, flows, n_vls)
    rng = np.random.default_rng(seed)
    scratch = Scratch()
    kept = plain = None
    last_dem = dem
    for tick in range(12):
        d = dem.copy()
        d[rng.random(flows) < 0.3] = 0.0  # rows that do not run this tick
        if tick % 3 == 2:
            d[rng.random(flows) < 0.2] *= 0.5
        if kept is not None:  # a row that starts running starts from its demand (CreditTick._start); a caller's
            # "starts" may get no demand here (congestion control's throttled solve: a target of 0)
            fresh = np.flatnonzero((last_dem <= 0) & ((d > 0) | (rng.random(flows) < 0.5)))
            for r in fresh:
                kept.depart[hops.first[r]:hops.last[r] + 1] = np.inf
                plain.depart[hops.first[r]:hops.last[r] + 1] = np.inf
        kept = credit_rates(hops, cap, d, w, max_iter=3, start=kept, overwrite_start=True, scratch=scratch)
        assert scratch.carried(hops, kept.depart) is not None  # left for the next solve to carry on from
        plain = credit_rates(hops, cap, d, w, max_iter=3, start=plain, overwrite_start=True)
        last_dem = d
        for field in ("rate", "link_rate", "depart", "lane_cap"):
            np.testing.assert_allclose(getattr(kept, field), getattr(plain, field), rtol=1e-9, atol=1e-12,
                                       err_msg=f"{field} at tick {tick}")
        assert (kept.iterations, kept.converged) == (plain.iterations, plain.converged)


@needs_c
def test_a_scratch_is_not_carried_on_to_other_departures_or_hops():
    from fabric_engine.backpressure import Scratch

    hops, cap, dem, w = random_case(0, 24)
    scratch = Scratch()
    a = credit_rates(hops, cap, dem, w, max_iter=3, scratch=scratch)
    b = credit_rates(hops, cap, dem, w, max_iter=3, start=a, scratch=scratch)  # a copy of a's departures
    assert scratch.carried(hops, a.depart) is None and scratch.carried(hops, b.depart) is not None
    other, *_ = random_case(1, 30)
    assert scratch.carried(other, b.depart) is None
    # a solve of other hops in the same scratch: b's arrivals are gone, its next solve sums them again
    credit_rates(other, np.ones(other.n_links), np.ones(other.rows), max_iter=2, scratch=scratch)
    assert scratch.carried(hops, b.depart) is None
    summed = credit_rates(hops, cap, dem, w, max_iter=3, start=b)
    c = credit_rates(hops, cap, dem, w, max_iter=3, start=b, overwrite_start=True, scratch=scratch)
    np.testing.assert_array_equal(c.rate, summed.rate)
