"""Link health conditions with hysteresis (fabric_engine.health.conditions): each kind opens, holds and clears by
the evidence, keyed by port identity; downs longer than the job-killing time alert once per episode."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.health.conditions import HealthConditions, HealthRules, PortHealth
from fabric_engine.health.downs import DownTracker
from fabric_engine.health.grade import ERROR, NORMAL, UNKNOWN, WARNING

NAMES = ["leaf01", "gpu0001", "spine01"]
G = np.array([0xA, 0xB, 0xC], np.uint64)
P = np.array([3, 1, 7])
TEMP_TH = [-10.0, 0.0, 70.0, 80.0]
POWER_TH = [-10.0, -8.0, 3.0, 5.0]


def health(grade=(NORMAL,) * 3, temp=(40.0,) * 3, rx=(0.0,) * 3, downs=(0,) * 3, order=(0, 1, 2)) -> PortHealth:
    """Three ports (leaf01 3, gpu0001 1, spine01 7), rows in ``order``."""
    o = np.array(order)
    n = o.size
    lanes = np.repeat(np.array(rx, float)[:, None], 4, 1)
    return PortHealth(G[o], P[o], o.astype(np.int64), NAMES, np.array(grade, np.int8)[o], np.full(n, 1e-6),
                      np.full(n, 1e-13), np.array(temp, float)[o], np.tile(TEMP_TH, (n, 1)), lanes[o],
                      np.tile(POWER_TH, (n, 1)), np.zeros((n, 4)), np.tile(POWER_TH, (n, 1)),
                      np.array(downs, np.int64)[o])


def kinds(alerts: list[dict]) -> set[tuple[str, str, str]]:
    return {(a["kind"], a["port"], a["severity"]) for a in alerts}


def test_ber_high_opens_holds_through_unknown_and_clears_after_k_normal_gradings():
    hc = HealthConditions(HealthRules(clear_gradings=3))
    assert hc.update(health(), 0.0) == []
    [a] = hc.update(health(grade=(ERROR, NORMAL, NORMAL)), 10.0)
    assert (a["kind"], a["severity"], a["port"], a["guid"], a["ports"]) == (
        "ber_high", "critical", "leaf01 port 3", "0x000000000000000a", [3])
    assert a["condition"] and a["since"] == 10.0 and a["count"] == 1
    assert a["text"] == "{0} port 3: " + a["message"].split(": ", 1)[1] and a["nodes"] == [0]
    assert a["evidence"]["raw_ber"] == pytest.approx(1e-6) and a["evidence"]["effective_ber"] == pytest.approx(1e-13)
    # a warning grading keeps it open, now a warning; unknown neither clears nor counts as normal
    assert kinds(hc.update(health(grade=(WARNING, NORMAL, NORMAL)), 20.0)) == {("ber_high", "leaf01 port 3", "warning")}
    for t in (30.0, 40.0):
        [a] = hc.update(health(), t)
        assert a["since"] == 10.0
    assert hc.update(health(grade=(UNKNOWN, NORMAL, NORMAL)), 45.0)[0]["since"] == 10.0
    assert hc.update(health(), 50.0) == []  # the third normal grading in a row
    # a bad grading between normal ones starts the count again; a new occurrence counts 2
    hc.update(health(grade=(WARNING, NORMAL, NORMAL)), 60.0)
    hc.update(health(), 70.0)
    hc.update(health(), 80.0)
    [a] = hc.update(health(grade=(WARNING, NORMAL, NORMAL)), 90.0)
    assert a["since"] == 60.0 and a["count"] == 2
    for t in (100.0, 110.0, 120.0):
        hc.update(health(), t)
    assert hc.update(health(grade=(ERROR, NORMAL, NORMAL)), 130.0)[0]["count"] == 3


def test_module_temperature_warning_then_alarm_clears_only_under_warning_minus_the_margin():
    hc = HealthConditions(HealthRules(temp_margin_c=3.0))
    [a] = hc.update(health(temp=(40.0, 40.0, 72.0)), 0.0)
    assert (a["kind"], a["port"], a["severity"]) == ("module_temperature", "spine01 port 7", "warning")
    assert a["evidence"] == {"temperature_c": 72.0, "warning_c": 70.0, "alarm_c": 80.0, "margin_c": 3.0}
    assert "72.0 °C" in a["message"]
    assert hc.update(health(temp=(40.0, 40.0, 81.0)), 10.0)[0]["severity"] == "critical"
    for t, temp in ((20.0, 69.0), (30.0, 67.5), (35.0, np.nan)):  # under the warning, not under 67: still open
        [a] = hc.update(health(temp=(40.0, 40.0, temp)), t)
        assert a["since"] == 0.0
    assert "67.5 °C" in a["message"]  # the last temperature read
    assert hc.update(health(temp=(40.0, 40.0, 66.9)), 40.0) == []


def test_module_power_outside_the_range_clears_after_k_gradings_in_range():
    hc = HealthConditions(HealthRules(clear_gradings=2))
    [a] = hc.update(health(rx=(0.0, -9.0, 0.0)), 0.0)
    assert (a["kind"], a["port"], a["severity"]) == ("module_power", "gpu0001 port 1", "warning")
    assert hc.update(health(rx=(0.0, -11.0, 0.0)), 5.0)[0]["severity"] == "critical"
    assert len(hc.update(health(), 10.0)) == 1
    assert hc.update(health(), 20.0) == []


def test_repeated_downs_lasts_while_the_24h_count_holds():
    hc = HealthConditions()
    assert hc.update(health(downs=(1, 0, 0)), 0.0) == []
    [a] = hc.update(health(downs=(2, 0, 0)), 10.0)
    assert (a["kind"], a["port"], a["severity"]) == ("repeated_downs", "leaf01 port 3", "warning")
    assert a["evidence"] == {"downs_24h": 2, "repeated": 2} and "2 downs in 24 h" in a["message"]
    assert hc.update(health(downs=(3, 0, 0)), 20.0)[0]["since"] == 10.0
    assert hc.update(health(downs=(-1, 0, 0)), 25.0)[0]["since"] == 10.0  # not known: holds
    assert hc.update(health(downs=(1, 0, 0)), 30.0) == []


def test_state_follows_the_port_identity_when_rows_are_reordered_or_missing():
    hc = HealthConditions()
    hc.update(health(grade=(ERROR, NORMAL, NORMAL), temp=(40.0, 75.0, 40.0)), 0.0)
    # the same ports in another order, the HCA's module now cool and leaf01 normal
    alerts = hc.update(health(grade=(NORMAL, NORMAL, NORMAL), order=(2, 0, 1)), 10.0)
    assert kinds(alerts) == {("ber_high", "leaf01 port 3", "critical")}
    # leaf01 not read at all: it keeps its condition, named by its GUID when its node is not in the fabric
    ph = health(order=(1, 2))
    alerts = hc.update(ph, 20.0)
    assert [(a["kind"], a["port"], a["since"]) for a in alerts] == [("ber_high", "0x000000000000000a port 3", 0.0)]
    assert alerts[0]["nodes"] == [-1]
    assert len(hc.update(health(order=(0, 1)), 30.0)) == 1  # its second normal grading (20 did not read it)
    assert hc.update(health(order=(1, 0)), 40.0) == []  # the third


def test_bad_input_is_a_value_error():
    hc = HealthConditions()
    good = health()
    with pytest.raises(ValueError, match="port"):
        hc.update(PortHealth(**{**good.__dict__, "port": np.array([1, 2])}), 0.0)
    with pytest.raises(ValueError, match="temp_th"):
        hc.update(PortHealth(**{**good.__dict__, "temp_th": np.zeros((3, 3))}), 0.0)
    with pytest.raises(ValueError, match="guid"):
        hc.update(PortHealth(**{**good.__dict__, "guid": np.array([1.5, 2.5, 3.5])}), 0.0)
    with pytest.raises(ValueError, match="port numbers"):
        hc.update(PortHealth(**{**good.__dict__, "port": np.array([1, 2, 300])}), 0.0)
    with pytest.raises(ValueError, match="twice"):
        hc.update(health(order=(0, 0, 1)), 0.0)
    with pytest.raises(ValueError):
        HealthRules(clear_gradings=0)


def test_a_down_longer_than_the_job_killing_time_alerts_once_per_episode():
    tr = DownTracker()
    hc = HealthConditions()
    hc.update(health(), 0.0)

    def sweep(t, up):
        tr.observe(t, G, P, np.array(up), np.zeros(3))

    sweep(0, [1, 1, 1])
    sweep(2, [1, 0, 1])
    sweep(5, [1, 0, 1])
    assert hc.downs_long(tr) == []  # 3 s proven: under 7 s
    sweep(12, [1, 0, 1])
    [a] = hc.downs_long(tr)
    assert (a["kind"], a["severity"], a["port"], a["end"], a["start"]) == (
        "link_down_long", "critical", "gpu0001 port 1", None, 2.0)
    assert a["t"] == 2.0 and a["duration_min_s"] == 10.0 and "still down" in a["message"]
    assert a["text"].startswith("{0} port 1: link down longer than the job-killing time 7 s") and a["nodes"] == [1]
    sweep(14, [1, 1, 1])
    assert hc.downs_long(tr) == []  # the same episode, now over: not again
    sweep(20, [1, 0, 1])
    sweep(21, [1, 1, 1])
    assert hc.downs_long(tr) == []  # a short down
    sweep(30, [1, 0, 1])
    sweep(38, [1, 0, 1])
    sweep(40, [1, 1, 1])
    [b] = hc.downs_long(tr)  # the next long one, seen only once over: its interval
    assert (b["t"], b["start"], b["end"], b["duration_min_s"], b["duration_max_s"]) == (30.0, 30.0, 40.0, 8.0, 19.0)
    assert "(8 .. 19 s)" in b["message"] and hc.downs_long(tr) == []
