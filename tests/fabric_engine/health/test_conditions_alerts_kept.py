"""Open health conditions' alerts are built again only when what they show changed (fabric_engine.health.conditions):
an unchanged open condition gives the same alert, a changed figure or a renamed node a new one."""

from __future__ import annotations

import numpy as np

from fabric_engine.health.conditions import HealthConditions, HealthRules
from fabric_engine.health.grade import ERROR, NORMAL, WARNING

from .test_conditions import health


def test_an_unchanged_open_condition_gives_the_same_alert_and_a_changed_one_a_new_one():
    hc = HealthConditions(HealthRules(clear_gradings=3))
    [first] = hc.update(health(grade=(ERROR, NORMAL, NORMAL)), 10.0)
    [again] = hc.update(health(grade=(ERROR, NORMAL, NORMAL)), 20.0)
    assert again is first  # same severity, start, count and figures
    [warned] = hc.update(health(grade=(WARNING, NORMAL, NORMAL)), 30.0)
    assert warned is not first and warned["severity"] == "warning" and warned["since"] == 10.0
    alerts = hc.update(health(grade=(WARNING, NORMAL, NORMAL), temp=(40.0, 75.0, 40.0)), 40.0)
    assert [a["kind"] for a in alerts] == ["ber_high", "module_temperature"]
    assert alerts[0] is warned  # the other port's new condition leaves it as it was
    assert hc.conditions()[0] is warned and hc.conditions() is not hc.conditions()  # a new list each call


def test_new_node_names_build_the_alerts_again():
    hc = HealthConditions()
    [a] = hc.update(health(grade=(ERROR, NORMAL, NORMAL)), 10.0)
    ph = health(grade=(ERROR, NORMAL, NORMAL))
    renamed = type(ph)(**{**ph.__dict__, "node_name": ["leafA", "gpu0001", "spine01"]})
    [b] = hc.update(renamed, 20.0)
    assert b is not a and b["port"] == "leafA port 3" and b["message"].startswith("leafA port 3: ")


def test_a_port_not_read_keeps_its_condition_and_alert():
    hc = HealthConditions(HealthRules(clear_gradings=2))
    [a] = hc.update(health(grade=(ERROR, NORMAL, NORMAL)), 10.0)
    [b] = hc.update(health(order=(1, 2)), 20.0)
    assert (b["kind"], b["since"], b["count"]) == ("ber_high", 10.0, 1)
    assert b["port"] == "0x000000000000000a port 3"  # not read: named by its GUID, a new alert
    assert np.array_equal(hc.active.any(axis=1), [True, False, False])


def _with_raw(ph, raw: float):
    return type(ph)(**{**ph.__dict__, "raw_ber": np.full(3, raw)})


def test_an_open_condition_with_new_figures_gives_the_alert_a_fresh_build_gives():
    def run(rename: bool) -> tuple[dict, dict]:
        hc = HealthConditions(HealthRules(clear_gradings=3))
        [first] = hc.update(health(grade=(ERROR, NORMAL, NORMAL)), 10.0)
        ph = _with_raw(health(grade=(NORMAL, NORMAL, NORMAL)), 2.5e-15)  # back to normal: its calm run, new figures
        if rename:  # other names (equal ones): every alert built afresh
            ph = type(ph)(**{**ph.__dict__, "node_name": list(ph.node_name)})
        [again] = hc.update(ph, 20.0)
        return first, again

    first, refigured = run(rename=False)
    _, fresh = run(rename=True)
    assert refigured is not first and refigured["message"] == (
        "leaf01 port 3: high bit error rate (raw 2.50e-15, effective 1.00e-13; clears after 3 normal gradings)")
    assert refigured["evidence"] == {"raw_ber": 2.5e-15, "effective_ber": 1e-13, "clear_gradings": 3}
    assert list(refigured.items()) == list(fresh.items())  # the same keys in the same order, the same values
    assert (refigured["since"], refigured["count"], refigured["severity"]) == (10.0, 1, "critical")
