"""Link downs of 200,000 ports per sweep (issue 37): observations turned into episodes and 24 h / 7 d windows.

Feeds ``--sweeps`` sweeps of ``--ports`` ports (60 s apart) to :class:`fabric_engine.health.downs.DownTracker`:
each sweep 0.05% of ports go down, ports down come back with probability 0.5, and 0.05% of ports up
show a LinkDownedCounter rise (a down between sweeps). Times :meth:`~DownTracker.observe` plus
:meth:`~DownTracker.status` per sweep (median) against the target of 50 ms. No Django. Run:
``.venv/bin/python tests/bench/bench_downs.py [--ports 200000] [--sweeps 30]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from fabric_engine.health.downs import DownTracker  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--ports", type=int, default=200_000)
    p.add_argument("--sweeps", type=int, default=30)
    a = p.parse_args()
    print(machine())
    print(deployed_allocator())
    rng = np.random.default_rng(37)
    n = a.ports
    guid = np.arange(n, dtype=np.uint64) // 64 + 0xB83FD20300000000
    port = np.arange(n) % 64 + 1
    up = np.ones(n, np.int8)
    ldc = rng.integers(0, 3, n).astype(np.float64)
    tracker = DownTracker()
    tracker.observe(0.0, guid, port, up, ldc)
    spent = []
    for k in range(1, a.sweeps + 1):
        back = (up == 0) & (rng.random(n) < 0.5)
        down = (up == 1) & (rng.random(n) < 0.0005)
        flap = (up == 1) & ~down & (rng.random(n) < 0.0005)
        up[down], up[back] = 0, 1
        ldc = np.minimum(ldc + down + flap, 255)
        start = time.perf_counter()
        tracker.observe(60.0 * k, guid, port, up, ldc)
        st = tracker.status()
        spent.append(time.perf_counter() - start)
    per_sweep = float(np.median(spent))
    e = tracker.episodes()
    print(f"ports {n:,}, {a.sweeps} sweeps: observe + status {1000 * per_sweep:.1f} ms per sweep (median), "
          f"worst {1000 * max(spent):.1f} ms; {e['slot'].size:,} episodes ({int(e['open'].sum()):,} open), "
          f"{int(st['repeated_downs'].sum()):,} ports with repeated downs")
    target(f"link downs of {n:,} ports per sweep (observe + 24h/7d status)", 1000 * per_sweep, 50, "ms")


if __name__ == "__main__":
    main()
