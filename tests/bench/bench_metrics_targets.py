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

Targets (issue 40): the largest target <= 10 MB and <= 1 s, entry read included.
Run: ``.venv/bin/python tests/bench/bench_metrics_targets.py [--repeat 3]``.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(machine())
    print(deployed_allocator())
    ok = True
    for gpus in (16_384, 32_768):
        f = build_fabric(loaded_rail_spec(gpus)["topology"])
        acc = CounterIntegrator(f)
        rate = np.full(2 * f.num_links, 8.0, np.float32)
        acc.add(FabricState(1, time.time(), 1.0, rate, rate / 400))
        labels, totals = labels_of(f), acc.totals
        ordered = totals[node_order(f)]
        blocks = [pickle.dumps({"version": "v", "rows": ordered[i:i + BLOCK_ROWS]}, pickle.HIGHEST_PROTOCOL)
                  for i in range(0, len(ordered), BLOCK_ROWS)]
        whole_read_s, _ = cpu(lambda b=blocks: [pickle.loads(x) for x in b], args.repeat)
        whole_s, whole = cpu(lambda la=labels, to=totals: render_families([metric_families(la, to, "rail")]),
                             args.repeat)
        bounds = node_ranges(port_nodes(labels), f.num_nodes, PORTS_PER_TARGET)
        rows = np.diff(np.searchsorted(np.sort(port_nodes(labels)), bounds))
        biggest = int(np.argmax(rows))
        part = (int(bounds[biggest]), int(bounds[biggest + 1]))
        at = np.searchsorted(np.sort(port_nodes(labels)), part)  # the part's rows in node order
        mine = blocks[at[0] // BLOCK_ROWS:-(-at[1] // BLOCK_ROWS)]
        read_s, _ = cpu(lambda b=mine: [pickle.loads(x) for x in b], args.repeat)
        part_s, part = cpu(lambda la=labels, to=totals, p=part: render_families([metric_families(
            la, to, "rail", nodes=p)]), args.repeat)
        mb = lambda text: len(text.encode()) / 1e6  # noqa: E731
        print(f"{gpus:,} GPUs: {2 * f.num_links:,} ports, whole scrape {mb(whole):.0f} MB in {whole_s:.2f} s CPU "
              f"({whole.count(chr(10)):,} lines); {len(bounds) - 1} parts of <= {PORTS_PER_TARGET} ports, the "
              f"largest {int(rows[biggest]):,} ports, {mb(part):.1f} MB in {part_s * 1000:.0f} ms CPU "
              f"({len(part.encode()) / rows[biggest]:.0f} bytes a port); its counters in {len(mine)} of the "
              f"cache's blocks, "
              f"{sum(map(len, mine)) / 1e6:.1f} MB read in {read_s * 1000:.1f} ms (the whole fabric's "
              f"{sum(map(len, blocks)) / 1e6:.0f} MB in {whole_read_s * 1000:.0f} ms)")
        ok &= target(f"/metrics largest target at {gpus:,} GPUs, size", mb(part), 10, "MB")
        ok &= target(f"/metrics largest target at {gpus:,} GPUs, render + counters read", part_s + read_s, 1, "s")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
