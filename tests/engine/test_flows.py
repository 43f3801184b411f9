"""The max-min fair solver: hand cases, properties on random instances, a plain reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_engine.errors import SolverError
from fabric_engine.flows import group_max, max_min_fair, solve_paced, split_incidence

EPS = 1e-7


def reference_max_min(rows: list[dict[int, float]], capacity: list[float], demand: list[float],
                      weight: list[float]) -> list[float]:
    """Plainly written weighted progressive filling (loops and dicts, no numpy).

    ``rows[i]`` maps link -> share of flow ``i`` on it. All growing flows rise at
    ``weight`` per unit of fill; each round goes to the next link saturation or
    demand, then freezes the flows on saturated links and those at demand.
    """
    n = len(rows)
    rate = [0.0] * n
    free = list(capacity)
    growing = []
    for i in range(n):
        if demand[i] <= 0:
            continue
        if not rows[i]:
            rate[i] = demand[i]
            continue
        growing.append(i)
    while growing:
        load: dict[int, float] = {}
        for i in growing:
            for e, s in rows[i].items():
                load[e] = load.get(e, 0.0) + s * weight[i]
        step = math.inf
        for e, ld in load.items():
            step = min(step, free[e] / ld)
        for i in growing:
            step = min(step, (demand[i] - rate[i]) / weight[i])
        for i in growing:
            rate[i] += weight[i] * step
        saturated = set()
        for e, ld in load.items():
            free[e] -= ld * step
            if free[e] <= 1e-9 * max(capacity[e], 1.0):
                saturated.add(e)
        growing = [i for i in growing
                   if rate[i] < demand[i] * (1 - 1e-12) and not any(e in saturated for e in rows[i])]
    return rate


def as_rows(m: sp.csr_matrix) -> list[dict[int, float]]:
    m = sp.csr_matrix(m)
    return [dict(zip(m.indices[m.indptr[i]:m.indptr[i + 1]].tolist(), m.data[m.indptr[i]:m.indptr[i + 1]].tolist(),
                     strict=True)) for i in range(m.shape[0])]


@st.composite
def instances(draw, fractional: bool = False):
    f = draw(st.integers(1, 9))
    e = draw(st.integers(1, 6))
    cells = draw(st.lists(st.lists(st.sampled_from([0, 0, 1] + ([0.5, 0.25] if fractional else [])),
                                   min_size=e, max_size=e), min_size=f, max_size=f))
    cap = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 5.0, 10.0, 0.0, 7.5]), min_size=e, max_size=e))
    dem = draw(st.lists(st.sampled_from([math.inf, math.inf, 0.5, 1.0, 2.0, 4.0, 0.0]), min_size=f, max_size=f))
    w = draw(st.lists(st.sampled_from([1.0, 1.0, 2.0, 3.0, 0.5]), min_size=f, max_size=f))
    m = sp.csr_matrix(np.array(cells, dtype=float))
    # A flow crossing no link must have a finite demand.
    dem = [d if m[i].nnz or math.isfinite(d) else 1.0 for i, d in enumerate(dem)]
    return m, np.array(cap), np.array(dem), np.array(w)


def check_max_min(m: sp.csr_matrix, cap: np.ndarray, dem: np.ndarray, w: np.ndarray, rate: np.ndarray) -> None:
    """Feasibility and the max-min condition, written from their definitions."""
    a = m.toarray()
    assert (rate >= -EPS).all() and (rate <= dem + EPS).all()
    used = a.T @ rate
    assert (used <= cap + EPS * np.maximum(cap, 1)).all()
    saturated = used >= cap - EPS * np.maximum(cap, 1)
    for i in range(len(rate)):
        if rate[i] >= dem[i] - EPS:
            continue
        links = np.flatnonzero((a[i] > 0) & saturated)
        ok = [rate[i] / w[i] >= (rate[a[:, e] > 0] / w[a[:, e] > 0]).max() - EPS for e in links]
        assert any(ok), f"flow {i} is neither at demand nor maximal on a saturated link"


# ------------------------------------------------------------------ hand cases
def test_two_links_three_flows():
    m = sp.csr_matrix([[1, 1], [1, 0], [0, 1]])
    rate, bott = max_min_fair(m, np.array([10.0, 4.0]), return_bottleneck=True)
    assert rate.tolist() == [2.0, 8.0, 2.0]
    assert bott.tolist() == [1, 0, 1]


def test_demand_and_weight():
    m = sp.csr_matrix([[1], [1], [1]])
    rate, bott = max_min_fair(m, np.array([9.0]), demand=np.array([1.0, np.inf, np.inf]),
                              weight=np.array([1.0, 1.0, 3.0]), return_bottleneck=True)
    np.testing.assert_allclose(rate, [1.0, 2.0, 6.0])
    assert bott.tolist() == [-1, 0, 0]


def test_fractional_incidence_is_an_even_split():
    # One flow over two parallel paths (links 1 and 2), both 4 Gb/s, behind a 10 Gb/s link 0.
    sub = sp.csr_matrix([[1, 1, 0], [1, 0, 1]])
    inc = split_incidence(sub, np.array([0, 0]), 1)
    assert inc.toarray().tolist() == [[1.0, 0.5, 0.5]]
    np.testing.assert_allclose(max_min_fair(inc, np.array([10.0, 4.0, 4.0])), [8.0])
    # A second flow pinned to path 1: link 1 carries r0 / 2 + r1 = 4 with r0 = r1, so both get 8/3;
    # the split stays even, so path 2 is left partly idle.
    both = sp.vstack([inc, sp.csr_matrix([[0, 1, 0]])]).tocsr()
    np.testing.assert_allclose(max_min_fair(both, np.array([10.0, 4.0, 4.0])), [8 / 3, 8 / 3])


def test_split_incidence_custom_share_and_errors():
    sub = sp.csr_matrix([[1, 0], [0, 1], [1, 1]])
    inc = split_incidence(sub, np.array([0, 0, 1]), 2, share=np.array([0.75, 0.25, 1.0]))
    assert inc.toarray().tolist() == [[0.75, 0.25], [1.0, 1.0]]
    with pytest.raises(SolverError, match="outside"):
        split_incidence(sub, np.array([0, 0, 2]), 2)


def test_strict_priority_serves_high_class_first():
    m = sp.csr_matrix([[1], [1], [1]])
    rate = max_min_fair(m, np.array([10.0]), demand=np.array([6.0, np.inf, np.inf]), priority=np.array([1, 0, 0]))
    np.testing.assert_allclose(rate, [6.0, 2.0, 2.0])
    # A greedy high-priority flow starves the low class on its link only.
    m2 = sp.csr_matrix([[1, 0], [1, 1], [0, 1]])
    rate2 = max_min_fair(m2, np.array([10.0, 10.0]), priority=np.array([1, 0, 0]))
    np.testing.assert_allclose(rate2, [10.0, 0.0, 10.0])


def test_zero_capacity_and_zero_demand():
    m = sp.csr_matrix([[1, 0], [0, 1], [1, 1]])
    rate = max_min_fair(m, np.array([0.0, 5.0]), demand=np.array([np.inf, 0.0, np.inf]))
    np.testing.assert_allclose(rate, [0.0, 0.0, 0.0])


def test_infinite_capacity():
    m = sp.csr_matrix([[1, 1], [0, 1]])
    np.testing.assert_allclose(max_min_fair(m, np.array([np.inf, 4.0])), [2.0, 2.0])
    with pytest.raises(SolverError, match="infinite capacity"):
        max_min_fair(sp.csr_matrix([[1]]), np.array([np.inf]))


def test_bad_input_is_one_clear_error():
    m = sp.csr_matrix([[1, 1]])
    with pytest.raises(SolverError, match="capacity has shape"):
        max_min_fair(m, np.ones(3))
    with pytest.raises(SolverError, match="positive"):
        max_min_fair(m, np.ones(2), weight=np.array([0.0]))
    with pytest.raises(SolverError, match="negative"):
        max_min_fair(m, np.array([1.0, -1.0]))
    with pytest.raises(SolverError, match="priority"):
        max_min_fair(m, np.ones(2), priority=np.array([1, 2]))


def test_empty_problem():
    assert max_min_fair(sp.csr_matrix((0, 3)), np.ones(3)).shape == (0,)


# ------------------------------------------------------------ property tests
@settings(max_examples=300, deadline=None)
@given(instances())
def test_feasible_and_max_min(inst):
    m, cap, dem, w = inst
    check_max_min(m, cap, dem, w, max_min_fair(m, cap, dem, w))


@settings(max_examples=200, deadline=None)
@given(instances(fractional=True))
def test_fractional_feasible_and_max_min(inst):
    m, cap, dem, w = inst
    check_max_min(m, cap, dem, w, max_min_fair(m, cap, dem, w))


@settings(max_examples=300, deadline=None)
@given(instances(fractional=True))
def test_agrees_with_reference(inst):
    m, cap, dem, w = inst
    ref = reference_max_min(as_rows(m), cap.tolist(), dem.tolist(), w.tolist())
    np.testing.assert_allclose(max_min_fair(m, cap, dem, w), ref, rtol=1e-7, atol=1e-9)


@settings(max_examples=200, deadline=None)
@given(instances(), st.data())
def test_weight_monotonicity(inst, data):
    m, cap, dem, w = inst
    i = data.draw(st.integers(0, m.shape[0] - 1))
    factor = data.draw(st.sampled_from([1.5, 2.0, 4.0]))
    before = max_min_fair(m, cap, dem, w)
    w2 = w.copy()
    w2[i] *= factor
    after = max_min_fair(m, cap, dem, w2)
    assert after[i] >= before[i] - EPS


@settings(max_examples=150, deadline=None)
@given(instances(), st.data())
def test_priority_classes_are_max_min_on_what_is_left(inst, data):
    m, cap, dem, w = inst
    prio = np.array(data.draw(st.lists(st.integers(0, 2), min_size=m.shape[0], max_size=m.shape[0])))
    rate = max_min_fair(m, cap, dem, w, priority=prio)
    left = cap.copy()
    for p in (2, 1, 0):
        rows = np.flatnonzero(prio == p)
        sub = m[rows]
        check_max_min(sub, left, dem[rows], w[rows], rate[rows])
        left = np.maximum(left - sub.T @ rate[rows], 0)


@settings(max_examples=100, deadline=None)
@given(instances())
def test_bottleneck_is_saturated_and_crossed(inst):
    m, cap, dem, w = inst
    rate, bott = max_min_fair(m, cap, dem, w, return_bottleneck=True)
    a = m.toarray()
    used = a.T @ rate
    for i in np.flatnonzero(bott >= 0):
        assert a[i, bott[i]] > 0
        assert used[bott[i]] >= cap[bott[i]] * (1 - 1e-7) - 1e-9


def test_random_medium_instance_matches_reference():
    rng = np.random.default_rng(5)
    m = sp.random(300, 40, density=0.08, random_state=rng, format="csr")
    m.data[:] = rng.choice([1.0, 0.5], size=m.nnz)
    cap = rng.choice([10.0, 25.0, 40.0], size=40)
    dem = np.where(rng.random(300) < 0.3, rng.uniform(0.1, 3, 300), np.inf)
    dem[np.diff(m.indptr) == 0] = 1.0
    w = rng.choice([1.0, 2.0, 4.0], size=300)
    ref = reference_max_min(as_rows(m), cap.tolist(), dem.tolist(), w.tolist())
    np.testing.assert_allclose(max_min_fair(m, cap, dem, w), ref, rtol=1e-7, atol=1e-9)


@settings(max_examples=200, deadline=None)
@given(instances(fractional=True), st.data())
def test_solve_paced_keeps_the_pace_and_shares_the_rest_fairly(inst, data):
    m, cap, dem, w = inst
    f = m.shape[0]
    group = np.array(data.draw(st.lists(st.integers(-1, 2), min_size=f, max_size=f)))
    gbits = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 5.0]), min_size=f, max_size=f)))
    gbits[group < 0] = 0.0
    rate, bott, t = solve_paced(m, cap, dem, w, gbits, group, 3)
    # Pass 1, written out: greedy rates and each group's collective time.
    rate1, bott1 = max_min_fair(m, cap, dem, w, return_bottleneck=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(gbits > 0, gbits / rate1, 0.0)
    t_group = np.array([t1[group == k].max(initial=0.0) for k in range(3)])
    np.testing.assert_allclose(t, t_group, rtol=1e-7)
    assert (bott == bott1).all()
    grouped = group >= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        pace = np.where(gbits > 0, gbits / t_group[np.maximum(group, 0)], 0.0)
    np.testing.assert_allclose(rate[grouped], pace[grouped], rtol=1e-7, atol=1e-12)
    assert (rate[grouped] <= rate1[grouped] + 1e-9).all()
    # Independent flows: max-min fair on what the paced flows leave; the whole is feasible.
    left = np.maximum(cap - m[grouped].T @ rate[grouped], 0.0)
    free = ~grouped
    if free.any():
        check_max_min(m[free], left, dem[free], w[free], rate[free])
    assert (m.T @ rate <= cap + 1e-7 * np.maximum(cap, 1)).all()


def test_group_max():
    assert group_max(np.array([1.0, 5.0, 2.0, 9.0]), np.array([0, 0, 1, -1]), 3).tolist() == [5.0, 2.0, 0.0]
