"""Issue 37: symbol BER of the ports read by the collector's sweep (``perfquery`` PortCounters): the rows of
``SymbolErrorCounter``, their width kept in the source, graded as symbol BER; a counter saturated at 65535 or
lower than before gives "unknown", never a huge or a zero BER."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.health.grade import ERROR, NORMAL, UNKNOWN, ber_from_deltas, counter_baseline, grade_ber
from fabric_engine.health.port_counters import (
    SOURCE,
    SOURCE_EXTENDED,
    SYMBOL_ERROR_MAX,
    lid_port_keys,
    saturated,
    symbol_rows,
)
from fabric_engine.health.records import Builder, code
from fabric_engine.health.thresholds import load
from fabric_engine.telemetry.counters import COLUMN, CounterSamples
from fabric_engine.telemetry.perfquery import parse_perfquery

SYM = COLUMN["SymbolErrorCounter"]
HDR_BITS = 53.125e9  # one HDR lane's bits per second


def block(lid: int, port: int, sym: int) -> str:
    """A PortCounters block as perfquery prints it (libibmad's dump: name, dots to column 33, value)."""
    return (f"# Port counters: Lid {lid} port {port} (CapMask: 0x1300)\n"
            f"PortSelect:......................{port}\nCounterSelect:...................0x0000\n"
            f"SymbolErrorCounter:..............{sym}\nLinkErrorRecoveryCounter:........0\n")


def samples(text: str, t: float) -> CounterSamples:
    return parse_perfquery(text, t).merged()


def test_rows_of_the_ports_that_read_the_counter_named_by_lid_and_timed_by_the_read():
    s = samples(block(12, 1, 7) + block(12, 2, 65535) + block(12, 255, 9) + block(12, 0, 1), 1000.0)
    rec = symbol_rows(s)
    assert rec.name.tolist() == ["lid:12", "lid:12"] and rec.port.tolist() == [1, 2]  # not 0 nor 255 (all ports)
    assert rec["sym_errors"].tolist() == [7.0, 65535.0] and rec["t"].tolist() == [1000.0, 1000.0]
    assert rec.source.tolist() == [SOURCE, SOURCE]
    assert np.isnan(rec["raw_errors"]).all() and not rec["raw_errors"].flags.writeable  # one shared "not given" row
    assert saturated(SOURCE, rec).tolist() == [False, True]
    assert not saturated("perfquery -T", rec).any()  # another tool's counts are not 16-bit PortCounters
    skip = np.array([12 * 256 + 1])  # a port perfquery -T counts
    assert symbol_rows(s, skip).port.tolist() == [2]


def test_a_64_bit_read_is_its_own_source_and_never_saturated():
    s = CounterSamples.from_records([{"lid": 3, "port": 1, "t": 5.0, "counters": {"SymbolErrorCounter": 65535}},
                                     {"lid": 3, "port": 2, "t": 5.0, "counters": {"PortXmitData": 1}}])
    s.bits[0, SYM] = 64  # PortCountersExtended with the extended width
    rec = symbol_rows(s)
    assert rec.port.tolist() == [1] and rec.source.tolist() == [SOURCE_EXTENDED]  # port 2 read no such counter
    assert not saturated(SOURCE_EXTENDED, rec).any()


def test_lid_port_keys_of_rows_named_by_lid():
    b = Builder("t")
    b.add(0, "lid:12", 3, {"raw_errors": 1.0})
    b.add(0, "DR path slid 1; dlid 65535; 0,1", 1, {"raw_errors": 1.0})
    b.add(0, "leaf01", 2, {"raw_errors": 1.0})
    assert lid_port_keys(b.build()).tolist() == [12 * 256 + 3, -1, -1]


def _hdr(rec):  # 4X HDR and up, as the discovery gives them (the rows' other columns are read-only: not given)
    n = len(rec)
    rec.data.update(speed=np.full(n, code("speed", "HDR"), np.int8), lanes=np.full(n, 4, np.int16),
                    up=np.ones(n, np.int16))
    return rec


@pytest.mark.parametrize(("before", "after", "expected"), [
    (100, 100 + 4 * 53, "ber"),  # rose: errors over 4 HDR lanes x the interval
    (100, 100, "zero"),  # no new errors
    (100, 50, "unknown"),  # cleared (perfquery -R, or OpenSM's PerfMgr)
    (65000, SYMBOL_ERROR_MAX, "unknown"),  # reached its top: the errors past it were not counted
    (SYMBOL_ERROR_MAX, SYMBOL_ERROR_MAX, "unknown"),  # stuck at its top: not a BER of zero
    (SYMBOL_ERROR_MAX, 3, "unknown"),  # reset after saturating: when is not known
])
def test_symbol_ber_from_the_delta_and_saturation(before, after, expected):
    a = _hdr(symbol_rows(samples(block(12, 1, before), 1000.0)))
    b = _hdr(symbol_rows(samples(block(12, 1, after), 1600.0)))
    got = ber_from_deltas(counter_baseline(a), b)
    ber = np.where(saturated(SOURCE, b), np.nan, got["sym_ber"])  # as the readings store applies it
    if expected == "ber":
        assert ber[0] == pytest.approx((after - before) / (4 * HDR_BITS * 600)) and got["window_s"][0] == 600.0
    elif expected == "zero":
        assert ber[0] == 0.0
    else:
        assert np.isnan(ber[0])


def test_graded_by_the_symbol_row_of_the_table():
    th = load()
    errs = 4 * HDR_BITS * 600 * 1e-10  # a symbol BER of 1e-10: past the 1e-11 error level
    a = _hdr(symbol_rows(samples(block(12, 1, 0) + block(12, 2, 0) + block(12, 3, 65000), 1000.0)))
    b = _hdr(symbol_rows(samples(block(12, 1, int(errs)) + block(12, 2, 0) + block(12, 3, 65535), 1600.0)))
    got = ber_from_deltas(counter_baseline(a), b)
    got.data["sym_ber"] = np.where(saturated(SOURCE, b), np.nan, got["sym_ber"])
    g = grade_ber(got, th)
    assert g["symbol"].tolist() == [ERROR, NORMAL, UNKNOWN] and g["grade"].tolist() == [ERROR, NORMAL, UNKNOWN]
    short = ber_from_deltas(counter_baseline(a), _hdr(symbol_rows(samples(block(12, 1, int(errs)), 1060.0))))
    assert grade_ber(short, th)["symbol"].tolist() == [UNKNOWN]  # 60 s: shorter than the row's min_window_s
