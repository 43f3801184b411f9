"""The health store's merge of new readings into the kept ones (ibweb.runtime.health_readings.combine): matched by
port identity whether the rows carry GUIDs (matched as numbers) or names (matched by key), in any order, the new
given values winning; read back from a pickle (one shared row for a field alike everywhere) it merges the same."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from fabric_engine.health.records import FIELDS, empty
from ibweb.runtime.health_readings import combine


def rows(ids, named: bool = False, seed: int = 0):
    """Ports ``ids`` (4 per node); ``named``: every fifth by name only (no GUID)."""
    rng = np.random.default_rng(seed)
    ids = np.asarray(ids)
    rec = empty(ids.size, "mlxlink")
    rec.guid[:] = np.where(named & (ids % 5 == 0), 0, 0x1000 + ids // 4).astype(np.uint64)
    rec.port[:] = ids % 4 + 1
    rec.name[:] = [f"gpu{i // 4}" for i in ids]
    for f in ("raw_ber", "temp", "raw_ber_lane", "up", "vendor"):
        col = rec[f]
        some = rng.random(ids.size) < 0.5
        col[some] = "Mellanox" if col.dtype.kind == "O" else 1 if col.dtype.kind == "i" else rng.random(col[some].shape)
    return rec


def by_key(rec) -> dict:
    return {k: i for i, k in enumerate(rec.keys().tolist())}


@pytest.mark.parametrize("named", [False, True])
@pytest.mark.parametrize("pickled", [False, True])
def test_new_values_win_and_old_ones_fill_in_by_port_identity(named, pickled):
    old = rows([0, 1, 2, 3, 5, 8, 9], named, seed=1)
    new = rows([9, 3, 4, 0, 7], named, seed=2)  # another order, some new ports, some old ones left out
    if pickled:
        old = pickle.loads(pickle.dumps(old))
    out = combine(new, old)
    keys, ko, kn = by_key(out), by_key(old), by_key(new)
    assert list(keys)[:len(kn)] == list(kn)  # new's rows first, in their order, then old's other ports
    assert set(keys) == set(ko) | set(kn)
    for f, (_dtype, _cols, fill) in FIELDS.items():
        for k, i in keys.items():
            got = np.atleast_1d(out[f][i])
            if k in kn:
                v = np.atleast_1d(new[f][kn[k]])
                given = ~np.isnan(v) if v.dtype.kind == "f" else v != fill
                want = np.where(given, v, np.atleast_1d(old[f][ko[k]])) if k in ko else v
            else:
                want = np.atleast_1d(old[f][ko[k]])
            assert np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), (f, k)


def test_the_same_ports_in_the_same_order_keep_old_columns_no_reading_gives():
    old = pickle.loads(pickle.dumps(rows(range(8), seed=1)))
    new = rows(range(8), seed=2)
    out = combine(new, old)
    assert out["rx_power"] is old["rx_power"]  # given by neither: the one shared row, not copied
    want = np.where(np.isnan(new["raw_ber"]), old["raw_ber"], new["raw_ber"])
    assert np.array_equal(out["raw_ber"], want, equal_nan=True)
