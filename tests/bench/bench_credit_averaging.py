"""The credit model's solves that do not stop: the mean of their last half of iterates against their last iterate.

Run: ``python tests/bench/bench_credit_averaging.py [--max-iter 1000,400] [--tick-iter 100,25,10] [--gpus 4096]``
(about 30 s; with ``--gpus`` some 2 minutes more at 4,096).

Cases: the generator of ``tests/fabric_engine/backpressure/test_compiled_and_warm.py``, seeds 0-199 with
``20 + (7 * seed) % 180`` flows on the 16-host fat tree, two lanes for seeds that are multiples of 5 (those of
docs/workloads-and-congestion.md's Convergence paragraph: 88 do not stop within 1,000 iterations). For each case
that does not stop within ``max_iter``: the distance (max over rows, fraction of a link) of the returned rates from
the long run's, the mean of iterates 2,001-6,000 (``credit_rates(max_iter=6000, average_from=2001)``; the converged
iterate for a case that stops before), with the last iterate returned (``average_from=max_iter + 1``, as before) and
with the default (the mean of iterates ``max_iter // 2 + 1`` to ``max_iter``). ``--tick-iter``: the same cases solved
as a live tick with a budget does, warm-started from the last result each time (static demands) for 1,000
iterations in all: the distance averaged over the second half of the ticks. ``--gpus``: the rows of
``bench_congestion.py`` (``loaded_rail_spec``) at that size, a cold solve of 400 iterations with and without the
mean (time, median of 3) and its distance from the mean of iterates 801-1,200.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fabric_engine.backpressure import credit_rates  # noqa: E402
from tests.fabric_engine.backpressure.test_compiled_and_warm import random_case  # noqa: E402

SEEDS = range(200)


def case(seed: int):
    return random_case(seed, 20 + (7 * seed) % 180, 2 if seed % 5 == 0 else 1)


def stats(x: list[float]) -> str:
    a = np.asarray(x)
    return f"median {np.median(a):.4f}, p90 {np.quantile(a, 0.9):.4f}, max {a.max():.4f}"


def long_run(seed: int) -> np.ndarray:
    hops, cap, dem, w = case(seed)
    return credit_rates(hops, cap, dem, w, max_iter=6000, average_from=2001).rate


def one_solve(max_iter: int, refs: dict[int, np.ndarray]) -> None:
    last_d, mean_d, n_avg = [], [], 0
    for seed in SEEDS:
        hops, cap, dem, w = case(seed)
        mean = credit_rates(hops, cap, dem, w, max_iter=max_iter)
        if mean.converged:
            continue
        last = credit_rates(hops, cap, dem, w, max_iter=max_iter, average_from=max_iter + 1)
        ref = refs.setdefault(seed, long_run(seed))
        last_d.append(float(np.abs(last.rate - ref).max()))
        mean_d.append(float(np.abs(mean.rate - ref).max()))
        n_avg = mean.averaged
    closer = sum(m < v for m, v in zip(mean_d, last_d, strict=True))
    print(f"max_iter {max_iter}: {len(last_d)} of {len(SEEDS)} do not stop; distance from the long run's rates")
    print(f"  last iterate          {stats(last_d)}")
    print(f"  mean of the last {n_avg:<4d} {stats(mean_d)}  (closer in {closer}, farther in {len(mean_d) - closer})")


def ticks(per_tick: int, refs: dict[int, np.ndarray], total: int = 1000) -> None:
    dist: dict[str, list[float]] = {"last iterate": [], "mean": []}
    stopped = dict.fromkeys(dist, 0)
    for seed in SEEDS:
        hops, cap, dem, w = case(seed)
        if credit_rates(hops, cap, dem, w, max_iter=total).converged:
            continue
        ref = refs.setdefault(seed, long_run(seed))
        for mode in dist:
            res, d = None, []
            for k in range(total // per_tick):
                res = credit_rates(hops, cap, dem, w, max_iter=per_tick, start=res,
                                   average_from=per_tick + 1 if mode == "last iterate" else None)
                if k >= total // per_tick // 2:
                    d.append(float(np.abs(res.rate - ref).max()))
            dist[mode].append(float(np.mean(d)))
            stopped[mode] += res.converged
    print(f"warm-started ticks of {per_tick} iterations ({len(dist['mean'])} cases that do not stop in {total}):")
    for mode, d in dist.items():
        print(f"  {mode:14s} {stats(d)}; the last tick converged in {stopped[mode]}")


def fabric(gpus: int, repeat: int = 3) -> None:
    from fabric_engine.backpressure import Hops, order_paths
    from tests.bench.bench_congestion import capture
    from tests.bench.targets import deployed_allocator

    deployed_allocator()
    fab, (c, _) = capture(gpus)
    live = np.flatnonzero(c["dem"] > 0)
    n_links = len(fab.dl_src)
    a = c["inc"].tocsr()[live]
    indptr, links = order_paths(a[:, :n_links] if a.shape[1] > n_links else a, fab.dl_src, fab.dl_dst)
    hops = Hops.from_paths(indptr, links, n_links)
    cap, dem = c["cap"][:n_links], c["dem"][live]
    times: dict[str, list[float]] = {"last iterate": [], "mean": []}
    out = {}
    for _ in range(repeat):
        for mode in times:
            t = time.perf_counter()
            out[mode] = credit_rates(hops, cap, dem, max_iter=400, average_from=401 if mode == "last iterate" else None)
            times[mode].append(time.perf_counter() - t)
    ref = credit_rates(hops, cap, dem, max_iter=1200, average_from=801).rate
    top = float(cap.max())
    print(f"{gpus} GPUs: {hops.rows} rows, {len(hops.row)} hops; cold solve of 400 iterations, distance from the mean "
          f"of iterates 801-1,200 (fraction of the fastest link)")
    for mode, res in out.items():
        off = np.abs(res.rate - ref) / top
        print(f"  {mode:14s} {statistics.median(times[mode]):.2f} s, converged {res.converged}, averaged "
              f"{res.averaged}; max {off.max():.3f}, rows off by more than 0.01: {int((off > 0.01).sum())}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-iter", default="1000,400")
    ap.add_argument("--tick-iter", default="100,25,10")
    ap.add_argument("--gpus", type=int, default=0, help="also the rows of bench_congestion.py at this size")
    args = ap.parse_args(argv)
    refs: dict[int, np.ndarray] = {}
    for m in filter(None, args.max_iter.split(",")):
        one_solve(int(m), refs)
    for m in filter(None, args.tick_iter.split(",")):
        ticks(int(m), refs)
    if args.gpus:
        fabric(args.gpus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
