"""The figures of health conditions' alerts at numpy speed (fabric_engine.health.figures) are what the one-value form
gives, bit for bit: 6 significant digits read back as a float (None unless finite), ``.2e`` strings, hex GUIDs; and
port identities' slots (fabric_engine.health.port_slots) stay put whatever lookups come between."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fabric_engine.health.conditions import _num, _nums
from fabric_engine.health.figures import hex_guids, sci2
from fabric_engine.health.port_slots import PortSlots


def _figures() -> np.ndarray:
    """Values of every kind: BERs and counts of any magnitude, ties, powers of ten, the edges of a double."""
    rng = np.random.default_rng(37)
    return np.concatenate([10.0 ** rng.uniform(-320, 308, 20000), rng.normal(0, 1e3, 5000),
                           np.round(rng.normal(0, 1e3, 5000), 1), rng.integers(-10**7, 10**7, 5000).astype(float),
                           np.arange(-1000, 1000) / 8, 10.0 ** np.arange(-30, 30),
                           [5e-324, -0.0, 0.0, 1.7976931348623157e308, 0.5, 2.5, 1234565, 1234575, 9999995,
                            0.1234565, 999999.5, 99999.95, np.nan, np.inf, -np.inf, 1.5e-254, 1.5e-253, 9.995e-6,
                            9.9949999e-6, 1.125, 0.1, 100.0, 999.5, 1e22, 1e23, 1e-99, 9.996e-100, 1e100]])


def test_every_figure_is_the_one_value_form_bit_for_bit():
    x = _figures()
    got, want = _nums(x), [_num(v) for v in x.tolist()]
    assert [g is None for g in got] == [w is None for w in want]
    assert all(math.copysign(1, g) == math.copysign(1, w) and g == w for g, w in zip(got, want, strict=True)
               if w is not None)
    assert _nums(np.zeros(0)) == []


def test_every_two_digit_mantissa_is_the_format_of_the_value():
    x = np.concatenate([_figures(), 10.0 ** np.random.default_rng(3).uniform(-20, -2, 50000)])
    assert sci2(x) == [f"{v:.2e}" for v in x.tolist()]
    assert sci2(np.array([1e-5, 1.234e-12, 0.0])) == ["1.00e-05", "1.23e-12", "0.00e+00"] and sci2(np.zeros(0)) == []


def test_hex_guids_are_sixteen_lowercase_digits():
    guid = np.array([0, 1, 0xB83FD20300A10003, 2**64 - 1], np.uint64)
    assert hex_guids(guid) == [f"0x{g:016x}" for g in guid.tolist()] == [
        "0x0000000000000000", "0x0000000000000001", "0xb83fd20300a10003", "0xffffffffffffffff"]
    assert hex_guids(np.zeros(0, np.uint64)) == []


def test_slots_stay_put_and_a_few_ports_looked_up_leave_the_last_sweep_kept():
    slots = PortSlots()
    guid = np.arange(10_000, dtype=np.uint64) // 4 + 0x1000
    port = np.arange(10_000) % 4 + 1
    first = slots.lookup(guid, port)
    assert np.array_equal(first, np.arange(10_000))
    few = slots.lookup(np.array([7, 0x1000], np.uint64), np.array([1, 2]))  # a new GUID, a known port
    assert few.tolist() == [10_000, 1]
    assert slots.lookup(guid.copy(), port.copy()) is first  # the sweep's ports again: the same answer
    shuffled = np.random.default_rng(1).permutation(10_000)
    assert np.array_equal(slots.lookup(guid[shuffled], port[shuffled]), shuffled)
    assert slots.find(np.array([7, 8], np.uint64), np.array([1, 1])).tolist() == [10_000, -1]
    with pytest.raises(ValueError, match="appears twice"):
        slots.lookup(np.array([7, 7], np.uint64), np.array([1, 1]))
