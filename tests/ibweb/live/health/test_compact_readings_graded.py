"""Compact readings (fabric_engine.health.records.compact, as a source keeps them) grade as the dense ones: the same
report, /metrics series, condition alerts and BER trend, with a sweep's down ports added (ibweb.live.health.swept)
to readings narrower in lanes than the rows it adds."""

from __future__ import annotations

import math

import numpy as np

from fabric_engine.health.records import compact, empty
from fabric_engine.health.thresholds import load
from fabric_engine.topology.generate import fat_tree
from ibweb.live.engine.health_publisher import HealthKeeper
from ibweb.live.health.swept import swept_ports, with_swept
from ibweb.live.health.trend import BerTrend

F = fat_tree(hosts=8, radix=4)
TH = load()


def readings(k: int, rng: np.random.Generator):
    """Every cabled port end of :data:`F` read with 4 lanes, sweep ``k``: a few high BERs, a hot module, a port
    down; the other fields as a reader leaves them."""
    src = np.asarray(F.dl_src)
    n = src.size
    rec = empty(n, "mlxlink")
    rec.guid[:], rec.port[:] = np.asarray(F.guid, np.uint64)[src], F.dl_src_port
    rec.name[:] = np.asarray(F.node_name, object)[src]
    rec["up"][:] = 1
    rec["up"][k % n] = 0
    rec["window_s"][:] = 600.0
    rec["speed"][:] = 8  # NDR
    rec["raw_ber_lane"][:, :4] = 10.0 ** rng.uniform(-14, -9, (n, 4))
    rec["raw_ber_lane"][(k * 3) % n, 2] = 1e-4
    rec["raw_ber"][:] = rec["raw_ber_lane"][:, :4].mean(axis=1)
    rec["eff_ber"][:] = rec["raw_ber"] * 1e-6
    rec["temp"][:] = rng.normal(45.0, 1.0, n)
    rec["temp"][(k * 5 + 1) % n] = 78.0
    rec["temp_th"][:] = [-5, 0, 70, 80]
    rec["rx_power"][:, :4] = rng.normal(0.0, 0.5, (n, 4))
    rec["rx_power"][(k * 7 + 2) % n, 1] = -9.0
    rec["rx_power_th"][:] = [-10.4, -7.4, 2.4, 5.4]
    rec["hist"][:, :4] = rng.integers(0, 100, (n, 4))
    rec["link_down"][:] = k
    rec["sn"][:] = [f"MT{i:06d}" for i in range(n)]
    rec["vendor"][:] = "Mellanox"
    rec["t"][:] = 10.0 * k
    return rec


def same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return isinstance(b, list | tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return type(a) is type(b) and a == b


def test_compact_readings_give_the_same_report_series_alerts_and_trend():
    rng = np.random.default_rng(37)
    dense, small = HealthKeeper(critical_s=7.0), HealthKeeper(critical_s=7.0)
    trends = BerTrend(), BerTrend()
    cut = F.without_links([0])
    down = [{"kind": "link_down", "guids": [f"0x{int(F.guid[F.dl_src[0]]):016x}", f"0x{int(F.guid[F.dl_dst[0]]):016x}"],
             "ports": [int(F.dl_src_port[0]), int(F.dl_dst_port[0])], "a": "a port 1", "b": "b port 1"}]
    alerted = 0
    for k in range(1, 5):
        rec = readings(k, rng)
        narrow = compact(rec)
        assert narrow["raw_ber_lane"].shape[1] == 4 and narrow["temp_th"].strides[0] == 0
        fabric = cut if k == 3 else F
        outs = []
        for keeper, r, trend in ((dense, rec, trends[0]), (small, narrow, trends[1])):
            keeper.observe(r, 10.0 * k, fabric)
            keeper.observe_sweep(fabric, down if k == 3 else [], 10.0 * k, r)
            graded = with_swept(r, swept_ports(fabric, down if k == 3 else [], 10.0 * k), keeper.swept_with_downs())
            report, ports, alerts = keeper.report(graded, fabric, TH, 10.0 * k)
            trend.observe(10.0 * k, fabric, ports, graded["raw_ber_lane"])
            outs.append((report, ports, alerts, trend.snapshot()))
        assert same(outs[0], outs[1]), k
        alerted += len(outs[0][2])
    assert alerted and outs[0][0]["summary"]["ber"]["error"] >= 1
    assert {a["kind"] for a in outs[0][2]} >= {"ber_high", "module_temperature", "module_power"}
