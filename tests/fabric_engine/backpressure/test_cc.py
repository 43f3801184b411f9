"""InfiniBand congestion control on top of the credit model (fabric_engine.backpressure.cc), on the BookSim
scenarios' fat tree and on cases worked by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from fabric_engine.backpressure import Hops, credit_rates
from fabric_engine.backpressure.cc import FAIR, MARKING, NOT_THROTTLED, SHARED, TABLE, cc_rates
from fabric_engine.backpressure.cc_params import CCTI_TIMER_UNIT_S, CongestionControl
from fabric_engine.errors import FabricEngineError, SolverError
from fabric_engine.flows import max_min_fair
from tests.reference.congestion import scenarios as S

GBPS = 100.0  # one unit of capacity
PACKET = 4096


def control(**kw) -> CongestionControl:
    """:meth:`CongestionControl.typical` (timer 10, increase 1, threshold 8, every packet marked, a 128-entry table
    down to 1/58 of the line rate) with ``kw`` changed."""
    return dataclasses.replace(CongestionControl.typical(), **kw)


def issue_case(sl=None):
    sc = S.SCENARIOS[0]  # incast_victims_shared: 8 senders to h0, victims beside 3 and 1 of them
    assert sc.name == "incast_victims_shared"
    p = S.paths(sc)
    hops = Hops.from_paths(p["indptr"], p["links"], p["n_links"], p["vl"], p["queue"], n_vls=1)
    return sc, p, hops


def by_flow(sc, p, rates) -> dict[str, float]:
    return dict(zip([f.name for f in sc.flows], np.bincount(p["owner"], rates, minlength=len(sc.flows)), strict=True))


def maxmin(p, hops) -> np.ndarray:
    inc = sp.csr_matrix((np.ones(len(hops.row)), (hops.row, hops.out)), shape=(hops.rows, hops.n_links))
    return max_min_fair(inc, np.ones(p["n_links"]), p["demand"])


def test_with_congestion_control_off_the_rates_are_the_credit_models_and_nothing_is_marked():
    sc, p, hops = issue_case()
    base = credit_rates(hops, np.ones(p["n_links"]), p["demand"])
    for cc in (CongestionControl(), control(enabled=False), control(threshold=0), control(ca_control_map=0)):
        r = cc_rates(hops, np.ones(p["n_links"]), p["demand"], cc, unit_gbps=GBPS)
        np.testing.assert_array_equal(r.rate, base.rate)
        assert r.fecn_marked.sum() == r.becn.sum() == 0 and (r.held_by == NOT_THROTTLED).all() and r.rounds == 0


def test_effective_congestion_control_gives_every_flow_its_fair_share_and_frees_the_victims():
    sc, p, hops = issue_case()
    cap = np.ones(p["n_links"])
    credit = by_flow(sc, p, credit_rates(hops, cap, p["demand"]).rate)
    r = cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS)
    got, fair = by_flow(sc, p, r.rate), by_flow(sc, p, maxmin(p, hops))
    for name in got:
        assert got[name] == pytest.approx(fair[name], abs=1e-3), name
    # the victims beside the incast get back what max-min gives them (credit: 0.056 and 0.167)
    assert got["victim3_h7"] == pytest.approx(0.625, abs=1e-3) and credit["victim3_h7"] < 0.06
    assert got["victim1_h9"] == pytest.approx(0.875, abs=1e-3) and credit["victim1_h9"] < 0.17
    # what it costs: the sender on the receiver's own leaf loses the arbiter's favour (0.5 -> 1/8)
    assert credit["incast_h1"] == pytest.approx(0.5, abs=1e-3) and got["incast_h1"] == pytest.approx(0.125, abs=1e-3)
    hot = np.array([f.role == "hot" for f in sc.flows])[p["owner"]]
    assert (r.held_by[hot] == FAIR).all()


def test_sparse_marking_holds_the_incast_above_its_share_and_the_tree_partly_stays():
    sc, p, hops = issue_case()
    cap = np.ones(p["n_links"])
    # one mark in 4 packets: a flow at x of 100 Gbit/s gets x * 3.05e6 / 4 BECNs a second; the timer takes one
    # CCTI step each 10.24 us, so marking holds a flow down to x_cc = 4 / (3.05e6 * 10.24e-6) = 0.128 only
    cc = control(marking_rate=3)
    x_cc = 4 / (GBPS * 1e9 / (8 * PACKET) * 10 * CCTI_TIMER_UNIT_S)
    r = cc_rates(hops, cap, p["demand"], cc, unit_gbps=GBPS, packet_bytes=PACKET)
    hot = np.array([f.role == "hot" for f in sc.flows])[p["owner"]]
    assert (r.held_by[hot] == MARKING).all()
    np.testing.assert_allclose(r.target[hot], x_cc)
    assert 0.125 < x_cc < 0.13
    got = by_flow(sc, p, r.rate)
    effective = by_flow(sc, p, cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS).rate)
    base = by_flow(sc, p, credit_rates(hops, cap, p["demand"]).rate)
    assert base["victim3_h7"] < got["victim3_h7"] < effective["victim3_h7"]
    assert r.credit.root.any()
    # marking so sparse that it never holds anything back: the credit model's rates
    never = cc_rates(hops, cap, p["demand"], control(marking_rate=1000), unit_gbps=GBPS)
    np.testing.assert_allclose(never.rate, credit_rates(hops, cap, p["demand"]).rate, atol=1e-9)


def test_a_table_that_ends_early_holds_the_incast_at_its_last_rate():
    sc, p, hops = issue_case()
    r = cc_rates(hops, np.ones(p["n_links"]), p["demand"], control(cct=((0, 0), (0, 1), (1, 3))), unit_gbps=GBPS)
    hot = np.array([f.role == "hot" for f in sc.flows])[p["owner"]]
    assert (r.held_by[hot] == TABLE).all() and (r.ccti[hot] == 2).all()
    np.testing.assert_allclose(r.target[hot], 2 / 5)  # 2**1 / (2**1 + 3)
    # pinned at the limit, the sources get every mark: one a packet at 0.4 of the line at most
    assert (r.becn[hot] > 1 / (10 * CCTI_TIMER_UNIT_S)).all()


def test_counters_balance_the_ccti_and_are_counted_where_perfquery_reads_them():
    sc, p, hops = issue_case()
    r = cc_rates(hops, np.ones(p["n_links"]), p["demand"], control(ccti_timer=(20,) * 16, ccti_increase=(2,) * 16),
                 unit_gbps=GBPS)
    throttled = r.held_by != NOT_THROTTLED
    balance = 1 / (2 * 20 * CCTI_TIMER_UNIT_S)
    np.testing.assert_allclose(r.becn[throttled], balance)
    assert (r.becn[~throttled] == 0).all()
    total = r.becn.sum()
    assert r.fecn_marked.sum() == pytest.approx(total) == r.fecn_rcv.sum() == r.becn_rcv.sum()
    ids = S.link_ids()
    # marks are made at marking ports only (a packet once: at the first on its path) and h0 receives the incast's
    assert (r.fecn_marked[~r.marking] == 0).all() and r.fecn_marked[ids[("down", 0, 0)]] >= balance
    assert r.fecn_rcv[ids[("down", 0, 0)]] == pytest.approx(8 * balance)
    assert r.becn_rcv[ids[("up", 4, 1)]] == pytest.approx(balance)  # a sender's own link: its BECNs
    assert r.marking[ids[("down", 0, 0)]] and not r.marking[ids[("up", 4, 1)]], "a host's port never marks"


def test_an_sl_without_congestion_control_is_not_throttled_and_ccti_min_caps_every_flow_of_its_sl():
    sc, p, hops = issue_case()
    cap = np.ones(p["n_links"])
    sl = np.ones(hops.rows, np.int64)
    off = cc_rates(hops, cap, p["demand"], control(ca_control_map=0x1), sl=sl, unit_gbps=GBPS)
    np.testing.assert_array_equal(off.rate, credit_rates(hops, cap, p["demand"]).rate)
    capped = cc_rates(hops, cap, p["demand"], control(ccti_min=(40,) * 16), unit_gbps=GBPS)
    top = control().rate_steps()[40]
    cold = np.array([f.role == "unaffected" for f in sc.flows])[p["owner"]]
    np.testing.assert_allclose(capped.rate[cold], top)


def test_victim_ports_mark_too():
    sc, p, hops = issue_case()
    cap = np.ones(p["n_links"])
    base = credit_rates(hops, cap, p["demand"])
    victim = base.held.copy()
    r = cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS, victim=victim, credit=base)
    assert (r.marking & victim).any()


def test_bad_input_is_refused_naming_the_field():
    sc, p, hops = issue_case()
    with pytest.raises(SolverError, match="sl needs"):
        cc_rates(hops, np.ones(p["n_links"]), p["demand"], control(), sl=np.zeros(2, np.int64))
    with pytest.raises(FabricEngineError, match="cc_sw_cong_setting_threshold 16"):
        cc_rates(hops, np.ones(p["n_links"]), p["demand"], control(threshold=16))
    with pytest.raises(FabricEngineError, match="ccti_timer needs 16 SLs"):
        control(ccti_timer=(1, 2)).validate()


def test_rate_steps_follow_the_ibta_delay():
    steps = control(cct=((0, 0), (0, 1), (2, 1), (1, 6), (3, 40))).rate_steps()
    # 2**s / (2**s + m), never rising with the index
    np.testing.assert_allclose(steps, [1.0, 0.5, 0.5, 0.25, 8 / 48])


def test_per_sl_and_port_control_holds_a_senders_other_flows_at_its_marked_flows_rate():
    # four remote senders to h0; h4 also writes to a cold host h13 over its own link (demands 1: greedy)
    flows = tuple(S.Flow(f"incast_h{s}", s, 0, "hot") for s in (4, 5, 8, 12)) + (S.Flow("other_h4", 4, 13, "other"),)
    sc = S.Scenario("port_control", "per-port control", flows)
    p = S.paths(sc)
    hops = Hops.from_paths(p["indptr"], p["links"], p["n_links"], p["vl"], p["queue"], n_vls=1)
    cap = np.ones(p["n_links"])
    per_flow = cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS)
    per_port = cc_rates(hops, cap, p["demand"], control(ca_port_control=1), unit_gbps=GBPS)
    got_flow, got_port = by_flow(sc, p, per_flow.rate), by_flow(sc, p, per_port.rate)
    # per QP: the incast flows held at h0's fair share (1/4), h4's other flow takes the rest of h4's link
    assert got_flow["incast_h4"] == pytest.approx(0.25, abs=1e-3) and got_flow["other_h4"] == pytest.approx(0.75,
                                                                                                          abs=1e-3)
    # per SL and port: h4's CCTI holds its other flow at the marked flow's rate too
    assert got_port["incast_h4"] == pytest.approx(0.25, abs=1e-3) and got_port["other_h4"] == pytest.approx(0.25,
                                                                                                          abs=1e-3)
    assert per_port.held_by[4] == SHARED and per_flow.held_by[4] == NOT_THROTTLED
    assert per_port.becn[4] == 0, "not marked itself: no BECN of its own"
    # on another SL it has its own CCTI
    sl = np.array([0, 0, 0, 0, 1])
    other_sl = cc_rates(hops, cap, p["demand"], control(ca_port_control=1), sl=sl, unit_gbps=GBPS)
    assert by_flow(sc, p, other_sl.rate)["other_h4"] == pytest.approx(0.75, abs=1e-3)


def test_a_kept_cache_gives_what_a_fresh_solve_gives_and_follows_changed_capacities_and_sls():
    """What CC makes of each row is kept between calls on the same hops, and made again when an input changes."""
    sc, p, hops = issue_case()
    cap = np.ones(p["n_links"])
    cache: dict = {}
    fields_ = ("rate", "target", "held_by", "ccti", "becn", "fecn_marked", "fecn_rcv", "becn_rcv", "marking")

    def same(a, b):
        for name in fields_:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)

    same(cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS, cache=cache),
         cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS))
    kept = cache["rows"]
    cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS, cache=cache)
    assert cache["rows"] is kept  # nothing changed: not made again
    half = cap.copy()
    half[S.link_ids()[("up", 4, 1)]] = 0.5  # a sender's line rate halves
    same(cc_rates(hops, half, p["demand"], control(), unit_gbps=GBPS, cache=cache),
         cc_rates(hops, half, p["demand"], control(), unit_gbps=GBPS))
    sl = np.ones(hops.rows, np.int64)
    same(cc_rates(hops, cap, p["demand"], control(ca_control_map=0x1), sl=sl, unit_gbps=GBPS, cache=cache),
         cc_rates(hops, cap, p["demand"], control(ca_control_map=0x1), sl=sl, unit_gbps=GBPS))
    same(cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS, cache=cache),
         cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS))


def test_given_fair_shares_are_used_as_the_rates_effective_control_holds_flows_at():
    sc, p, hops = issue_case()
    cap = np.ones(p["n_links"])
    fair = maxmin(p, hops)
    np.testing.assert_array_equal(cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS, fair=fair).rate,
                                  cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS).rate)
    lower = cc_rates(hops, cap, p["demand"], control(), unit_gbps=GBPS, fair=fair / 2)
    throttled = lower.held_by == FAIR
    assert throttled.any()
    np.testing.assert_allclose(lower.target[throttled], fair[throttled] / 2)
