"""The engine, the feed and the solver at 4,096, 16,384 and 32,768 GPUs, side by side (issue 15).

Each size runs in its own process on :func:`fabric_engine.scenario.loaded_rail_spec`: a
rail-optimized 3-level NDR fabric (8 GPUs a node, 32 nodes a scalable unit, radix 64)
whose every GPU is in a 256-GPU job (ring, tree, hierarchical all-reduce and all-to-all in
turn, half packed, half scattered) with 10 % background. Per size it prints:

* build: fabric, routing and the jobs' flows (with each job solved alone), seconds; the
  start's slowest step; the engine's RSS while it ticks and the peak of its start;
* step: ``Emulator.step()``, median and worst of the timed ticks, ms;
* encode: the v1 JSON frame and the v2 binary frame as the runner encodes them
  (:mod:`ibweb.live.feed.encodings`: header, per-link arrays, one view's message), ms and bytes;
  the v2 decode of the documented numpy client;
* solver: the same greedy fill (the tick's pass 1) with the numpy fill (the plain
  vectorized reference kept in ``fabric_engine.flows``) and the compiled one, their ratio, and
  the largest relative difference of their rates (target <= 1e-9) with the number of incidence entries.

Targets (2-core machine): step at 32,768 GPUs <= 250 ms median, at 16,384 <= 100 ms;
v2 frame at 32,768 <= 1/10 of v1's bytes, decoded in < 20 ms; engine for 32,768 GPUs
< 2 GB RSS (while it runs, and at the peak of its start). ``step cpu`` is the tick's CPU
time: on a machine shared with other work it is the steadier figure of the two.
Run: ``python tests/bench/bench_scale.py [--quick] [--sizes 4096,16384]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402

SIZES = (4096, 16384, 32768)


def measure(gpus: int, ticks: int) -> dict:
    """Everything about one size, in this process (run by ``--one``)."""

    import numpy as np

    import fabric_engine.emulator as emulator_module
    from fabric_engine.feed_v2 import decode_frame
    from fabric_engine.flows import max_min_fair
    from fabric_engine.scenario import build_emulator, loaded_rail_spec
    from ibweb.live.feed.encodings import ENCODINGS

    marks: list[tuple[float, str]] = []
    t0 = time.perf_counter()
    emu = build_emulator(loaded_rail_spec(gpus), progress=lambda f, m: marks.append((time.perf_counter(), m)))
    build = time.perf_counter() - t0
    steps = [(b[0] - a[0], a[1]) for a, b in zip(marks, marks[1:], strict=False)]
    slowest = max(steps)
    captured = {}
    solve = emulator_module.solve_paced

    def spy(inc, cap, dem, w, *args, **kw):
        captured.update(inc=inc, cap=cap, dem=dem.copy(), w=w.copy())
        return solve(inc, cap, dem, w, *args, **kw)

    emulator_module.solve_paced = spy
    emu.step(now=0.0)  # the first tick allocates the tick's buffers
    emulator_module.solve_paced = solve
    times, cpu = [], []
    for i in range(ticks):
        t, c = time.perf_counter(), time.process_time()
        state = emu.step(now=float(i + 1))
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    totals = {"hosts": emu.fabric.num_hosts, "switches": emu.fabric.num_switches, "links": emu.fabric.num_links}

    def encode(name: str) -> tuple[str | bytes, float]:  # as the runner: header, shared arrays, a view's message
        enc, t = ENCODINGS[name], time.perf_counter()
        message = enc.frame(state.frame_header(totals), enc.shared(state))
        return message, time.perf_counter() - t

    v1, t_v1 = encode("v1")
    v2, t_v2 = encode("v2")
    decode = []
    for _ in range(5):
        t = time.perf_counter()
        header, links = decode_frame(v2)
        rate = links["util"] * emu.fabric.capacity_gbps  # what a client does for rates (capacity per directed link)
        decode.append(time.perf_counter() - t)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the reference solve below
    rss_mb = next(int(line.split()[1]) / 1024 for line in Path("/proc/self/status").read_text().splitlines()
                  if line.startswith("VmRSS:"))
    inc, cap, dem, w = captured["inc"], captured["cap"], captured["dem"], captured["w"]
    solver, rates = {}, {}
    for kernel in ("numpy", "compiled"):
        info: dict = {}
        t = time.perf_counter()
        rates[kernel] = max_min_fair(inc, cap, dem, w, kernel=kernel, info=info)
        solver[kernel] = time.perf_counter() - t
    ref, got = rates["numpy"], rates["compiled"]
    rel = float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300))) if len(ref) else 0.0
    return {"gpus": gpus, "links": 2 * emu.fabric.num_links, "flows": int(inc.shape[0]), "nnz": int(inc.nnz),
            "rounds": info["rounds"], "build_s": build, "slowest_start_step": [slowest[0], slowest[1]],
            "step_ms": [x * 1e3 for x in times], "step_cpu_ms": [x * 1e3 for x in cpu],
            "v1_ms": t_v1 * 1e3, "v1_bytes": len(v1), "v2_ms": t_v2 * 1e3,
            "v2_bytes": len(v2), "decode_ms": min(decode) * 1e3, "solver_numpy_s": solver["numpy"],
            "solver_compiled_s": solver["compiled"], "solver_max_rel_diff": rel, "rss_mb": rss_mb, "peak_mb": peak_mb,
            "rate_checksum": float(rate.sum())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer ticks")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--ticks", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        deployed_allocator()  # the engine process, as deployed
        print(json.dumps(measure(args.one, args.ticks)))
        return 0
    ticks = 5 if args.quick else 15
    print(machine())
    print(deployed_allocator())
    rows = []
    for gpus in (int(s) for s in args.sizes.split(",")):
        out = subprocess.run([sys.executable, __file__, "--one", str(gpus), "--ticks", str(ticks)], cwd=ROOT,
                             capture_output=True, text=True)
        if out.returncode:
            print(out.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"bench_scale: {gpus} GPUs failed")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"{'GPUs':>7} {'links':>8} {'flows':>10} {'rounds':>7} {'build s':>8} {'step ms':>8} {'cpu ms':>7} "
          f"{'max ms':>7} "
          f"{'v1 ms':>7} {'v1 MB':>6} {'v2 ms':>6} {'v2 kB':>7} {'v1/v2':>6} {'dec ms':>7} {'numpy s':>8} "
          f"{'C s':>6} {'ratio':>6} {'RSS MB':>7} {'peak MB':>8}")
    for r in rows:
        print(f"{r['gpus']:>7,} {r['links']:>8,} {r['flows']:>10,} {r['rounds']:>7,} {r['build_s']:>8.1f} "
              f"{statistics.median(r['step_ms']):>8.0f} {statistics.median(r['step_cpu_ms']):>7.0f} "
              f"{max(r['step_ms']):>7.0f} {r['v1_ms']:>7.0f} "
              f"{r['v1_bytes'] / 1e6:>6.2f} {r['v2_ms']:>6.0f} {r['v2_bytes'] / 1e3:>7.0f} "
              f"{r['v1_bytes'] / r['v2_bytes']:>6.1f} {r['decode_ms']:>7.1f} {r['solver_numpy_s']:>8.2f} "
              f"{r['solver_compiled_s']:>6.3f} {r['solver_numpy_s'] / r['solver_compiled_s']:>6.1f} "
              f"{r['rss_mb']:>7.0f} {r['peak_mb']:>8.0f}")
    for r in rows:
        print(f"{r['gpus']:,} GPUs: compiled vs numpy fill on {r['flows']:,} flows, {r['nnz']:,} incidence entries: "
              f"max relative rate difference {r['solver_max_rel_diff']:.2e}")
    for r in rows:
        secs, what = r["slowest_start_step"]
        print(f"{r['gpus']:,} GPUs: start {r['build_s']:.1f} s, slowest step {secs:.1f} s: {what}")
    by = {r["gpus"]: r for r in rows}
    worst = max(rows, key=lambda r: r["solver_max_rel_diff"])
    target(f"compiled solver rates vs the numpy fill, max relative difference ({worst['gpus']:,} GPUs, "
           f"{worst['nnz']:,} entries)", worst["solver_max_rel_diff"], 1e-9)
    if 32768 in by:
        r = by[32768]
        target("step, 32,768 GPUs fully loaded (median)", statistics.median(r["step_ms"]), 250, "ms")
        target("v2 frame / v1 frame bytes, 32,768 GPUs", r["v2_bytes"] / r["v1_bytes"], 0.1)
        target("v2 frame decoded by the numpy client, 32,768 GPUs", r["decode_ms"], 20, "ms")
        target("engine RSS while it runs, 32,768 GPUs", r["rss_mb"], 2048, "MB")
        target("engine peak RSS during its start (routing), 32,768 GPUs", r["peak_mb"], 2048, "MB")
    if 16384 in by:
        target("step, 16,384 GPUs fully loaded (median)", statistics.median(by[16384]["step_ms"]), 100, "ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
