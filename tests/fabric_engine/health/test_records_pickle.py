"""Health records pickle compactly (fabric_engine.health.records): every field reads back with its values (floats bit
for bit), dtype and shape; a field alike for every row comes back as one shared, read-only row."""

from __future__ import annotations

import copy
import pickle

import numpy as np

from fabric_engine.health.records import FIELDS, empty, take_rows


def records(n: int = 5000):
    rng = np.random.default_rng(37)
    rec = empty(n, "mlxlink")
    rec.guid[:] = np.arange(n, dtype=np.uint64) // 4 + 0xB83FD20300000000
    rec.port[:] = np.arange(n) % 4 + 1
    rec.name[:] = [f"gpu{i // 4:04d}" for i in range(n)]
    rec["raw_ber"][:] = 10.0 ** rng.uniform(-15, -5, n)  # dense
    rec["raw_ber_lane"][:, :4] = 10.0 ** rng.uniform(-15, -5, (n, 4))  # 4 of 12 lanes
    rec["hist"][:, :3] = rng.integers(0, 1000, (n, 3))  # whole numbers: float32 holds them
    rec["sym_ber"][:] = 0.0
    rec["sym_ber"][::100] = -0.0  # a few rows differ, bit for bit
    rec["eff_ber"][7] = 1e-9  # one row given
    rec["temp_th"][:] = [-5, 0, 70, 80]  # alike for every row
    rec["up"][:] = 1
    rec["up"][::50] = 0
    rec["sn"][:] = [f"MT{i:08d}" for i in range(n)]
    rec["vendor"][::2] = "Mellanox"
    rec["fw"][3] = "a\0b"  # a NUL inside a string
    return rec


def assert_same(a, b):
    for x, y in ((a.guid, b.guid), (a.port, b.port), (a.name, b.name), (a.source, b.source)):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert a.data.keys() == b.data.keys()
    for f, x in a.data.items():
        y = b.data[f]
        assert (x.dtype, x.shape) == (y.dtype, y.shape), f
        if x.dtype.kind == "f":
            assert np.array_equal(x.view(np.uint64), np.asarray(y).view(np.uint64)), f
        else:
            assert np.array_equal(x, y), f


def test_every_field_reads_back_bit_for_bit_and_the_pickle_is_small():
    rec = records()
    data = pickle.dumps(rec, protocol=pickle.HIGHEST_PROTOCOL)
    back = pickle.loads(data)
    assert_same(rec, back)
    assert_same(rec, pickle.loads(pickle.dumps(back)))  # what was read back pickles again the same
    plain = sum(v.nbytes for v in rec.data.values())  # the float and integer columns alone, as allocated
    assert len(data) < plain / 4


def test_a_field_alike_for_every_row_is_one_read_only_row_and_the_others_are_writable():
    back = pickle.loads(pickle.dumps(records()))
    assert back["temp_th"].strides[0] == 0 and not back["temp_th"].flags.writeable
    assert back["rx_power"].strides[0] == 0 and np.isnan(back["rx_power"]).all()  # not given by any port
    assert back["raw_ber"].flags.writeable and back["raw_ber_lane"].flags.f_contiguous
    assert back["sym_ber"].flags.writeable


def test_empty_and_tiny_record_sets_read_back():
    for n in (0, 1, 2):
        rec = empty(n, "x")
        assert_same(rec, pickle.loads(pickle.dumps(rec)))


def test_copies_are_not_pickles():
    rec = records(10)
    assert copy.copy(rec).data is rec.data
    deep = copy.deepcopy(rec)
    assert deep["raw_ber"] is not rec["raw_ber"] and deep["raw_ber"].flags.writeable
    assert_same(rec, deep)


def test_take_rows_keeps_lanes_column_major_and_broadcast_columns_shared():
    rec = records(100)
    rows = np.array([5, 0, 99])
    lanes = take_rows(rec["raw_ber_lane"], rows)
    assert lanes.flags.f_contiguous and np.array_equal(lanes, rec["raw_ber_lane"][rows], equal_nan=True)
    one = np.broadcast_to(np.float64(2.0), (100,))
    assert take_rows(one, rows).strides == (0,) and take_rows(one, rows).shape == (3,)
    assert FIELDS["raw_ber_lane"][1] == lanes.shape[1]
