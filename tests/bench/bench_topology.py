"""Topology speed (issue 3): parse a 20,000-host ibnetdiscover file; generate a 65,536-host fat tree.

Run ``python tests/bench/bench_topology.py``. Each figure is the best of a few timed
runs (seconds, wall clock) and the peak Python heap of one extra run under
``tracemalloc`` (which slows code down, so it is never timed). Target: each under
3 s on the 2-core reference machine.

A 65,536-host 3-level radix-64 fat tree needs 70,656 LIDs (hosts plus 5,120
switches), more than the 49,151 unicast LIDs of one subnet, so it is generated as a
:class:`~fabric_engine.topology.generate.TopologyDesign` (``lids="none"``: all nodes,
cables and ports, validated, no LIDs). The bench also builds the largest radix-64
3-level tree that *does* fit one subnet as a full :class:`Fabric`.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fabric_engine.formats import ibnetdiscover  # noqa: E402
from fabric_engine.topology.generate import MAX_UNICAST_LID, fat_tree  # noqa: E402
from tests.bench.subnet import largest_subnet_fat_tree  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402

TARGET_S = 3.0


def measure(label: str, fn, repeat: int = 3):
    best = float("inf")
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"{label:<58} {best:7.3f} s  peak {peak / 2**20:7.1f} MiB  "
          f"({best / TARGET_S:.2f} of the {TARGET_S:g} s target)")
    target(label, best, TARGET_S, "s")
    return result


def main() -> None:
    print(machine())
    print(deployed_allocator())
    source = fat_tree(hosts=20000, radix=64, levels=3)
    text = ibnetdiscover.write(source)
    print(f"input: ibnetdiscover text of {source!r}: {len(text) / 2**20:.1f} MiB, {text.count(chr(10))} lines")
    parsed = measure("parse 20,000-host ibnetdiscover", lambda: ibnetdiscover.read(text, source="bench"))
    assert parsed.num_hosts == 20000 and parsed.num_links == source.num_links
    measure("write 20,000-host ibnetdiscover", lambda: ibnetdiscover.write(source))
    design = measure("generate 65,536-host 3-level radix-64 fat tree (design)",
                     lambda: fat_tree(hosts=65536, radix=64, levels=3, lids="none"))
    print(f"    {design.num_hosts} hosts, {design.num_switches} switches, {design.num_links} cables; "
          f"needs {design.lids_needed} LIDs > {MAX_UNICAST_LID} of one subnet")
    hosts = largest_subnet_fat_tree()
    fabric = measure(f"generate {hosts:,}-host 3-level radix-64 fat tree (Fabric)",
                     lambda: fat_tree(hosts=hosts, radix=64, levels=3))
    print(f"    {fabric!r}, max LID {fabric.max_lid}")


if __name__ == "__main__":
    main()
