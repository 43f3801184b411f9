"""The credit-flow-control congestion model beside max-min on one tick's flows (issue 41).

Run: ``python tests/bench/bench_congestion.py [--quick] [--gpus N]``. The fabric and flows are those of
``bench_scale.py`` (``loaded_rail_spec``: every GPU in a job, 10% background); the tick's rows are
captured from the emulator and solved both ways in this process:

* max-min (``flows.max_min_fair``, compiled), as the tick solves them today;
* the credit model (``fabric_engine.backpressure``): rows put in path order and made into hops once per
  flow set (as the emulator keeps its incidence), then :func:`credit_rates` per tick.

Target: the credit model's per-tick solve at 32,768 GPUs <= 250 ms (the tick's whole budget today).
Figures printed: times, iterations, and how far the model's rates are from max-min's.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402


def capture(gpus: int):
    """One tick's incidence, capacities, demands and weights at ``gpus`` GPUs, and the fabric."""
    import fabric_engine.emulator as emulator_module
    from fabric_engine.scenario import build_emulator, loaded_rail_spec

    emu = build_emulator(loaded_rail_spec(gpus))
    captured = {}
    solve = emulator_module.solve_paced

    def spy(inc, cap, dem, w, *args, **kw):
        captured.update(inc=inc, cap=cap.copy(), dem=dem.copy(), w=w.copy())
        return solve(inc, cap, dem, w, *args, **kw)

    emulator_module.solve_paced = spy
    try:
        emu.step(now=0.0)
        emu.step(now=1.0)
    finally:
        emulator_module.solve_paced = solve
    return emu.fabric, captured


def measure(gpus: int, repeat: int) -> dict:
    from fabric_engine.backpressure import Hops, credit_rates, order_paths
    from fabric_engine.flows import max_min_fair

    fabric, c = capture(gpus)
    inc, cap, dem, w = c["inc"], c["cap"], c["dem"], c["w"]
    t_mm = []
    for _ in range(repeat):
        t = time.perf_counter()
        fair = max_min_fair(inc, cap, dem, w)
        t_mm.append(time.perf_counter() - t)
    # Per flow set: the rows that carry anything, in path order, as hops (the emulator would keep these).
    t = time.perf_counter()
    a = inc.tocsr()
    live = np.flatnonzero(dem > 0)
    sub = a[live]
    n_links = len(fabric.dl_src)
    sub = sub[:, :n_links] if sub.shape[1] > n_links else sub
    indptr, links = order_paths(sub, fabric.dl_src, fabric.dl_dst)
    hops = Hops.from_paths(indptr, links, n_links)
    t_build = time.perf_counter() - t
    t_model, res = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        res = credit_rates(hops, cap[:n_links], dem[live])
        t_model.append(time.perf_counter() - t)
    model = res.rate
    ref = fair[live]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ref > 0, model / ref, 1.0)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"gpus": gpus, "rows": int(inc.shape[0]), "live_rows": int(len(live)), "hops": int(len(hops.row)),
            "pairs": hops.n_pairs, "maxmin_ms": statistics.median(t_mm) * 1e3, "build_ms": t_build * 1e3,
            "model_ms": statistics.median(t_model) * 1e3, "iterations": res.iterations, "converged": res.converged,
            "slower_2x": float((ratio < 0.5).mean()), "faster": float((ratio > 1.0 + 1e-6).mean()),
            "total_ratio": float(model.sum() / max(ref.sum(), 1e-300)), "held_links": int(res.held.sum()),
            "roots": int(res.root.sum()), "peak_mb": peak_mb}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4,096 GPUs only")
    ap.add_argument("--gpus", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(machine())
    print(deployed_allocator())
    gpus = args.gpus or (4096 if args.quick else 32768)
    r = measure(gpus, args.repeat)
    print(f"{r['gpus']} GPUs: {r['rows']} rows ({r['live_rows']} with demand), {r['hops']} hops, {r['pairs']} "
          f"(input, output) pairs")
    print(f"  max-min (compiled)        {r['maxmin_ms']:9.1f} ms per tick")
    print(f"  credit model: hops        {r['build_ms']:9.1f} ms per flow set")
    print(f"  credit model: solve       {r['model_ms']:9.1f} ms per tick, {r['iterations']} iterations, "
          f"converged {r['converged']}")
    print(f"  model / max-min: total {r['total_ratio']:.3f}; {r['slower_2x']:.1%} of flows at less than half, "
          f"{r['faster']:.1%} faster; {r['held_links']} links held back by credits, {r['roots']} roots")
    print(f"  peak RSS {r['peak_mb']:.0f} MB")
    if gpus == 32768:
        target("credit model solve per tick, 32,768 GPUs (median)", r["model_ms"], 250, "ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
