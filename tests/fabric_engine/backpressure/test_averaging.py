"""fabric_engine.backpressure.credit_rates when the iteration does not stop: a limit cycle's solve returns the mean
of its last half of iterates (``averaged``), near the cycle's long-run mean where its last iterate is not; a solve
that stops returns its converged iterate as before (``averaged`` 0)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.backpressure import Hops, credit_rates
from tests.fabric_engine.backpressure.test_compiled_and_warm import random_case
from tests.reference.congestion import scenarios as S

# 123 flows on one lane: by its 1,000th iteration the iterates repeat every 10 (caps swinging by 0.43 of a link,
# rates by 0.08)
LIMIT_CYCLE = (169, 123, 1)


@pytest.mark.parametrize("compiled", [None, False], ids=["default", "numpy"])
def test_a_limit_cycle_returns_the_mean_of_its_iterates(compiled: bool | None):
    hops, cap, dem, w = random_case(*LIMIT_CYCLE)
    res = credit_rates(hops, cap, dem, w, max_iter=1000, compiled=compiled)
    last = credit_rates(hops, cap, dem, w, max_iter=1000, average_from=1001, compiled=compiled)
    after = credit_rates(hops, cap, dem, w, max_iter=1010, average_from=1011, compiled=compiled)
    assert np.allclose(after.lane_cap, last.lane_cap, atol=1e-9)  # a cycle of 10 iterations
    assert not np.allclose(
        credit_rates(hops, cap, dem, w, max_iter=1005, average_from=1006, compiled=compiled).lane_cap,
        last.lane_cap, atol=0.3)
    assert not res.converged and res.iterations == 1000 and res.averaged == 500
    assert not last.converged and last.averaged == 0
    # the long run: the mean of iterates 1,001-3,000
    long = credit_rates(hops, cap, dem, w, max_iter=3000, average_from=1001, compiled=compiled)
    assert long.averaged == 2000
    assert np.abs(res.rate - long.rate).max() < 0.002  # 3e-12 of a link: the window holds 50 whole cycles
    assert np.abs(last.rate - long.rate).max() > 0.05  # 0.077
    assert np.abs(res.lane_cap - long.lane_cap).max() < 0.01  # 2e-11
    assert np.abs(last.lane_cap - long.lane_cap).max() > 0.1  # 0.176


def test_the_mean_is_one_state():
    hops, cap, dem, w = random_case(*LIMIT_CYCLE)
    res = credit_rates(hops, cap, dem, w)
    assert res.averaged == 200  # max_iter 400: its last half
    assert np.array_equal(res.rate, res.depart[hops.last])
    assert np.allclose(res.link_rate, np.bincount(hops.out, weights=res.depart, minlength=hops.n_links))
    lane_cap = cap[hops.lane_link]
    assert (res.lane_cap <= lane_cap).all()
    assert np.array_equal(res.held, np.bincount(hops.lane_link, weights=res.lane_cap < lane_cap * (1 - 1e-9),
                                                minlength=hops.n_links) > 0)
    assert (res.link_cap <= cap).all() and (res.link_rate <= cap + 1e-9).all()
    assert res.held.any()  # (a root needs its link full in the mean: a cycle's roots take turns)


def test_no_averaging_before_there_are_two_iterates_or_the_longest_path_is_crossed():
    hops, cap, dem, w = random_case(*LIMIT_CYCLE)
    assert hops.longest == 4
    assert credit_rates(hops, cap, dem, w, max_iter=2).averaged == 0
    assert credit_rates(hops, cap, dem, w, max_iter=5).averaged == 2  # iterates 4 and 5
    assert credit_rates(hops, cap, dem, w, max_iter=10).averaged == 5  # the last half: 6 to 10
    assert credit_rates(hops, cap, dem, w, max_iter=10, average_from=10).averaged == 0


def test_solves_that_stop_are_not_averaged():
    for sc in S.SCENARIOS:
        p = S.paths(sc)
        hops = Hops.from_paths(p["indptr"], p["links"], p["n_links"], p["vl"], p["queue"], n_vls=len(sc.vl_weights))
        args = (hops, np.ones(p["n_links"]), p["demand"], np.array(sc.vl_weights))
        res, off = credit_rates(*args), credit_rates(*args, average_from=401)
        assert res.converged and res.averaged == 0, sc.name
        for field in ("rate", "link_rate", "link_cap", "held", "root", "depart", "lane_cap"):
            assert np.array_equal(getattr(res, field), getattr(off, field)), (sc.name, field)
    hops, cap, dem, w = random_case(7, 50)
    res = credit_rates(hops, cap, dem, w, average_from=10)  # stops at 81 iterations, after averaging began
    assert res.converged and res.averaged == 0
    assert np.array_equal(res.rate, credit_rates(hops, cap, dem, w, average_from=401).rate)
