"""Counter conditions with hysteresis (:mod:`fabric_engine.telemetry.counter_conditions`)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.telemetry.counter_conditions import ConditionRules, CounterConditions, PortSweep

NAMES = ["h0", "h1", "h2", "h3"]


def sweep(ports: list[tuple[int, int, int]], ratio=None, flaps=None, symbol=None) -> PortSweep:
    """``ports``: (guid, port, node index) per entry; per-entry figures default to 0."""
    k = len(ports)
    z = np.zeros(k)
    g, p, n = (np.array(c) for c in zip(*ports, strict=True))
    return PortSweep(g.astype(np.uint64), p.astype(np.int64), n.astype(np.int64),
                     np.asarray(ratio if ratio is not None else z, float),
                     np.asarray(flaps if flaps is not None else z, float),
                     np.asarray(symbol if symbol is not None else z, float), np.full(k, 3), NAMES)


PORTS = [(0x10, 1, 0), (0x11, 1, 1), (0x12, 2, 2)]


def by_kind(found: list[dict]) -> dict[tuple[str, str], dict]:
    return {(c["kind"], c["port"]): c for c in found}


def test_an_error_rate_stays_with_one_since_and_clears_only_after_the_quiet_sweeps():
    cc = CounterConditions(ConditionRules(clear_sweeps=3))
    for k in range(3):
        found = cc.update(sweep(PORTS, ratio=[0, 2.0, 0]), 100.0 + k)
        (c,) = found
        assert (c["kind"], c["port"], c["since"], c["count"], c["nodes"], c["ports"], c["condition"]) == \
            ("error_rate", "h1 port 1", 100.0, 1, [1], [1], True)
        assert c["severity"] == "warning" and c["guid"] == "0x0000000000000011"
    for k in range(2):  # below the threshold, not yet for three sweeps
        (c,) = cc.update(sweep(PORTS), 103.0 + k)
        assert c["since"] == 100.0
    assert cc.update(sweep(PORTS), 105.0) == []


def test_a_bad_sweep_among_calm_ones_restarts_the_quiet_period_and_ten_times_is_critical():
    cc = CounterConditions(ConditionRules(clear_sweeps=2))
    cc.update(sweep(PORTS, ratio=[0, 2.0, 0]), 1.0)
    cc.update(sweep(PORTS), 2.0)
    (c,) = cc.update(sweep(PORTS, ratio=[0, 20.0, 0]), 3.0)
    assert (c["since"], c["severity"], c["count"]) == (1.0, "critical", 1)
    assert len(cc.update(sweep(PORTS), 4.0)) == 1 and cc.update(sweep(PORTS), 5.0) == []


def test_a_flapping_port_needs_k_flaps_in_the_window_and_clears_after_a_quiet_period():
    cc = CounterConditions(ConditionRules(clear_sweeps=2, flap_count=2, flap_window=3))
    assert cc.update(sweep(PORTS, flaps=[1, 0, 0]), 1.0) == []
    assert cc.update(sweep(PORTS), 2.0) == []
    (c,) = cc.update(sweep(PORTS, flaps=[1, 0, 0]), 3.0)  # two flaps within three sweeps
    assert (c["kind"], c["port"], c["since"]) == ("port_flapping", "h0 port 1", 3.0)
    assert len(cc.update(sweep(PORTS), 4.0)) == 1
    assert cc.update(sweep(PORTS), 5.0) == []
    # one flap far from the others is no flapping
    assert cc.update(sweep(PORTS, flaps=[1, 0, 0]), 6.0) == []


def test_symbol_errors_rising_over_consecutive_sweeps():
    cc = CounterConditions(ConditionRules(clear_sweeps=1, rising_sweeps=3))
    for t in (1.0, 2.0):
        assert cc.update(sweep(PORTS, symbol=[0, 0, 4]), t) == []
    (c,) = cc.update(sweep(PORTS, symbol=[0, 0, 4]), 3.0)
    assert (c["kind"], c["port"], c["since"]) == ("symbol_errors_rising", "h2 port 2", 3.0)
    assert len(cc.update(sweep(PORTS, symbol=[0, 0, 1]), 4.0)) == 1
    assert cc.update(sweep(PORTS), 5.0) == []


def test_recurrences_are_counted_per_condition():
    cc = CounterConditions(ConditionRules(clear_sweeps=1))
    for k in range(3):
        (c,) = cc.update(sweep(PORTS, ratio=[0, 0, 5.0]), 10.0 * k)
        assert (c["count"], c["since"]) == (k + 1, 10.0 * k)
        assert cc.update(sweep(PORTS), 10.0 * k + 1) == []


def test_identity_is_guid_and_port_across_a_topology_change_that_shifts_indices():
    cc = CounterConditions(ConditionRules(clear_sweeps=2))
    cc.update(sweep(PORTS, ratio=[0, 2.0, 0]), 1.0)
    # a new node comes first, the others shift: the condition follows GUID 0x11 port 1, now node 2
    shifted = [(0x01, 1, 0), (0x10, 1, 1), (0x11, 1, 2), (0x12, 2, 3)]
    (c,) = cc.update(sweep(shifted, ratio=[0, 0, 0, 0]), 2.0)
    assert (c["port"], c["nodes"], c["since"], c["guid"]) == ("h2 port 1", [2], 1.0, "0x0000000000000011")
    assert cc.update(sweep(shifted), 3.0) == []
    # a port missing from a sweep keeps its state: it neither clears nor counts as calm
    cc.update(sweep(shifted, ratio=[3.0, 0, 0, 0]), 4.0)
    (c,) = cc.update(sweep(shifted[1:]), 5.0)
    assert c["guid"] == "0x0000000000000001" and c["since"] == 4.0 and c["nodes"] == [-1]


def test_a_seeded_since_is_used_when_the_condition_shows_again():
    cc = CounterConditions()
    cc.seed("error_rate", 0x11, 1, 50.0)
    (c,) = cc.update(sweep(PORTS, ratio=[0, 2.0, 0]), 100.0)
    assert c["since"] == 50.0
    cc2 = CounterConditions()
    cc2.seed("error_rate", 0x11, 1, 50.0)
    assert cc2.update(sweep(PORTS), 100.0) == []
    (c,) = cc2.update(sweep(PORTS, ratio=[0, 2.0, 0]), 101.0)
    assert c["since"] == 101.0, "a seed not confirmed by the first sweep is dropped"


@pytest.mark.parametrize("field", ["clear_sweeps", "flap_count", "flap_window", "rising_sweeps"])
def test_rules_below_one_are_refused_naming_the_field(field):
    with pytest.raises(ValueError, match=field):
        ConditionRules(**{field: 0})


def test_each_condition_says_its_figures_and_the_rule_it_was_judged_by():
    cc = CounterConditions(ConditionRules(clear_sweeps=2, flap_count=2, flap_window=4, rising_sweeps=2))
    rated = sweep(PORTS, ratio=[0, 2.5, 0], flaps=[1, 0, 0], symbol=[0, 0, 7])
    rated = PortSweep(*[getattr(rated, f) for f in ("guid", "port", "node", "ratio", "flaps", "symbol", "worst",
                                                     "node_name")],
                      rate_per_min=np.array([0.0, 25.0, 0.0]), threshold_per_min=np.array([10.0, 10.0, 10.0]))
    cc.update(rated, 1.0)
    found = by_kind(cc.update(rated, 2.0))
    err = found["error_rate", "h1 port 1"]
    assert err["message"] == "h1 port 1: PortRcvErrors at 25.0/min (threshold 10/min)"
    assert err["evidence"] == {"counter": "PortRcvErrors", "ratio": 2.5, "critical_factor": 10.0,
                               "rate_per_min": 25.0, "threshold_per_min": 10.0}
    flap = found["port_flapping", "h0 port 1"]
    assert flap["message"] == "h0 port 1: link went down or retrained in 2 of the last 4 sweeps (condition at 2)"
    assert flap["evidence"] == {"flapping_sweeps": 2, "window_sweeps": 4, "flap_count": 2}
    sym = found["symbol_errors_rising", "h2 port 2"]
    assert sym["message"] == "h2 port 2: symbol errors rose in 2 sweeps in a row (condition at 2), +7 in the newest"
    # without rates (a sweep that knows only the ratio) the message says the ratio
    (c,) = CounterConditions().update(sweep(PORTS, ratio=[0, 3.0, 0]), 1.0)
    assert c["message"] == "h1 port 1: PortRcvErrors at 3.0 times its threshold"


def test_port_sweep_carries_the_worst_counters_rate_and_threshold_per_minute():
    from types import SimpleNamespace

    from fabric_engine.telemetry.alerts import Thresholds
    from fabric_engine.telemetry.counter_conditions import port_sweep
    from fabric_engine.telemetry.counters import COLUMN
    from fabric_engine.telemetry.rates import CounterDeltas

    fabric = SimpleNamespace(dl_src=np.array([0, 1]), dl_src_port=np.array([1, 3]),
                             guid=np.array([0x10, 0x11], np.uint64), node_name=["h0", "h1"])
    ncol = max(COLUMN.values()) + 1
    delta = np.zeros((2, ncol))
    delta[1, COLUMN["SymbolErrorCounter"]] = 60.0  # 60 in 10 s: 360/min
    delta[1, COLUMN["PortRcvErrors"]] = 5.0  # 30/min
    shape = (2, ncol)
    deltas = CounterDeltas(np.arange(2), delta, np.full(shape, 10.0), np.zeros(shape, np.uint8), np.full(shape, 10.0))
    s = port_sweep(fabric, deltas, np.array([0, 1]), Thresholds())
    assert s.rate_per_min[1] == pytest.approx(360.0) and s.threshold_per_min[1] == 10.0
    assert s.ratio[1] == pytest.approx(36.0) and s.rate_per_min[0] == 0.0
    (c,) = CounterConditions().update(s, 1.0)
    assert c["message"] == "h1 port 3: SymbolErrorCounter at 360.0/min (threshold 10/min)"
    assert c["severity"] == "critical"
