"""LFT dump speed: the streaming ``opensm-lfts.dump`` writer against the one it replaced, in one run.

Run ``python tests/bench/bench_lfts_writer.py [--quick]``. Builds a SuperPOD-size 3-level fat tree
(radix 48, 5,260 GPU hosts and 200 four-port storage servers: 662 switches, 6,722 LIDs), routes it
with ``minhop`` (``ftree`` refuses the storage leaves and falls back to it, as OpenSM does) and
writes its ``opensm-lfts.dump`` (about 300 MB) to a file with each writer, each run in a fresh
forked process:

* old: the writer before streaming (``legacy_write``, kept in ``tests/fabric_engine/formats/test_lfts_writer.py``),
  one f-string per entry, the whole text then written at once as the CLI did (``write_text``);
* new: :func:`fabric_engine.formats.opensm_lfts.write_to`, one vectorised chunk per switch.

Prints old and new seconds side by side (new: best of :data:`NEW_RUNS`), their ratio, the MB
written and each writer's peak memory: the peak RSS of its process above the RSS it started with.
The two files must be identical (exit 1 otherwise). Targets: new < 5 s; new peak < 64 MB (the dump
never sits in memory whole). ``--quick`` skips the old writer.
"""

from __future__ import annotations

import argparse
import filecmp
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fabric_engine.formats import opensm_lfts  # noqa: E402
from fabric_engine.routing import Routing, route  # noqa: E402
from fabric_engine.topology.generate import fat_tree  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402
from tests.fabric_engine.formats.test_lfts_writer import legacy_write  # noqa: E402

TARGET_S = 5.0
TARGET_PEAK_MB = 64.0
NEW_RUNS = 3
FABRIC = dict(hosts=5260, radix=48, levels=3, storage_servers=200, storage_ports=4)


def write_old(routing: Routing, path: Path) -> None:
    path.write_text(legacy_write(routing))


def write_new(routing: Routing, path: Path) -> None:
    with path.open("wb") as out:
        opensm_lfts.write_to(routing, out)


def _rss_mb() -> float:
    """This process's resident set now, MB (from /proc/self/statm)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() / 2**20


def _child(fn: Callable[[Routing, Path], None], routing: Routing, path: Path, conn) -> None:
    start = _rss_mb()
    t0 = time.perf_counter()
    fn(routing, path)
    elapsed = time.perf_counter() - t0
    conn.send((elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - start))  # KiB on Linux


def run_forked(fn: Callable[[Routing, Path], None], routing: Routing, path: Path) -> tuple[float, float]:
    """Seconds ``fn(routing, path)`` takes in a forked process and its peak RSS above its start, MB."""
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(fn, routing, path, send))
    proc.start()
    result = recv.recv()
    proc.join()
    if proc.exitcode:
        raise RuntimeError(f"{fn.__name__} exited with {proc.exitcode}")
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the old writer")
    args = ap.parse_args()
    print(machine())
    print(deployed_allocator())
    f = fat_tree(**FABRIC)
    t0 = time.perf_counter()
    routing = route(f, "minhop")
    routed = time.perf_counter() - t0
    print(f"{f!r}: {f.num_switches} switches, max LID {f.max_lid:,}; minhop routed it in {routed:.2f} s")
    with tempfile.TemporaryDirectory(prefix="bench-lfts-") as tmp:
        old_path, new_path = Path(tmp) / "old.dump", Path(tmp) / "new.dump"
        old = None if args.quick else run_forked(write_old, routing, old_path)
        runs = [run_forked(write_new, routing, new_path) for _ in range(NEW_RUNS)]
        new_s, new_peak = min(r[0] for r in runs), max(r[1] for r in runs)
        mb = new_path.stat().st_size / 1e6
        same = old is None or filecmp.cmp(old_path, new_path, shallow=False)
    print(f"{'writer':<8} {'seconds':>8} {'peak MB':>8} {'MB written':>11}")
    if old is not None:
        print(f"{'old':<8} {old[0]:8.2f} {old[1]:8.0f} {mb:11.1f}")
    print(f"{'new':<8} {new_s:8.2f} {new_peak:8.0f} {mb:11.1f}   ({mb / new_s:.0f} MB/s)")
    if old is not None:
        print(f"old / new: {old[0] / new_s:.1f}x faster, {old[1] / new_peak:.0f}x less memory; "
              f"output {'byte-identical' if same else 'DIFFERENT'}")
    target(f"write opensm-lfts.dump of {f.num_switches} switches x {f.max_lid:,} LIDs", new_s, TARGET_S, "s")
    target("peak memory of the LFT dump writer", new_peak, TARGET_PEAK_MB, "MB")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
