"""The congestion what-if (``whatif_congestion``, issue 41) at the live tick's fabric sizes: run time per side and
peak memory.

Run: ``python tests/bench/bench_congestion_whatif.py [--gpus 4096 32768]`` (default: 4,096 GPUs and the analysis's
host limit). The fabric and jobs are ``bench_scale.py``'s (``loaded_rail_spec``: every GPU in a job of 256), all
jobs' collectives at once as the analysis runs them: max-min, credit flow control, VL separation over 4 lanes and
congestion control (``CongestionControl.typical()``), each credit solve up to its cap of 400 iterations. Each size
runs in a process of its own, so that its peak resident memory is its own. Target: the analysis at its host limit
(:data:`fabric_engine.analysis.congestion.MAX_HOSTS`) within 300 s, as a background task with progress at each
side and round.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402

JOB_GPUS = 256


def run_one(gpus: int) -> dict:
    """The analysis on ``loaded_rail_spec(gpus)``: seconds, the seconds between progress reports (the longest), flows,
    hops, peak resident MiB, whether the credit side settled."""
    deployed_allocator()
    import fabric_engine.analysis.congestion as congestion
    from fabric_engine.scenario import build_emulator, loaded_rail_spec

    congestion.MAX_HOSTS = congestion.MAX_FLOWS = 10**9  # measured past the limits too
    emu = build_emulator(loaded_rail_spec(gpus, job_gpus=JOB_GPUS))
    stamps: list[tuple[float, str]] = []
    start = time.perf_counter()
    out = congestion.congestion_whatif(emu.routing, list(emu.jobs),
                                       progress=lambda f, m: stamps.append((time.perf_counter() - start, m)))
    total = time.perf_counter() - start
    gaps = [b[0] - a[0] for a, b in zip(stamps, stamps[1:], strict=False)]
    hops = next((m.split("(")[-1].split(" hops")[0] for _, m in stamps if " hops)" in m), "?")
    credit = next(s for s in out["sides"] if s["key"] == "credit")
    return {"gpus": gpus, "seconds": total, "longest_gap": max(gaps, default=0.0), "flows": out["params"]["flows"],
            "hops": hops, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "converged": credit["converged"]}


def main(argv: list[str] | None = None) -> int:
    from fabric_engine.analysis.congestion import MAX_HOSTS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, nargs="+", default=None)
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # a size in this process
    args = ap.parse_args(argv)
    if args.one is not None:
        print(json.dumps(run_one(args.one)))
        return 0
    print(machine())
    print(deployed_allocator())
    results = {}
    for gpus in args.gpus or sorted({4096, MAX_HOSTS}):  # loaded_rail_spec: one host per GPU
        out = subprocess.run([sys.executable, __file__, "--one", str(gpus)], check=True, capture_output=True,
                             text=True).stdout
        r = results[gpus] = json.loads(out.splitlines()[-1])
        print(f"{gpus:6d} GPUs: {r['flows']:,} flows, {r['hops']} hops: {r['seconds']:.1f} s, longest between "
              f"progress reports {r['longest_gap']:.1f} s, peak {r['rss_mib']:.0f} MiB (credit side settled: "
              f"{r['converged']})")
    if MAX_HOSTS in results:
        target(f"congestion what-if at its host limit, {MAX_HOSTS} GPUs", results[MAX_HOSTS]["seconds"], 300, "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
