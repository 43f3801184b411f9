"""Health records made compact (fabric_engine.health.records.compact): every value as it was, lanes no port has left
out, columns alike for every port one shared row, float counts float32; same_lanes widens them again where columns
meet, and a compact record set grades and pickles as the dense one."""

from __future__ import annotations

import pickle

import numpy as np

from fabric_engine.health.grade import grade_ber, module_status, worst_raw
from fabric_engine.health.records import FIELDS, HIST_BINS, LANES, empty, merge, same_lanes
from fabric_engine.health.records import compact as make_compact
from fabric_engine.health.thresholds import load

from .test_records_pickle import records


def _values_equal(a: np.ndarray, b: np.ndarray, fill) -> bool:
    """The same values, ``b`` possibly narrower in lanes (its missing lanes: ``fill`` in ``a``)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 2 and b.shape[1] < a.shape[1]:
        rest = a[:, b.shape[1]:]
        if not (np.isnan(rest).all() if a.dtype.kind == "f" else (rest == fill).all()):
            return False
        a = a[:, :b.shape[1]]
    if a.dtype.kind == "f":
        bits = [np.ascontiguousarray(x, np.float64).view(np.uint64) for x in (a, b)]  # -0.0 and NaN bit for bit
        return a.shape == b.shape and np.array_equal(*bits)
    return a.shape == b.shape and np.array_equal(a, b)


def test_compact_keeps_every_value_and_drops_what_no_port_has():
    rec = records()
    small = make_compact(rec)
    for f, (_dtype, _cols, fill) in FIELDS.items():
        assert _values_equal(rec[f], small[f], fill), f
    assert small["raw_ber_lane"].shape == (len(rec), 4) and small["raw_ber_lane"].flags.f_contiguous
    assert small["hist"].shape == (len(rec), 3) and small["hist"].dtype == np.float32  # whole numbers
    assert small["raw_ber"].dtype == np.float64  # BERs float32 does not hold exactly
    assert small["rx_power"].shape == (len(rec), 1) and small["rx_power"].strides[0] == 0  # no port has it
    assert small["temp_th"].strides[0] == 0 and not small["temp_th"].flags.writeable  # alike for every port
    assert small.source.strides[0] == 0 and small.source[0] == "mlxlink"
    assert small["sym_ber"].strides[0] != 0  # -0.0 and 0.0 differ bit for bit: not alike
    dense = sum(np.asarray(v).nbytes for v in rec.data.values())
    kept = sum(v.nbytes for v in small.data.values() if v.strides[0] != 0)
    assert kept < dense / 5


def test_compact_records_grade_as_the_dense_ones():
    rec = records()
    rec["rx_power"][:, :2] = np.random.default_rng(1).normal(0.0, 4.0, (len(rec), 2))
    rec["rx_power_th"][:] = [-10.4, -7.4, 2.4, 5.4]
    rec["window_s"][:] = 60.0
    rec["speed"][:] = 8
    small = make_compact(rec)
    th = load()
    assert np.array_equal(worst_raw(rec), worst_raw(small), equal_nan=True)
    for k, v in grade_ber(rec, th).items():
        assert np.array_equal(v, grade_ber(small, th)[k], equal_nan=True), k
    m, ms = module_status(rec, th), module_status(small, th)
    for k in ("module", "alarm", "warning"):
        assert np.array_equal(m[k], ms[k]), k
    assert m["ranges"].keys() == ms["ranges"].keys() == {"rx_power"}
    for x, y in zip(m["ranges"]["rx_power"], ms["ranges"]["rx_power"], strict=True):
        assert np.array_equal(x, y, equal_nan=True)


def test_narrow_columns_meet_wide_ones_widened_and_pickle_as_they_are():
    rec = records(50)
    small = make_compact(rec)
    wide, narrow = same_lanes("raw_ber_lane", [empty(3)["raw_ber_lane"], small["raw_ber_lane"]])
    assert wide.shape[1] == narrow.shape[1] == LANES and np.isnan(narrow[:, 4:]).all()
    assert same_lanes("raw_ber", [rec["raw_ber"], small["raw_ber"]])[1] is small["raw_ber"]
    other = empty(2, "x")
    other.guid[:] = [1, 2]
    both = merge([small, other])  # other ports, with every lane: concatenated
    assert both["hist"].shape == (52, HIST_BINS) and _values_equal(both["hist"][:50], small["hist"], np.nan)
    back = pickle.loads(pickle.dumps(small))
    for f, (_dtype, _cols, fill) in FIELDS.items():
        assert _values_equal(small[f], back[f], fill), f
        assert back[f].shape == small[f].shape, f


def test_empty_record_sets_compact():
    for n in (0, 1):
        small = make_compact(empty(n, "x"))
        assert len(small) == n and all(small[f].shape[0] == n for f in FIELDS)


def test_thresholds_keep_their_four_columns():
    rec = records(20)  # rx_power_th not given by any port, temp_th alike for every port
    small = make_compact(rec)
    assert small["rx_power_th"].shape == small["temp_th"].shape == (20, 4)
