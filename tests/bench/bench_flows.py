"""Benchmarks of the flow solver, the emulator tick and eBB (prints figures; no assertions).

Run: ``python tests/bench/bench_flows.py [--quick]``. Targets (issue 5):

* ``max_min_fair`` on the 2048-host 2-level fat tree up to 1,000,000 flows;
  at least 50x faster per flow than the plainly written reference in
  ``tests/fabric_engine/test_flows.py``, and within 5x of one sparse matrix-vector
  product per filling round;
* an emulator tick of 64 jobs on 2048 hosts under 100 ms (the demo: low ms);
* eBB with 1,000 patterns on 2048 hosts under 10 s.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fabric_engine.analysis import effective_bisection_bandwidth  # noqa: E402
from fabric_engine.flows import max_min_fair  # noqa: E402
from fabric_engine.routing import route  # noqa: E402
from fabric_engine.scenario import DEMO_SPEC, build_emulator  # noqa: E402
from fabric_engine.topology.generate import fat_tree  # noqa: E402
from fabric_engine.workload import expand_jobs  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402


def _reference():
    spec = importlib.util.spec_from_file_location("test_flows", ROOT / "tests/fabric_engine/test_flows.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.reference_max_min, mod.as_rows


def best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_demo() -> None:
    emu = build_emulator(DEMO_SPEC)
    jf = expand_jobs(emu.jobs, emu.fabric, emu.routing.paths)
    inc, cap = jf.incidence, emu.capacity
    info: dict = {}
    t = best(lambda: max_min_fair(inc, cap, info=info), 5)
    print(f"demo 512 hosts, all 8 jobs active: {inc.shape[0]} flows, {inc.nnz} nonzeros, "
          f"{info['rounds']} rounds: max_min_fair {t * 1e3:.2f} ms")
    for _ in range(5):
        emu.step(now=0)
    n = 50
    t0 = time.perf_counter()
    for _ in range(n):
        emu.step(now=0)
    print(f"demo emulator.step(): {(time.perf_counter() - t0) / n * 1e3:.2f} ms per tick (mean of {n})")


def bench_solver(sizes: list[int], ref_flows: int) -> None:
    f = fat_tree(hosts=2048, radix=64)
    r = route(f)
    rng = np.random.default_rng(1)
    reference, as_rows = _reference()
    per_flow = {}
    for n in sizes:
        src, dst = rng.choice(f.hosts, n), rng.choice(f.hosts, n)
        keep = src != dst
        src, dst = src[keep], dst[keep]
        t = time.perf_counter()
        inc = r.paths(src, dst)
        t_paths = time.perf_counter() - t
        info: dict = {}
        t_solve = best(lambda inc=inc, info=info: max_min_fair(inc, f.capacity_gbps, info=info), 1 if n > 2e5 else 3)
        x = np.ones(inc.shape[0])
        at = inc.T.tocsr()
        t_spmv = best(lambda at=at, x=x: at @ x, 5)
        floor = t_spmv * info["rounds"]
        per_flow[n] = t_solve / len(src)
        print(f"2048 hosts, {len(src):>9,} flows ({inc.nnz:,} nonzeros): paths {t_paths:.3f} s, "
              f"max_min_fair {t_solve:.3f} s = {len(src) / t_solve:,.0f} flows/s, {info['rounds']} rounds; "
              f"one SpMV {t_spmv * 1e3:.2f} ms x rounds = {floor:.2f} s, solver / floor = {t_solve / floor:.3f}")
    sub = r.paths(*(rng.choice(f.hosts, ref_flows), rng.choice(f.hosts, ref_flows)))
    rows = as_rows(sub)
    t = time.perf_counter()
    reference(rows, f.capacity_gbps.tolist(), [np.inf] * len(rows), [1.0] * len(rows))
    t_ref = (time.perf_counter() - t) / len(rows)
    big = max(per_flow)
    print(f"reference (plain Python) on {ref_flows:,} flows: {t_ref * 1e6:.1f} us/flow; solver at {big:,} flows "
          f"{per_flow[big] * 1e6:.2f} us/flow: {t_ref / per_flow[big]:.0f}x faster per flow (target >= 50x)")
    target("max_min_fair per flow, speed-up over the plain Python reference", t_ref / per_flow[big], 50, "x",
           at_least=True)


def bench_emulator_64_jobs() -> None:
    patterns = ["ring_allreduce", "tree_allreduce", "hierarchical_allreduce", "all_to_all", "pipeline",
                "uniform_random"]
    jobs = [{"name": f"job{k:02d}", "tenant": f"tenant{k % 5}", "hosts": 32,
             "placement": "scattered" if k % 3 == 0 else "packed", "pattern": patterns[k % len(patterns)],
             "buffer_gb": 1 + k % 7, "compute_s": 0.3 + 0.05 * (k % 10)} for k in range(64)]
    spec = {"topology": {"generator": "fat_tree", "hosts": 2048, "radix": 64, "levels": 2, "speed": "NDR"},
            "routing": "minhop", "jobs": jobs, "background": {"fraction": 0.1, "gbps": 20}, "tick_s": 1.0, "seed": 1}
    t = time.perf_counter()
    emu = build_emulator(spec)
    t_build = time.perf_counter() - t
    for _ in range(3):
        emu.step(now=0)
    n = 20
    t0 = time.perf_counter()
    for _ in range(n):
        emu.step(now=0)
    step_ms = (time.perf_counter() - t0) / n * 1e3
    print(f"emulator, 64 jobs on 2048 hosts ({len(emu._jf.flows):,} job flows): build {t_build:.2f} s, "
          f"step {step_ms:.1f} ms per tick (target < 100 ms)")
    target("emulator step, 64 jobs on 2048 hosts", step_ms, 100, "ms")


def bench_ebb(patterns: int) -> None:
    r = route(fat_tree(hosts=2048, radix=64))
    t = time.perf_counter()
    res = effective_bisection_bandwidth(r, patterns, 1)
    t_count = time.perf_counter() - t
    t = time.perf_counter()
    mm = effective_bisection_bandwidth(r, max(patterns // 10, 1), 1, method="maxmin")
    t_mm = time.perf_counter() - t
    print(f"eBB 2048 hosts, minhop, {patterns} bisections: {res.ebb:.4f} in {t_count:.2f} s (target < 10 s); "
          f"max-min variant over {mm.patterns}: {mm.ebb:.4f} in {t_mm:.2f} s")
    target(f"eBB of {patterns} bisections, 2048 hosts", t_count, 10, "s")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    print(machine())
    print(deployed_allocator())
    bench_demo()
    bench_solver([10_000, 100_000] if quick else [10_000, 100_000, 1_000_000], 300 if quick else 5000)
    bench_emulator_64_jobs()
    bench_ebb(100 if quick else 1000)
