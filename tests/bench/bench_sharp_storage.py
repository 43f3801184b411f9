"""Benchmark of the demo's tick with SHARP and storage modelled (prints figures; no assertions).

Run: ``python tests/bench/bench_sharp_storage.py [--quick]``. Prints the median and
worst step time of the demo (8 jobs, 3 on SHARP trees, data loading, a checkpointing
job, background reads) against the same demo without SHARP and storage, the cost of
expanding the workload again when a tree is allocated, and a larger case (2048 GPU
hosts, 32 storage servers, 64 jobs, half on SHARP). Target: the demo's tick in low
milliseconds, the 2048-host tick under 100 ms (as issue 5's emulator bench).
"""

from __future__ import annotations

import copy
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fabric_engine.scenario import DEMO_SPEC, build_emulator  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402


def _ticks(spec: dict, n: int) -> tuple[list[float], object]:
    emu = build_emulator(spec)
    times = []
    for i in range(n):
        t = time.perf_counter()
        emu.step(now=float(i))
        times.append(time.perf_counter() - t)
    return times, emu


def _plain(spec: dict) -> dict:
    out = copy.deepcopy(spec)
    out.pop("sharp", None)
    out.pop("storage", None)
    for j in out["jobs"]:
        for k in ("sharp", "read_gbps", "checkpoint"):
            j.pop(k, None)
    return out


def _big() -> dict:
    jobs = []
    for k in range(64):
        jobs.append({"name": f"job{k:02d}", "tenant": f"t{k % 4}", "hosts": 32,
                     "placement": "scattered" if k % 3 else "packed", "buffer_gb": 2 + k % 5,
                     "compute_s": 0.5 + 0.05 * (k % 7), "sharp": k % 2 == 0, "read_gbps": 50.0 * (k % 3),
                     **({"checkpoint": {"params": 7e9, "every": 15}} if k % 8 == 0 else {})})
    return {"topology": {"generator": "fat_tree", "hosts": 2048, "radix": 64, "levels": 3, "speed": "NDR",
                         "storage_servers": 32, "storage_ports": 2},
            "routing": "minhop", "jobs": jobs, "background": {"fraction": 0.1, "gbps": 20},
            "storage": {"background_read_gbps": 400}, "tick_s": 1.0, "seed": 1}


def main() -> None:
    quick = "--quick" in sys.argv
    print(machine())
    print(deployed_allocator())
    n = 30 if quick else 120
    with_all, emu = _ticks(DEMO_SPEC, n)
    plain, _ = _ticks(_plain(DEMO_SPEC), n)
    med, base = statistics.median(with_all), statistics.median(plain)
    print(f"demo tick, SHARP + storage: median {med * 1e3:.2f} ms, max {max(with_all) * 1e3:.2f} ms ({n} ticks)")
    print(f"demo tick, neither:         median {base * 1e3:.2f} ms, max {max(plain) * 1e3:.2f} ms")
    print(f"ratio with / without: {med / base:.2f}x")
    t = time.perf_counter()
    emu._load(emu.jobs, emu._saved())
    print(f"re-expansion after a tree change (demo): {(time.perf_counter() - t) * 1e3:.2f} ms")
    state = emu.step(now=float(n))
    print(f"trees in use {state.sharp['trees_in_use']}, storage read {state.storage['totals']['read_gbps']:.0f} Gb/s")
    big, emu = _ticks(_big(), 10 if quick else 40)
    print(f"2048 GPU hosts + 32 storage servers, 64 jobs: median {statistics.median(big[1:]) * 1e3:.1f} ms, "
          f"first (allocations) {big[0] * 1e3:.1f} ms, trees {len(emu.sharp.manager.trees)}")
    target("tick with SHARP and storage, 2048 GPU hosts, 64 jobs (median)", statistics.median(big[1:]) * 1e3, 100,
           "ms")


if __name__ == "__main__":
    main()
