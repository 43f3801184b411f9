"""``/metrics`` at scale, whole and in parts (issue 40): size and time of one scrape of a fabric's every port
against its largest part (``/metrics?fabric=<slug>&part=<k>``, ``IBWEB_METRICS_TARGET_PORTS`` ports).

The fabrics are the loaded rail-optimized fabrics of the scale benches (:func:`fabric_engine.scenario.
loaded_rail_spec`'s topology) at 16,384 and 32,768 GPUs, every port with the counters an emulated fabric exports
(:class:`~fabric_engine.telemetry.prometheus.CounterIntegrator` after one tick at 8 Gb/s). Timed as the view
renders a scrape (:func:`~fabric_engine.telemetry.prometheus.metric_families` and
:func:`~fabric_engine.telemetry.prometheus.render_families`, labels from
:func:`ibweb.runtime.metrics.port_labels`), median of ``--repeat`` runs of CPU time; plus the read of the counters
each scrape makes: the blocks of :data:`ibweb.runtime.metrics.BLOCK_ROWS` rows (ordered by node) that hold its ports,
pickled as Django's Redis cache stores them, then unpickled (the whole fabric's counters, for comparison).

That is the stand-in: one process rendering the parts one after another. Then the real thing
(:mod:`tests.bench.metrics_scrape`): the same two fabrics published by one ``run_engine`` process, ibweb served as
``compose.yaml`` runs it (``--workers 4``), and a real Prometheus discovering the targets through ``/metrics/targets``
and scraping every one of them for ``--rounds`` scrape intervals (``--interval``, timeout ``--timeout``); from
Prometheus itself: the largest target's body (``scrape_body_size_bytes``) and samples, the slowest scrape
(``scrape_duration_seconds``), and per round whether every target was scraped and up, with the round's summed
scrape time beside the interval (what scrapes made one after another would need).

Targets (issue 40): the largest target <= 10 MB and its scrape <= 1 s (stand-in: render + counters read; served:
Prometheus' slowest scrape), every scrape of a round done and up within the scrape interval.
Run: ``.venv/bin/python tests/bench/bench_metrics_targets.py [--repeat 3] [--workers 4] [--interval 30]
[--rounds 3]`` (a few minutes; ``--no-server``: the stand-in alone; Redis: ``BENCH_REDIS_URL``, default db 10, in a
namespace of its own that is deleted at the end).
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")
import django  # noqa: E402

django.setup()

from fabric_engine.scenario import build_fabric, loaded_rail_spec  # noqa: E402
from fabric_engine.state import FabricState  # noqa: E402
from fabric_engine.telemetry.metric_targets import node_ranges  # noqa: E402
from fabric_engine.telemetry.prometheus import (  # noqa: E402
    CounterIntegrator,
    metric_families,
    port_nodes,
    render_families,
)
from ibweb.runtime.metrics import BLOCK_ROWS, node_order  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402

GPUS = (16_384, 32_768)
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/10")

PORTS_PER_TARGET = 2048  # IBWEB_METRICS_TARGET_PORTS' default


def labels_of(f) -> dict:
    """What ibweb.runtime.metrics.port_labels keeps of a fabric (without Django)."""
    return {"nodes": {"name": np.array([str(n) for n in f.node_name], dtype=object),
                      "guid": np.array([f"0x{g:016x}" for g in f.guid.tolist()], dtype=object)},
            "links": {"a_node": f.a_node, "a_port": f.a_port, "b_node": f.b_node, "b_port": f.b_port}}


def cpu(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return statistics.median(times), out


def stand_in(gpus: int, repeat: int) -> bool:
    """The parts rendered one after another in this process; prints the figures and the targets' lines."""
    f = build_fabric(loaded_rail_spec(gpus)["topology"])
    acc = CounterIntegrator(f)
    rate = np.full(2 * f.num_links, 8.0, np.float32)
    acc.add(FabricState(1, time.time(), 1.0, rate, rate / 400))
    labels, totals = labels_of(f), acc.totals
    ordered = totals[node_order(f)]
    blocks = [pickle.dumps({"version": "v", "rows": ordered[i:i + BLOCK_ROWS]}, pickle.HIGHEST_PROTOCOL)
              for i in range(0, len(ordered), BLOCK_ROWS)]
    whole_read_s, _ = cpu(lambda b=blocks: [pickle.loads(x) for x in b], repeat)
    whole_s, whole = cpu(lambda la=labels, to=totals: render_families([metric_families(la, to, "rail")]), repeat)
    bounds = node_ranges(port_nodes(labels), f.num_nodes, PORTS_PER_TARGET)
    rows = np.diff(np.searchsorted(np.sort(port_nodes(labels)), bounds))
    biggest = int(np.argmax(rows))
    part = (int(bounds[biggest]), int(bounds[biggest + 1]))
    at = np.searchsorted(np.sort(port_nodes(labels)), part)  # the part's rows in node order
    mine = blocks[at[0] // BLOCK_ROWS:-(-at[1] // BLOCK_ROWS)]
    read_s, _ = cpu(lambda b=mine: [pickle.loads(x) for x in b], repeat)
    part_s, part = cpu(lambda la=labels, to=totals, p=part: render_families([metric_families(
        la, to, "rail", nodes=p)]), repeat)
    mb = lambda text: len(text.encode()) / 1e6  # noqa: E731
    print(f"stand-in, {gpus:,} GPUs: {2 * f.num_links:,} ports, whole scrape {mb(whole):.0f} MB in {whole_s:.2f} s "
          f"CPU ({whole.count(chr(10)):,} lines); {len(bounds) - 1} parts of <= {PORTS_PER_TARGET} ports, the "
          f"largest {int(rows[biggest]):,} ports, {mb(part):.1f} MB in {part_s * 1000:.0f} ms CPU "
          f"({len(part.encode()) / rows[biggest]:.0f} bytes a port); its counters in {len(mine)} of the "
          f"cache's blocks, {sum(map(len, mine)) / 1e6:.1f} MB read in {read_s * 1000:.1f} ms (the whole fabric's "
          f"{sum(map(len, blocks)) / 1e6:.0f} MB in {whole_read_s * 1000:.0f} ms); every part one after another "
          f"about {(len(bounds) - 1) * (part_s + read_s):.1f} s CPU", flush=True)
    ok = target(f"/metrics largest target at {gpus:,} GPUs (stand-in), size", mb(part), 10, "MB")
    return ok & target(f"/metrics largest target at {gpus:,} GPUs (stand-in), render + counters read",
                       part_s + read_s, 1, "s")


def served(sizes: tuple[int, ...], workers: int, interval_s: int, timeout_s: int, rounds: int) -> bool:
    """A real Prometheus scraping the targets of a real ibweb of ``workers`` web processes; prints what Prometheus
    measured and the targets' lines."""
    from tests.bench.metrics_scrape import (
        cpu_seconds,
        round_figures,
        running_prometheus,
        running_stack,
        target_figures,
    )

    fabrics = [{"name": f"Rail {gpus}", "slug": f"rail-{gpus}", "tick_s": 1.0, "spec": loaded_rail_spec(gpus)}
               for gpus in sizes]
    started = time.monotonic()
    with running_stack(fabrics, workers, REDIS_URL) as stack:
        groups = stack.targets()
        print(f"served: {workers} web workers (python -m ibweb.serve --workers {workers}), one run_engine for "
              f"{', '.join(f['slug'] for f in fabrics)}, published in {time.monotonic() - started:.0f} s; "
              f"/metrics/targets lists {len(groups)} targets; {machine()}", flush=True)
        with running_prometheus(stack, interval_s, timeout_s) as prom:
            # the first interval spreads the targets' first scrapes; then ``rounds`` whole intervals are measured
            prom.wait(lambda p: len(p.query('up{job="ibweb"}')["result"]) == len(groups), 120,
                      "every target discovered")
            begin = time.time() + interval_s
            time.sleep(max(0.0, begin - time.time()))
            groups_of = {"web": stack.web_pids(), "engine": [stack.procs[1].pid], "Prometheus": [prom.proc.pid]}
            cpu0 = {name: cpu_seconds(pids) for name, pids in groups_of.items()}
            time.sleep(max(0.0, begin + rounds * interval_s + 1 - time.time()))
            end = time.time()
            cores = {name: (cpu_seconds(pids) - cpu0[name]) / (end - begin)
                     for name, pids in groups_of.items()}
            per_target = target_figures(prom, int(end - begin))
            per_round = round_figures(prom, begin + interval_s, end, interval_s)
        print(f"after the scrapes: {machine()}", flush=True)
    ok = True
    for gpus, fabric in zip(sizes, fabrics, strict=True):
        mine = {i: v for i, v in per_target.items() if f"fabric={fabric['slug']}&" in i}
        largest = max(mine.values(), key=lambda v: v.get("bytes", v["samples"]))
        slowest = max(v["duration_s"] for v in mine.values())
        scrapes, up = sum(v["scrapes"] for v in mine.values()), sum(v["up"] for v in mine.values())
        size = largest.get("bytes", float("nan")) / 1e6
        name = next(i for i, v in mine.items() if v is largest).split("?", 1)[1]
        print(f"served, {gpus:,} GPUs: {len(mine)} targets, {int(scrapes)} scrapes over {rounds} intervals of "
              f"{interval_s} s, {int(up)} up; largest target {size:.1f} MB ({int(largest['samples']):,} samples, "
              f"{name}), "
              f"slowest scrape {slowest * 1000:.0f} ms; median target's slowest scrape "
              f"{statistics.median(v['duration_s'] for v in mine.values()) * 1000:.0f} ms", flush=True)
        ok &= target(f"/metrics largest target at {gpus:,} GPUs (Prometheus, {workers} web workers), size", size,
                     10, "MB")
        ok &= target(f"/metrics slowest scrape at {gpus:,} GPUs (Prometheus, {workers} web workers)", slowest, 1,
                     "s")
    measured = sum(r.get("scrapes", 0) for r in per_round)
    print(f"CPU over the {len(per_round)} measured rounds: web processes {cores['web']:.2f} cores "
          f"({cores['web'] * interval_s / max(1, measured / len(per_round)) * 1000:.0f} ms a scrape), engine "
          f"{cores['engine']:.2f}, Prometheus {cores['Prometheus']:.2f} "
          f"({cores['Prometheus'] * interval_s / max(1, measured / len(per_round)) * 1000:.0f} ms a scrape)",
          flush=True)
    for k, r in enumerate(per_round):
        print(f"round {k + 1}: {int(r.get('scrapes', 0))} scrapes of {len(groups)} targets, {int(r.get('up', 0))} "
              f"up; summed scrape time {r.get('total_s', float('nan')):.1f} s in an interval of {interval_s} s, "
              f"slowest {r.get('slowest_s', float('nan')) * 1000:.0f} ms", flush=True)
    complete = sum(r.get("up", 0) == len(groups) and r.get("scrapes", 0) == len(groups) for r in per_round)
    ok &= target(f"/metrics rounds with every target scraped and up within {interval_s} s", complete,
                 len(per_round), "rounds", at_least=True)
    return ok


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=4, help="web processes (compose.yaml: 4)")
    ap.add_argument("--interval", type=int, default=30, help="scrape interval, s (compose's Prometheus: 30)")
    ap.add_argument("--timeout", type=int, default=10, help="scrape timeout, s (Prometheus' default: 10)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gpus", type=int, nargs="+", default=list(GPUS), help="fabric sizes (GPUs)")
    ap.add_argument("--no-server", action="store_true", help="the stand-in alone")
    args = ap.parse_args()
    print(machine())
    print(deployed_allocator())
    ok = True
    for gpus in args.gpus:
        ok &= stand_in(gpus, args.repeat)
    if not args.no_server:
        ok &= served(tuple(args.gpus), args.workers, args.interval, args.timeout, args.rounds)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
