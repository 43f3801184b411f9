"""Grading link health of 200,000 ports at once (issue 37): BER grades and module checks, vectorized.

Builds ``--ports`` rows as the readers leave them (a mix of NDR ports with PLR and KP4 FEC, HDR and EDR
ports, DAC and optical cables, per-lane raw BER and module readings with their own thresholds, some ports
down or not measured long enough), then times :func:`fabric_engine.health.grade.grade_ber` and
:func:`~fabric_engine.health.grade.module_status` together (median of ``--repeat`` runs) against the
target of 100 ms, and the full summary (with the inventory list) once. No Django. Run:
``.venv/bin/python tests/bench/bench_health.py [--ports 200000] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from fabric_engine.health.grade import grade_ber, module_status, summary  # noqa: E402
from fabric_engine.health.records import code, empty  # noqa: E402
from fabric_engine.health.thresholds import load  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402


def ports(n: int, rng: np.random.Generator):
    rec = empty(n, "bench")
    rec.guid[:] = np.arange(n, dtype=np.uint64) // 64 + 0xB83FD20300000000
    rec.port[:] = np.arange(n) % 64 + 1
    rec["speed"][:] = rng.choice([code("speed", s) for s in ("NDR", "HDR", "EDR")], n, p=[0.7, 0.2, 0.1])
    rec["fec"][:] = rng.choice([code("fec", f) for f in ("ll_rs_fec_plr", "kp4_rs_fec", "rs_fec")], n)
    rec["cable"][:] = rng.choice([code("cable", c) for c in ("dac", "aoc", "optical")], n)
    rec["up"][:] = (rng.random(n) > 0.01).astype(np.int16)
    rec["window_s"][:] = rng.uniform(60, 86400, n)
    rec["lanes"][:] = 4
    for field in ("raw_ber", "eff_ber", "sym_ber"):
        rec[field][:] = 10.0 ** rng.uniform(-16, -5, n)
    rec["raw_ber_lane"][:, :4] = 10.0 ** rng.uniform(-10, -3, (n, 4))
    rec["present"][:] = 1
    rec["temp"][:] = rng.normal(50, 10, n)
    rec["temp_th"][:] = [-5, 0, 70, 80]
    rec["voltage"][:] = rng.normal(3.3, 0.05, n)
    rec["voltage_th"][:] = [2.97, 3.13, 3.47, 3.63]
    for field in ("rx_power", "tx_power"):
        rec[field][:, :4] = rng.normal(0, 3, (n, 4))
        rec[f"{field}_th"][:] = [-10.4, -7.4, 2.4, 5.4]
    rec["bias"][:, :4] = rng.normal(7, 1, (n, 4))
    rec["bias_th"][:] = [2, 3, 13, 15]
    rec["temp"][::5] = np.nan  # DAC: no readings
    rec["temp_th"][::7] = np.nan  # modules without thresholds: the table's fallback
    return rec


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--ports", type=int, default=200_000)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    print(machine())
    print(deployed_allocator())
    rec = ports(a.ports, np.random.default_rng(37))
    th = load()
    spent = []
    for _ in range(a.repeat):
        start = time.perf_counter()
        g = grade_ber(rec, th)
        m = module_status(rec, th)
        spent.append(time.perf_counter() - start)
    grading = float(np.median(spent))
    counts = np.bincount(g["grade"].astype(np.int64) + 1, minlength=4)
    start = time.perf_counter()
    s = summary(rec, th)
    full = time.perf_counter() - start
    print(f"ports {a.ports:,}: grading {1000 * grading:.1f} ms (median of {a.repeat}), summary {1000 * full:.0f} ms; "
          f"unknown/normal/warning/error {counts.tolist()}, modules {int(m['module'].sum()):,} "
          f"({int(m['alarm'].sum()):,} alarm, {int(m['warning'].sum()):,} warning), {s['links_down']:,} down")
    target(f"health grading of {a.ports:,} ports (BER + modules)", 1000 * grading, 100, "ms")


if __name__ == "__main__":
    main()
