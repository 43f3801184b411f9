"""Routing a SuperPOD-size SHARP fabric: ours against real OpenSM 3.3.23 in the same run.

Run ``python tests/bench/bench_superpod.py [--quick] [--no-opensm]``. The fabric is
:func:`tests.fabric_engine.routing.test_routing_ftree_superpod.superpod` at SuperPOD size, with what a real HDR
SuperPOD has (issue 34): a 3-level fat tree of 666 switches (27 pods of 8 leaves and 10 spines, 10
planes of 18 cores; 40 ports plus the Aggregation Node on port 41), two cables from every leaf to each
spine of its pod (ports 21-30, then 31-40), 15 leaves and 15 spines short of one up cable, a cable
between the first two spines of every pod (27 same-level cables), 4,320 GPU ports of which 15 are
unplugged (15 leaves short of a compute node), 27 management nodes on spines and a SHARP Aggregation
Node on every switch: 5,013 CAs. OpenSM's ftree needs guid
files on such a fabric (without them every switch is a leaf, ``ERR AB2B``), so both run ftree with
the same ``--root_guid_file`` (the cores) and ``--cn_guid_file`` (the GPU ports), and minhop without.

For each engine: OpenSM's routing compute time from its log (``building routing with`` to ``tables
configured on all switches``, as :mod:`bench_routing` takes it), the best of :data:`OPENSM_RUNS`
sweeps (``-o -D 0x47``) on one ibsim under umad2sim; ours, ``route(...)`` wall clock, the first call
and the best of :data:`OUR_RUNS`; the ratio of the bests (target >= 5x), and how many LFT entries of
ours equal OpenSM's. ``--quick`` builds a 4-pod fabric instead.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fabric_engine.routing import NO_PATH, route  # noqa: E402
from fabric_engine.routing.guid_files import read_guids  # noqa: E402
from tests.bench.bench_routing import opensm_compute_s  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402
from tests.fabric_engine.routing.test_routing_ftree_superpod import guid_files, load_dump, net_text, superpod  # noqa: E402

#: OpenSM sweeps per engine (on one ibsim); the best counts.
OPENSM_RUNS = 3
#: Our runs per engine after the first; the best counts.
OUR_RUNS = 10
SHAPE = {"pods": 27, "leaves_per_pod": 8, "spines_per_pod": 10, "hosts_per_leaf": 20, "cores_per_plane": 18,
         "radix": 40, "parallel": 2, "short_leaves": 15, "short_spines": 15, "spine_pairs": 1, "unplugged": 15}
QUICK = {"pods": 4, "leaves_per_pod": 4, "spines_per_pod": 4, "hosts_per_leaf": 8, "cores_per_plane": 4, "radix": 16,
         "parallel": 2, "short_leaves": 2, "short_spines": 2, "spine_pairs": 1, "unplugged": 2}


def run_opensm(fabric, work: Path, args: dict[str, list[str]]):
    """``{engine: (best compute seconds, OpenSM's tables)}``: OpenSM on one ibsim, :data:`OPENSM_RUNS` each."""
    from tests.realtools.ibsim import IbSim

    out = {}
    with IbSim(work / "sim", net_text(fabric), sim_host=str(fabric.node_name[fabric.hosts[0]]),
               ready_timeout=600) as sim:
        for engine, extra in args.items():
            best, tables = float("inf"), None
            for run in range(OPENSM_RUNS):
                cache = work / f"osm-{engine}-{run}"
                sim.run_opensm(["-o", "-R", engine, "-D", "0x47", *extra], cache_dir=cache, timeout=1800)
                log = (cache / "opensm.log").read_text()
                if f"{engine} tables configured on all switches" not in log:
                    raise RuntimeError(f"OpenSM did not route with {engine}; log tail:\n{log[-2000:]}")
                best = min(best, opensm_compute_s(log, engine))
                tables = tables or load_dump(fabric, cache / "opensm-lfts.dump")
            out[engine] = (best, tables)
    return out


def ours(fabric, engine: str, options: dict) -> tuple[float, float, object]:
    t0 = time.perf_counter()
    r = route(fabric, engine, **options)
    first = time.perf_counter() - t0
    best = float("inf")
    for _ in range(OUR_RUNS):
        t0 = time.perf_counter()
        route(fabric, engine, **options)
        best = min(best, time.perf_counter() - t0)
    return first, best, r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a 4-pod fabric instead of the SuperPOD-size one")
    ap.add_argument("--no-opensm", action="store_true", help="do not run OpenSM")
    args = ap.parse_args()
    print(machine())
    print(deployed_allocator())
    f = superpod(**(QUICK if args.quick else SHAPE))
    loop = "in" if f.meta.get("loopbacks") else "none"
    print(f"{f!r}: {len(f.aggregation_nodes)} Aggregation Nodes, {int((f.kind == 0).sum())} CAs, "
          f"{f.num_links} cables, loopback {loop}")
    have_osm = not args.no_opensm and all(shutil.which(t) for t in ("ibsim", "opensm"))
    with tempfile.TemporaryDirectory(prefix="bench-superpod-") as tmp:
        roots, cns = guid_files(f, Path(tmp))
        engines = {"ftree": (["--root_guid_file", str(roots), "--cn_guid_file", str(cns)],
                             {"roots": read_guids(roots), "cns": read_guids(cns)}),
                   "minhop": ([], {})}
        osm = run_opensm(f, Path(tmp), {e: a for e, (a, _) in engines.items()}) if have_osm else {}
        print(f"{'engine':<22} {'OpenSM best ms':>14} {'ours 1st ms':>12} {'ours best ms':>13} {'ratio':>7} "
              f"{'entries equal':>22}")
        ratios = []
        for engine, (_, options) in engines.items():
            first, best, mine = ours(f, engine, options)
            name = engine + (" (guid files)" if options else "")
            if engine in osm:
                t, theirs = osm[engine]
                used = (mine.lft != NO_PATH).any(axis=0) | (theirs.lft != NO_PATH).any(axis=0)
                equal, total = int((mine.lft[:, used] == theirs.lft[:, used]).sum()), int(mine.lft[:, used].size)
                ratios.append((name, t / best))
                print(f"{name:<22} {t * 1e3:14.1f} {first * 1e3:12.1f} {best * 1e3:13.1f} {t / best:7.1f} "
                      f"{equal:>10,} of {total:<9,}")
            else:
                print(f"{name:<22} {'-':>14} {first * 1e3:12.1f} {best * 1e3:13.1f} {'-':>7}")
    if args.quick:
        print("--quick: a small fabric, no targets")
        ratios = []
    for name, ratio in ratios:
        target(f"{name} speed-up over OpenSM on {f.num_switches} switches, {int((f.kind == 0).sum()):,} CAs",
               ratio, 5, "x", at_least=True)
    if not osm:
        print("OpenSM not run (no ibsim/opensm, or --no-opensm): no ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
