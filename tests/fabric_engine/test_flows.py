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


# -------------------------------------------- the compiled fill (issue 15)
def test_compiled_solver_is_built():
    """`pip install -e .` builds fabric_engine._maxmin; CI must run the fast solver, not the fallback."""
    import os

    import fabric_engine.flows as flows

    if not flows.COMPILED and os.environ.get("CI") != "true":
        pytest.skip("fabric_engine._maxmin not built in this checkout (pip install -e .)")
    assert flows.COMPILED


needs_compiled = pytest.mark.skipif(not __import__("fabric_engine.flows").flows.COMPILED,
                                    reason="fabric_engine._maxmin not built")


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(instances(fractional=True), st.data())
def test_compiled_fill_equals_numpy_fill(inst, data):
    m, cap, dem, w = inst
    prio = np.array(data.draw(st.lists(st.integers(0, 2), min_size=m.shape[0], max_size=m.shape[0])))
    for kw in ({}, {"priority": prio}):
        r_np, b_np = max_min_fair(m, cap, dem, w, return_bottleneck=True, kernel="numpy", **kw)
        r_c, b_c = max_min_fair(m, cap, dem, w, return_bottleneck=True, kernel="compiled", **kw)
        np.testing.assert_allclose(r_c, r_np, rtol=1e-9, atol=1e-12)
        if not kw:
            assert (b_c == b_np).all()


@needs_compiled
def test_compiled_fill_equals_numpy_fill_on_a_routed_fabric():
    """Issue 15: same rates as the numpy fill to 1e-9 relative on 20,000 routed flows with demands, weights, classes."""
    from fabric_engine.routing import route
    from fabric_engine.topology.generate import fat_tree

    f = fat_tree(hosts=512, radix=32, levels=2)
    r = route(f)
    rng = np.random.default_rng(3)
    src, dst = rng.choice(f.hosts, 20000), rng.choice(f.hosts, 20000)
    inc = r.paths(src[src != dst], dst[src != dst])
    n = inc.shape[0]
    dem = np.where(rng.random(n) < 0.3, rng.uniform(1, 50, n), np.inf)
    w = rng.choice([1.0, 2.0, 4.0], n)
    info_np, info_c = {}, {}
    r_np, b_np = max_min_fair(inc, f.capacity_gbps, dem, w, return_bottleneck=True, kernel="numpy", info=info_np)
    r_c, b_c = max_min_fair(inc, f.capacity_gbps, dem, w, return_bottleneck=True, kernel="compiled", info=info_c)
    np.testing.assert_allclose(r_c, r_np, rtol=1e-9)
    assert (b_c == b_np).all() and info_c["rounds"] == info_np["rounds"] > 10
    prio = rng.integers(0, 2, n)
    np.testing.assert_allclose(max_min_fair(inc, f.capacity_gbps, dem, w, priority=prio, kernel="compiled"),
                               max_min_fair(inc, f.capacity_gbps, dem, w, priority=prio, kernel="numpy"),
                               rtol=1e-9, atol=1e-9)


def test_incidence_stack_is_the_stacked_matrix():
    from fabric_engine.incidence import Incidence

    rng = np.random.default_rng(7)
    fixed = sp.random(60, 12, density=0.3, random_state=rng, format="csr")
    fixed.data[:] = rng.choice([1.0, 0.5], size=fixed.nnz)
    extra = sp.random(9, 12, density=0.3, random_state=rng, format="csr")
    inc = Incidence(fixed).stack(extra)
    whole = sp.vstack([fixed, extra], format="csr")
    cap = rng.choice([5.0, 10.0], 12)
    dem = np.where(rng.random(69) < 0.3, 1.0, np.inf)
    dem[np.diff(whole.indptr) == 0] = 1.0
    np.testing.assert_allclose(max_min_fair(inc, cap, dem), max_min_fair(whole, cap, dem), rtol=1e-12)
    x = rng.random((2, 69))
    np.testing.assert_allclose(inc.rmatvec(x), (whole.T @ x.T).T)
    k, row, share = inc.columns(np.array([3, 7]))
    dense = whole.toarray()
    for col, c in enumerate((3, 7)):
        assert sorted(row[k == col].tolist()) == np.flatnonzero(dense[:, c]).tolist()
        np.testing.assert_allclose(np.sort(share[k == col]), np.sort(dense[dense[:, c] > 0, c]))
    with pytest.raises(SolverError, match="columns"):
        Incidence(fixed).stack(sp.csr_matrix((1, 5)))


def test_alone_equals_the_block_diagonal_solve():
    from fabric_engine.flows import max_min_fair_alone

    rng = np.random.default_rng(11)
    m = sp.random(80, 10, density=0.3, random_state=rng, format="csr")
    m.data[:] = 1.0
    cap = rng.choice([4.0, 10.0], 10)
    dem = np.where(rng.random(80) < 0.2, 2.0, np.inf)
    dem[np.diff(m.indptr) == 0] = 1.0
    w = np.ones(80)
    group = rng.integers(-1, 4, 80)
    got = max_min_fair_alone(m, cap, dem, w, group)
    for g in range(4):
        rows = np.flatnonzero(group == g)
        np.testing.assert_allclose(got[rows], max_min_fair(m[rows], cap, dem[rows], w[rows]), rtol=1e-12)
    assert (got[group < 0] == 0).all()


@needs_compiled
def test_compiled_helpers_equal_their_numpy_forms(monkeypatch):
    import fabric_engine.flows as flows

    rng = np.random.default_rng(2)
    bits = np.where(rng.random(500) < 0.1, 0.0, rng.uniform(1, 9, 500))
    rate = np.where(rng.random(500) < 0.05, 0.0, rng.uniform(0.5, 5, 500))
    group = rng.integers(-1, 6, 500)
    bott = rng.integers(-1, 30, 500)
    t_min = np.append(rng.uniform(0, 5, 5), np.nan)

    def forms():
        t = flows.group_duration(bits, rate, group, 6)
        return (t, flows.paced(rate, bits, group, t), flows.slowest_bottlenecks(bits, rate, group, t_min, bott, 30),
                flows.group_max(rate, group, 6))

    compiled = forms()
    monkeypatch.setattr(flows, "COMPILED", False)
    plain = forms()
    np.testing.assert_allclose(compiled[0], plain[0])
    np.testing.assert_allclose(compiled[1], plain[1])
    assert [x.tolist() for x in compiled[2]] == [x.tolist() for x in plain[2]]
    np.testing.assert_allclose(compiled[3], plain[3])


def test_paced_load_from_group_sums_equals_the_walk_over_the_rows(monkeypatch):
    """issue 15: the emulator's per-job gigabits per link stand in for a walk over the paced rows."""
    import fabric_engine.incidence as incidence
    from fabric_engine.incidence import Incidence

    rng = np.random.default_rng(5)
    fixed = sp.random(90, 14, density=0.3, random_state=rng, format="csr")
    fixed.data[:] = rng.choice([1.0, 0.5], size=fixed.nnz)
    extra = sp.random(12, 14, density=0.3, random_state=rng, format="csr")
    extra.data[:] = 1.0
    inc = Incidence(fixed).stack(extra)
    group = np.r_[rng.integers(-1, 4, 90), np.full(12, -1)]
    bits = np.where(group >= 0, rng.uniform(1, 9, 102), 0.0)
    cap = rng.choice([5.0, 10.0], 14)
    dem = np.where(group >= 0, np.inf, 2.0)
    w = np.ones(102)
    sums = inc.fixed.group_sums(group[:90], bits[:90], 4)
    dense = fixed.toarray()
    for g in range(4):
        np.testing.assert_allclose(sums[g].toarray().ravel(), (bits[:90, None] * dense)[group[:90] == g].sum(axis=0))

    def paced_load(t, cols):
        with np.errstate(divide="ignore"):
            inv = np.where(np.isfinite(t) & (t > 0), 1.0 / t, 0.0)
        return (sums.T @ inv)[cols]

    plain = solve_paced(inc, cap, dem, w, bits, group, 4)
    fast = solve_paced(inc, cap, dem, w, bits, group, 4, paced_load=paced_load)
    for a, b in zip(plain, fast, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    cols = np.array([1, 4, 9])
    x = rng.random(102)
    compiled = inc.rmatvec_columns(x, cols, group=group)
    monkeypatch.setattr(incidence, "_maxmin", None)
    np.testing.assert_allclose(inc.rmatvec_columns(x, cols, group=group), compiled)
    np.testing.assert_allclose(compiled, ((np.where(group >= 0, x, 0.0)[:, None] * sp.vstack([fixed, extra]).toarray())
                                          .sum(axis=0))[cols])
