"""Routing speed (issue 4): our engines against real OpenSM in the same run, and at scale.

Run ``python tests/bench/bench_routing.py [--quick]``. Prints, for each fabric and engine:

* OpenSM's routing compute time, taken from its own log (``-f``): from the line
  ``building routing with '<engine>' routing algorithm...`` to ``<engine> tables
  configured on all switches`` (OpenSM 3.3.23 message texts), the best of
  :data:`OPENSM_RUNS` runs (``-o -R <engine> -D 0x47``) on ibsim under umad2sim;
* ours: ``route(fabric, engine)`` wall clock, the first call and the best of 20;
* the ratio of the bests, OpenSM / ours (target >= 5 for minhop and ftree). Best against best:
  on a shared machine one run of either can be twice its best (seen here: OpenSM 85 to 149 ms).

Then the scale targets: ftree on the largest radix-64 3-level fat tree that fits one
subnet (a 65,536-host tree needs 70,656 LIDs, more than the 49,151 unicast LIDs of a
subnet, see :mod:`fabric_engine.topology.generate`), target < 60 s with LFTs < 1 GB;
and ``Routing.paths`` for 1,000,000 host pairs, target < 2 s.

Without ibsim/OpenSM (or with ``--no-opensm``) the OpenSM columns are skipped.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fabric_engine.routing import route  # noqa: E402
from fabric_engine.topology.generate import MAX_UNICAST_LID, fat_tree  # noqa: E402
from tests.bench.subnet import largest_subnet_fat_tree  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402

#: OpenSM runs per fabric and engine (each on a fresh ibsim); the best counts.
OPENSM_RUNS = 5

_STAMP = re.compile(r"^(\w{3} \d{2} \d{2}:\d{2}:\d{2}) (\d{6}) ")


def _when(line: str) -> float:
    m = _STAMP.match(line)
    if not m:
        raise ValueError(f"no timestamp in {line!r}")
    t = datetime.strptime(m.group(1), "%b %d %H:%M:%S")
    return t.hour * 3600 + t.minute * 60 + t.second + int(m.group(2)) / 1e6


def opensm_compute_s(log: str, engine: str) -> float:
    """OpenSM's routing time from its log: 'building routing with' to 'tables configured on all switches'."""
    start = end = None
    for line in log.splitlines():
        if start is None and "building routing with" in line:
            start = _when(line)
        elif start is not None and "tables configured on all switches" in line:
            end = _when(line)
            break
    if start is None or end is None:
        raise RuntimeError(f"OpenSM log has no routing timing lines for {engine}")
    return end - start


def run_opensm(fabric, engine: str, workdir: Path) -> float:
    """OpenSM's best routing compute time in seconds over :data:`OPENSM_RUNS` runs."""
    from tests.realtools.ibsim import IbSim

    best = float("inf")
    for run in range(OPENSM_RUNS):
        with IbSim(workdir / f"sim-{engine}-{run}", _net(fabric)) as sim:
            cache = workdir / f"osm-{engine}-{run}"
            sim.run_opensm(["-o", "-R", engine, "-D", "0x47"], cache_dir=cache,
                           sim_host=str(fabric.node_name[fabric.hosts[0]]), timeout=600)
            best = min(best, opensm_compute_s((cache / "opensm.log").read_text(), engine))
    return best


def _net(fabric) -> str:
    from fabric_engine.formats import ibsim as ibsim_format

    return ibsim_format.write(fabric)


def ours(fabric, engine: str, repeat: int = 20) -> tuple[float, float]:
    t0 = time.perf_counter()
    route(fabric, engine)
    first = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        route(fabric, engine)
        best = min(best, time.perf_counter() - t0)
    return first, best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the scale runs")
    ap.add_argument("--no-opensm", action="store_true", help="do not run OpenSM")
    args = ap.parse_args()
    print(machine())
    print(deployed_allocator())
    have_osm = not args.no_opensm and all(shutil.which(t) for t in ("ibsim", "opensm"))
    fabrics = {
        "2048-host 2-level radix-64": fat_tree(hosts=2048, radix=64, levels=2, speed="HDR"),
        "1024-host 3-level radix-16": fat_tree(hosts=1024, radix=16, levels=3, speed="HDR"),
    }
    print(f"{'fabric':<30} {'engine':<7} {'OpenSM best':>11} {'ours 1st ms':>12} {'ours best ms':>13} {'ratio':>7}")
    ratios = []
    with tempfile.TemporaryDirectory(prefix="bench-routing-") as tmp:
        for name, f in fabrics.items():
            for engine in ("minhop", "ftree", "updn"):
                osm = run_opensm(f, engine, Path(tmp) / name.replace(" ", "_")) if have_osm else float("nan")
                first, best = ours(f, engine)
                ratio = osm / best if have_osm else float("nan")
                if engine in ("minhop", "ftree"):
                    ratios.append(ratio)
                print(f"{name:<30} {engine:<7} {osm * 1e3:11.1f} {first * 1e3:12.1f} {best * 1e3:13.1f} {ratio:7.1f}")
    if have_osm:
        print(f"minhop/ftree speed-up over OpenSM: min {min(ratios):.1f}x (target >= 5x)")
        target("minhop/ftree speed-up over OpenSM (least)", min(ratios), 5, "x", at_least=True)

    # paths() for a million pairs
    f = fabrics["2048-host 2-level radix-64"]
    r = route(f, "ftree")
    rng = np.random.default_rng(0)
    s, d = rng.choice(f.hosts, 1_000_000), rng.choice(f.hosts, 1_000_000)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        r.paths(s, d)
        best = min(best, time.perf_counter() - t0)
    print(f"paths() for 1,000,000 host pairs on {f.num_hosts} hosts: {best:.2f} s (target < 2 s)")
    target("paths() for 1,000,000 host pairs", best, 2, "s")

    if not args.quick:
        hosts = largest_subnet_fat_tree(64)
        print(f"65,536-host radix-64 tree needs "
              f"{fat_tree(hosts=65536, radix=64, levels=3, lids='none').lids_needed:,} LIDs > {MAX_UNICAST_LID:,}: "
              f"using the largest that fits one subnet, {hosts:,} hosts")
        big = fat_tree(hosts=hosts, radix=64, levels=3)
        t0 = time.perf_counter()
        rb = route(big, "ftree")
        el = time.perf_counter() - t0
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3  # KiB on Linux: the process's peak so far
        print(f"ftree on {big!r}: {el:.1f} s (target < 60 s), LFTs {rb.lft.nbytes / 1e6:.0f} MB, "
              f"peak RSS of the bench process {peak:.0f} MB (target < 1000 MB)")
        target(f"ftree on {big.num_hosts:,} hosts", el, 60, "s")
        target(f"ftree LFTs on {big.num_hosts:,} hosts", rb.lft.nbytes / 1e6, 1000, "MB")
        target(f"peak RSS with ftree on {big.num_hosts:,} hosts", peak, 1000, "MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
