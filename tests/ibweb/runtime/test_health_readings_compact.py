"""A source's view of its fabric's health readings (ibweb.runtime.health_readings.Readings) is compact and shares
with the readings before it the columns that did not change, so the health publisher tells them by identity; its
values are those the store reads back."""

from __future__ import annotations

import numpy as np

from fabric_engine.health.records import FIELDS, empty
from fabric_engine.topology.generate import fat_tree
from ibweb.runtime import health_readings
from ibweb.runtime.health_ports import match_ports

F = fat_tree(hosts=8, radix=4)
FABRIC_ID = 9_370_037


def readings(temp: float):
    src = np.asarray(F.dl_src)
    rec = empty(src.size, "mlxlink")
    rec.guid[:], rec.port[:] = np.asarray(F.guid, np.uint64)[src], F.dl_src_port
    rec["raw_ber_lane"][:, :4] = 10.0 ** np.linspace(-14, -9, src.size * 4).reshape(-1, 4)
    rec["temp"][:] = temp + np.arange(src.size) / 8
    rec["temp_th"][:] = [-5, 0, 70, 80]
    rec["hist"][:, :2] = np.arange(src.size * 2).reshape(-1, 2)
    rec["sn"][:] = [f"MT{i:06d}" for i in range(src.size)]
    rec["t"][:] = 100.0
    return rec


def test_the_source_keeps_compact_readings_sharing_the_columns_that_did_not_change():
    health_readings.forget(FABRIC_ID)
    try:
        source = health_readings.Readings()
        health_readings.put(FABRIC_ID, readings(40.0))
        source.refresh(FABRIC_ID, F)
        a = source.records(1.0)
        health_readings.put(FABRIC_ID, readings(41.0))  # only the temperatures change
        source.refresh(FABRIC_ID, F)
        b = source.records(2.0)
        assert b["sn"] is a["sn"] and b.guid is a.guid and b.port is a.port and b["raw_ber_lane"] is a["raw_ber_lane"]
        assert b["temp"] is not a["temp"] and b["temp"][0] == 41.0
        assert b["raw_ber_lane"].shape == (len(b), 4) and b["hist"].shape == (len(b), 2)
        assert b["hist"].dtype == np.float32 and b["temp_th"].strides[0] == 0
        dense = match_ports(F, health_readings.read(FABRIC_ID))[0]
        for f in FIELDS:
            if f == "t":
                continue
            x, y = np.asarray(dense[f]), np.asarray(b[f])
            if x.ndim == 2:
                assert np.isnan(x[:, y.shape[1]:]).all(), f
                x = x[:, :y.shape[1]]
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), f
    finally:
        health_readings.forget(FABRIC_ID)
