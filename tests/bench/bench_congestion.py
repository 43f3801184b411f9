"""The credit-flow-control congestion model beside max-min on the tick's flows (issue 41).

Run: ``python tests/bench/bench_congestion.py [--quick] [--sizes 4096,32768] [--cold-iter N] [--tick-iter N]``.
The fabric and flows are those of ``bench_scale.py`` (``loaded_rail_spec``: every GPU in a job, 10%
background); two consecutive ticks' rows are captured from the emulator and solved in this process
(one process per size, so that one size's memory does not weigh on the next):

* max-min (``flows.max_min_fair``, compiled), as the tick solves them today;
* the credit model (``fabric_engine.backpressure``): rows put in path order and made into hops once per
  flow set (``build``, median of ``--repeat``), a cold solve of the first tick (at most ``--cold-iter``
  iterations), and the second tick warm-started from the first's result (``start=``, at most
  ``--tick-iter`` iterations: the live tick carries the iteration on from tick to tick);
* the numpy iteration on the same hops for a few iterations, against the compiled one (same rates).

Target: the credit model's warm-started tick at 32,768 GPUs <= 250 ms (the tick's whole budget today).
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

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402


def capture(gpus: int, ticks: int = 2):
    """``ticks`` consecutive ticks' incidence, capacities, demands and weights at ``gpus`` GPUs, and the fabric."""
    import fabric_engine.emulator as emulator_module
    from fabric_engine.scenario import build_emulator, loaded_rail_spec

    emu = build_emulator(loaded_rail_spec(gpus))
    captured: list[dict] = []
    solve = emulator_module.solve_paced

    def spy(inc, cap, dem, w, *args, **kw):
        captured.append({"inc": inc, "cap": cap.copy(), "dem": dem.copy(), "w": w.copy()})
        return solve(inc, cap, dem, w, *args, **kw)

    emulator_module.solve_paced = spy
    try:
        for t in range(ticks + 1):  # the first tick starts the jobs
            emu.step(now=float(t))
    finally:
        emulator_module.solve_paced = solve
    return emu.fabric, captured[-ticks:]


def measure(gpus: int, repeat: int, cold_iter: int, tick_iter: int) -> dict:
    from fabric_engine.backpressure import Hops, credit_rates, order_paths
    from fabric_engine.backpressure.solve import COMPILED
    from fabric_engine.flows import max_min_fair

    fabric, (c, c2) = capture(gpus)
    inc, cap, dem, w = c["inc"], c["cap"], c["dem"], c["w"]
    t_mm = []
    for _ in range(repeat):
        t = time.perf_counter()
        fair = max_min_fair(inc, cap, dem, w)
        t_mm.append(time.perf_counter() - t)
    # Per flow set: the rows that carry anything, in path order, as hops (kept while the flows stay).
    t_builds = []
    for _ in range(repeat):
        t = time.perf_counter()
        a = inc.tocsr()
        live = np.flatnonzero(dem > 0)
        n_links = len(fabric.dl_src)
        sub = a[live][:, :n_links] if a.shape[1] > n_links else a[live]
        indptr, links = order_paths(sub, fabric.dl_src, fabric.dl_dst)
        hops = Hops.from_paths(indptr, links, n_links)
        _ = hops.tables
        t_builds.append(time.perf_counter() - t)
    t_build = statistics.median(t_builds)
    cap_e = cap[:n_links]
    t = time.perf_counter()
    cold = credit_rates(hops, cap_e, dem[live], max_iter=cold_iter)
    t_cold = time.perf_counter() - t
    # The next tick: same flow set (the emulator keeps its incidence), that tick's demands, warm-started.
    same_rows = c2["inc"].shape == inc.shape and (c2["inc"].tocsr() != a).nnz == 0
    dem2 = c2["dem"][live] if same_rows else dem[live]
    t_tick, tick = [], cold
    for _ in range(repeat):
        t = time.perf_counter()
        tick = credit_rates(hops, cap_e, dem2, start=tick, max_iter=tick_iter)
        t_tick.append(time.perf_counter() - t)
    # The numpy iteration against the compiled one, a few iterations from the same start.
    few = 3
    t = time.perf_counter()
    by_numpy = credit_rates(hops, cap_e, dem[live], max_iter=few, compiled=False)
    t_numpy = (time.perf_counter() - t) / by_numpy.iterations
    by_c = credit_rates(hops, cap_e, dem[live], max_iter=few, compiled=COMPILED)
    diff = float(np.abs(by_numpy.rate - by_c.rate).max(initial=0.0) / max(float(cap_e.max()), 1e-300))
    ref = fair[live]
    model = tick.rate
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ref > 0, model / ref, 1.0)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"gpus": gpus, "rows": int(inc.shape[0]), "live_rows": int(len(live)), "hops": int(len(hops.row)),
            "pairs": hops.n_pairs, "lanes": hops.n_lanes, "compiled": COMPILED, "same_rows": bool(same_rows),
            "demand_moved": int((dem2 != dem[live]).sum()),
            "maxmin_ms": statistics.median(t_mm) * 1e3, "build_ms": t_build * 1e3,
            "cold_ms": t_cold * 1e3, "cold_iterations": cold.iterations, "cold_converged": cold.converged,
            "tick_ms": statistics.median(t_tick) * 1e3, "tick_iterations": tick.iterations,
            "tick_converged": tick.converged, "numpy_iter_ms": t_numpy * 1e3,
            "c_iter_ms": t_cold * 1e3 / cold.iterations, "numpy_vs_c": diff,
            "slower_2x": float((ratio < 0.5).mean()), "faster": float((ratio > 1.0 + 1e-6).mean()),
            "total_ratio": float(model.sum() / max(ref.sum(), 1e-300)), "held_links": int(tick.held.sum()),
            "roots": int(tick.root.sum()), "peak_mb": peak_mb}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4,096 GPUs only")
    ap.add_argument("--sizes", default="4096,32768")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cold-iter", type=int, default=0,
                    help="iterations of the cold solve at most (default 400; 100 above 8,192 GPUs, to bound the run)")
    ap.add_argument("--tick-iter", type=int, default=4, help="iterations of a warm-started tick at most")
    ap.add_argument("--one", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        deployed_allocator()
        cold_iter = args.cold_iter or (400 if args.one <= 8192 else 100)
        print(json.dumps(measure(args.one, args.repeat, cold_iter, args.tick_iter)))
        return 0
    print(machine())
    print(deployed_allocator())
    sizes = [4096] if args.quick else [int(s) for s in args.sizes.split(",")]
    rows = []
    for gpus in sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(gpus), "--repeat", str(args.repeat),
                              "--cold-iter", str(args.cold_iter), "--tick-iter", str(args.tick_iter)],
                             cwd=ROOT, capture_output=True, text=True)
        if out.returncode:
            print(out.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"bench_congestion: {gpus} GPUs failed")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"{'GPUs':>7} {'rows':>10} {'hops':>10} {'pairs':>9} {'max-min ms':>10} {'build ms':>9} "
          f"{'cold ms':>9} {'cold it':>7} {'conv':>5} {'tick ms':>8} {'tick it':>7} {'conv':>5} "
          f"{'tick/mm':>7} {'C it ms':>8} {'np it ms':>8} {'np/C':>5} {'peak MB':>8}")
    for r in rows:
        print(f"{r['gpus']:>7,} {r['live_rows']:>10,} {r['hops']:>10,} {r['pairs']:>9,} {r['maxmin_ms']:>10.1f} "
              f"{r['build_ms']:>9.0f} {r['cold_ms']:>9.0f} {r['cold_iterations']:>7} {str(r['cold_converged']):>5} "
              f"{r['tick_ms']:>8.1f} {r['tick_iterations']:>7} {str(r['tick_converged']):>5} "
              f"{r['tick_ms'] / r['maxmin_ms']:>7.1f} {r['c_iter_ms']:>8.1f} {r['numpy_iter_ms']:>8.1f} "
              f"{r['numpy_iter_ms'] / r['c_iter_ms']:>5.1f} {r['peak_mb']:>8.0f}")
    for r in rows:
        print(f"{r['gpus']:,} GPUs: model / max-min: total {r['total_ratio']:.3f}; {r['slower_2x']:.1%} of flows at "
              f"less than half, {r['faster']:.1%} faster; {r['held_links']} links held back by credits, "
              f"{r['roots']} roots; next tick: {'same rows' if r['same_rows'] else 'rows changed'}, "
              f"{r['demand_moved']} demands moved; compiled {r['compiled']}, numpy vs C max rate difference "
              f"{r['numpy_vs_c']:.1e} of a link")
    by = {r["gpus"]: r for r in rows}
    worst = max(rows, key=lambda r: r["numpy_vs_c"])
    target(f"credit model: numpy iteration vs the compiled one, max rate difference ({worst['gpus']:,} GPUs)",
           worst["numpy_vs_c"], 1e-9)
    if 4096 in by:
        target("credit model hops built per flow set, 4,096 GPUs", by[4096]["build_ms"], 1000, "ms")
    if 32768 in by:
        target("credit model tick (warm-started) per tick, 32,768 GPUs (median)", by[32768]["tick_ms"], 250, "ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
