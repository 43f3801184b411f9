"""Emulated link health (fabric_engine.health.emulated): each fault's readings over time, graded as the readers' are."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fabric_engine.health import grade, thresholds
from fabric_engine.health.emulated import UPTIME_S, HealthModel, effective_ber
from fabric_engine.health.emulated_faults import faults_from_spec
from fabric_engine.health.records import code, merge
from fabric_engine.scenario import DEMO_SPEC, build_fabric
from fabric_engine.topology.generate import fat_tree

TH = thresholds.load()


@pytest.fixture(scope="module")
def tiny():
    """4 leaves x 2 hosts, 2 spines, NDR, 3 m cables."""
    return fat_tree(hosts=8, radix=4, speed="NDR")


def model(fabric, faults, seed=0):
    return HealthModel(fabric, faults_from_spec(fabric, faults), seed=seed)


def row(fabric, node: str, port: int) -> int:
    """Record row of a cable end (c: the a end of cable c, L + c: its b end)."""
    return int(fabric.out_link(fabric.node(node), port))


def raw_at(limit: float, fec: str) -> float:
    """The raw BER whose effective BER under ``fec`` is ``limit`` (bisection in log space)."""
    lo, hi = -12.0, math.log10(0.5)
    for _ in range(200):
        mid = (lo + hi) / 2
        if effective_ber(np.array([10 ** mid]), np.array([code("fec", fec)]))[0] < limit:
            lo = mid
        else:
            hi = mid
    return 10 ** lo


def test_healthy_fabric_reads_normal_on_every_cable_end(tiny):
    rec = model(tiny, []).readings(0.0, 1000.0)
    assert len(rec) == 2 * tiny.num_links and len(np.unique(rec.keys())) == len(rec)
    g = grade.grade_ber(rec, TH)
    assert (g["grade"] == grade.NORMAL).all()
    m = grade.module_status(rec, TH)
    assert m["module"].all() and not m["alarm"].any() and not m["warning"].any()
    assert set(rec.names("fec")) == {"ll_rs_fec_plr"} and set(rec.names("cable")) == {"dac"}
    assert (rec["window_s"] == UPTIME_S).all() and (rec["t"] == 1000.0).all() and (rec["up"] == 1).all()
    s = grade.summary(rec, TH)
    assert s["ber"] == {"normal": len(rec), "warning": 0, "error": 0, "unknown": 0} and s["links_down"] == 0
    assert merge([rec]).port.tolist() == rec.port.tolist()  # reads like any reader's rows


def test_ber_rising_climbs_log_linearly_and_grades_warning_then_error_on_time(tiny):
    spec = {"kind": "ber_rising", "port": "leaf01 3", "from": 6e-5, "to": 3e-4, "over_s": 1800, "start_s": 100}
    m = model(tiny, [spec])
    r = row(tiny, "leaf01", 3)
    raws = {t: m.readings(t, t)["raw_ber"][r] for t in (0.0, 100.0, 1000.0, 1900.0, 5000.0)}
    assert raws[0.0] == raws[100.0] == pytest.approx(6e-5)
    assert raws[1000.0] == pytest.approx(6e-5 * 5 ** 0.5)
    assert raws[1900.0] == raws[5000.0] == pytest.approx(3e-4)
    # The NDR low-latency FEC row grades the effective BER: normal <= 1e-12 < warning < 1e-11 <= error.
    limits = TH.ber_limits("effective", np.array([code("speed", "NDR")]), np.array([code("fec", "ll_rs_fec_plr")]),
                           np.array([code("cable", "dac")]))[0]
    t_warn, t_err = (100 + 1800 * math.log(raw_at(lim, "ll_rs_fec_plr") / 6e-5) / math.log(5) for lim in limits[:2])
    assert 100 < t_warn < t_err < 1900
    expect = [(t_warn - 2, grade.NORMAL), (t_warn + 2, grade.WARNING), (t_err - 2, grade.WARNING),
              (t_err + 2, grade.ERROR), (5000.0, grade.ERROR)]
    for t, want in expect:
        rec = m.readings(t, t)
        g = grade.grade_ber(rec, TH)["grade"]
        assert g[r] == want, t
        assert (np.delete(g, r) == grade.NORMAL).all()  # the other end and every other port stay healthy


def test_a_link_fault_reads_on_both_ends(tiny):
    m = model(tiny, [{"kind": "ber_rising", "link": "leaf01 3", "from": 1e-6, "to": 1e-3, "over_s": 10}])
    rec = m.readings(20.0, 20.0)
    d = row(tiny, "leaf01", 3)
    both = [d % tiny.num_links, d % tiny.num_links + tiny.num_links]
    assert np.flatnonzero(rec["raw_ber"] == 1e-3).tolist() == sorted(both)


def test_hot_module_reads_its_temperature_from_its_start(tiny):
    m = model(tiny, [{"kind": "hot_module", "port": "spine01 1", "celsius": 78, "start_s": 50},
                     {"kind": "hot_module", "port": "spine02 2", "celsius": 85}])
    warm, hot = row(tiny, "spine01", 1), row(tiny, "spine02", 2)
    before, after = m.readings(49.0, 49.0), m.readings(50.0, 50.0)
    assert 35 <= before["temp"][warm] <= 55 and after["temp"][warm] == 78 and before["temp"][hot] == 85
    s0, s1 = grade.module_status(before, TH), grade.module_status(after, TH)
    assert np.flatnonzero(s0["alarm"]).tolist() == [hot] and not s0["warning"].any()
    # The repository's fallback: warning above 70 C, alarm above 80 C.
    assert np.flatnonzero(s1["warning"]).tolist() == [warm] and np.flatnonzero(s1["alarm"]).tolist() == [hot]


def test_flapping_goes_down_each_period_counts_downs_and_restarts_the_window(tiny):
    m = model(tiny, [{"kind": "flapping", "port": "leaf02 1", "period_s": 120, "down_s": 9, "start_s": 30}])
    d = row(tiny, "leaf02", 1)
    ends = sorted([d % tiny.num_links, d % tiny.num_links + tiny.num_links])
    seen = {}
    for t in (0.0, 29.0, 30.0, 38.0, 39.0, 100.0, 150.0, 158.0, 159.0, 400.0):
        rec = m.readings(t, t)
        seen[t] = (rec["up"][ends].tolist(), rec["link_down"][ends].tolist(), float(rec["window_s"][ends[0]]))
        assert (np.delete(rec["up"], ends) == 1).all() and (np.delete(rec["link_down"], ends) == 0).all()
    assert seen[0.0] == ([1, 1], [0, 0], UPTIME_S) and seen[29.0] == ([1, 1], [0, 0], UPTIME_S + 29)
    assert seen[30.0][:2] == ([0, 0], [1, 1]) and seen[38.0][:2] == ([0, 0], [1, 1])
    assert seen[39.0] == ([1, 1], [1, 1], 0.0) and seen[100.0] == ([1, 1], [1, 1], 61.0)
    assert seen[150.0][:2] == ([0, 0], [2, 2]) and seen[158.0][0] == [0, 0] and seen[159.0] == ([1, 1], [2, 2], 0.0)
    assert seen[400.0] == ([1, 1], [4, 4], 400.0 - 399.0)
    g = grade.grade_ber(m.readings(100.0, 100.0), TH)["grade"]
    assert (g[ends] == grade.UNKNOWN).all()  # up 61 s: not long enough to measure
    assert grade.summary(m.readings(30.0, 30.0), TH)["links_down"] == 2
    cables, up = m.down(29.0, 1.0)
    assert cables.size == 0
    for t0, frac in ((30.0, 0.0), (38.0, 0.0), (38.5, 0.5), (39.0, None)):
        cables, up = m.down(t0, 1.0)
        assert (cables.tolist(), up.tolist()) == (([d % tiny.num_links], [frac]) if frac is not None else ([], []))


def test_cable_swap_changes_the_serial_once_and_earlier_readings_keep_theirs(tiny):
    m = model(tiny, [{"kind": "cable_swap", "port": "leaf03 2", "at_s": 300}])
    r = row(tiny, "leaf03", 2)
    readings = [m.readings(float(t), float(t)) for t in range(0, 600, 50)]
    serials = [rec["sn"][r] for rec in readings]
    changes = [i for i in range(1, len(serials)) if serials[i] != serials[i - 1]]
    assert changes == [6] and serials[0].startswith("EMU") and serials[6] == serials[0] + "-R"
    assert all((np.delete(rec["sn"], r) == np.delete(readings[0]["sn"], r)).all() for rec in readings)
    assert len(set(readings[0]["sn"])) == len(readings[0])  # every module its own serial


def test_unchanged_columns_are_shared_read_only_between_ticks(tiny):
    m = model(tiny, [{"kind": "hot_module", "port": "spine01 1", "celsius": 78, "start_s": 10}])
    a, b, c = (m.readings(t, t) for t in (0.0, 5.0, 20.0))
    assert a["temp"] is b["temp"] and b["temp"] is not c["temp"] and a["sn"] is c["sn"]
    assert a["temp"][row(tiny, "spine01", 1)] != 78
    with pytest.raises(ValueError):
        c["temp"][0] = 1.0


def test_the_demo_has_one_of_each_fault():
    f = build_fabric(DEMO_SPEC["topology"])
    faults = faults_from_spec(f, DEMO_SPEC["health"])
    assert sorted(x.kind for x in faults) == ["ber_rising", "cable_swap", "flapping", "hot_module"]
    m = HealthModel(f, faults, seed=DEMO_SPEC["seed"])
    early, late = m.readings(0.0, 0.0), m.readings(600.0, 600.0)
    s0, s1 = grade.summary(early, TH), grade.summary(late, TH)
    assert s0["ber"]["warning"] == s0["ber"]["error"] == 0 and s0["module_warnings"] == 1
    assert s1["ber"]["error"] == 2  # both ends of the rising cable, by 600 s
    assert (early["sn"] != late["sn"]).sum() == 2 and grade.summary(m.readings(30.0, 30.0), TH)["links_down"] == 2
