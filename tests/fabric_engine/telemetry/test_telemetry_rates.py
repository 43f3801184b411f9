"""Counter increases between sweeps: words x4, 64-bit, latch, wrap, reset, stale."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.telemetry import COLUMN, LATCHED, RESET, STALE, WRAPPED, CounterSamples, counter_deltas


def sweep(t: float, ports: dict[tuple[int, int], dict[str, int]], extended: bool = False) -> CounterSamples:
    return CounterSamples.from_records(
        [{"lid": lid, "port": port, "t": t, "extended": extended, "counters": c} for (lid, port), c in ports.items()])


def one(d, name):
    c = COLUMN[name]
    return float(d.delta[0, c]), float(d.rate[0, c]), int(d.flags[0, c])


def test_data_counters_count_four_octet_words():
    d = counter_deltas(sweep(0.0, {(2, 1): {"PortXmitData": 100, "PortXmitPkts": 7}}),
                       sweep(2.0, {(2, 1): {"PortXmitData": 600, "PortXmitPkts": 17}}))
    assert one(d, "PortXmitData") == (2000.0, 1000.0, 0)
    assert one(d, "PortXmitPkts") == (10.0, 5.0, 0)


def test_extended_counters_use_all_64_bits():
    big = (1 << 63) + 5
    d = counter_deltas(sweep(0.0, {(2, 1): {"PortXmitData": big}}, True),
                       sweep(1.0, {(2, 1): {"PortXmitData": big + 1_000_000}}, True))
    assert one(d, "PortXmitData") == (4_000_000.0, 4_000_000.0, 0)


def test_basic_counter_at_its_maximum_is_flagged_latched():
    d = counter_deltas(sweep(0.0, {(2, 1): {"SymbolErrorCounter": 65000, "PortXmitData": 0xFFFFFF00}}),
                       sweep(1.0, {(2, 1): {"SymbolErrorCounter": 65535, "PortXmitData": 0xFFFFFFFF}}))
    delta, _, flags = one(d, "SymbolErrorCounter")
    assert delta == 535.0 and flags & LATCHED
    delta, _, flags = one(d, "PortXmitData")
    assert delta == 255 * 4 and flags & LATCHED


def test_narrow_counter_that_wraps_when_the_fabric_wraps():
    prev = sweep(0.0, {(2, 1): {"LinkDownedCounter": 250, "PortXmitData": 0xFFFFFFF0}})
    cur = sweep(1.0, {(2, 1): {"LinkDownedCounter": 4, "PortXmitData": 0x10}})
    d = counter_deltas(prev, cur, wrap=True)
    assert one(d, "LinkDownedCounter") == (10.0, 10.0, int(WRAPPED))
    assert one(d, "PortXmitData") == (0x20 * 4, 0x20 * 4, int(WRAPPED))


def test_counter_that_goes_backwards_is_a_reset_never_negative():
    prev = sweep(0.0, {(2, 1): {"PortXmitData": 5000, "SymbolErrorCounter": 40}}, True)
    cur = sweep(1.0, {(2, 1): {"PortXmitData": 100, "SymbolErrorCounter": 3}}, True)
    for wrap in (False, True):
        d = counter_deltas(prev, cur, wrap=wrap)
        assert one(d, "PortXmitData") == (400.0, 400.0, int(RESET))  # 64-bit: never a wrap
    d = counter_deltas(prev, cur)
    assert one(d, "SymbolErrorCounter") == (3.0, 3.0, int(RESET))
    assert (d.delta >= 0).all()


def test_missing_port_counter_or_width_change_is_stale_not_invented():
    prev = sweep(0.0, {(2, 1): {"PortXmitData": 10}, (2, 2): {"PortXmitData": 10}})
    cur = CounterSamples.concat([
        sweep(1.0, {(2, 1): {"PortRcvData": 50}}),                 # PortXmitData not read this time
        sweep(1.0, {(2, 2): {"PortXmitData": 90}}, extended=True),  # was 32-bit, now 64-bit: not comparable
        sweep(1.0, {(2, 3): {"PortXmitData": 90}}),                 # new port: no earlier sample
    ]).merged()
    d = counter_deltas(prev, cur)
    xd = COLUMN["PortXmitData"]
    assert d.keys.tolist() == [2 * 256 + 1, 2 * 256 + 2, 2 * 256 + 3]
    assert (d.flags[:, xd] & STALE).all()
    assert (d.rate[:, xd] == 0).all() and (d.dt[:, xd] == 0).all()
    assert d.lookup(np.array([2 * 256 + 2, 7 * 256 + 1])).tolist() == [1, -1]


def test_records_are_validated():
    with pytest.raises(Exception, match="unknown counter"):
        sweep(0.0, {(2, 1): {"NoSuchCounter": 1}})
    with pytest.raises(Exception, match="does not fit in 8 bits"):
        sweep(0.0, {(2, 1): {"LinkDownedCounter": 256}})
    with pytest.raises(Exception, match="out of range"):
        sweep(0.0, {(0, 1): {"PortXmitData": 1}})
