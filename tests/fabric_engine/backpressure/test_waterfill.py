"""fabric_engine.backpressure.waterfill: many arbiters' levels at once, against one-at-a-time water-filling."""

from __future__ import annotations

import numpy as np

from fabric_engine.backpressure import water_levels


def _one(demand: np.ndarray, weight: np.ndarray, cap: float) -> float:
    """Textbook progressive filling of one arbiter: the level, inf if everything fits."""
    if demand.sum() <= cap:
        return np.inf
    order = np.argsort(demand / weight)
    left, w_left = cap, weight.sum()
    for i in order:
        if demand[i] < weight[i] * left / w_left:
            left -= demand[i]
            w_left -= weight[i]
        else:
            return left / w_left
    return np.inf


def test_levels_match_progressive_filling_per_group():
    rng = np.random.default_rng(3)
    n_groups = 40
    group = rng.integers(0, n_groups, 400)
    demand = rng.choice([0.05, 0.2, 0.5, 1.0, 3.0], 400) * rng.random(400)
    weight = rng.choice([1.0, 2.0, 4.0], 400)
    cap = rng.random(n_groups) * 3
    got = water_levels(group, demand, weight, cap, n_groups)
    for g in range(n_groups):
        m = group == g
        want = _one(demand[m], weight[m], cap[g]) if m.any() else np.inf
        if np.isinf(want):
            assert np.isinf(got[g]) or got[g] * weight[m].min() >= demand[m].max() * (1 - 1e-9)
        else:
            assert np.isclose(got[g], want), g
            grants = np.minimum(demand[m], weight[m] * got[g])
            assert np.isclose(grants.sum(), cap[g])


def test_a_group_exactly_full_keeps_a_finite_level():
    level = water_levels(np.array([0, 0]), np.array([0.25, 0.75]), None, np.array([1.0]), 1)
    assert np.isclose(level[0], 0.75)
