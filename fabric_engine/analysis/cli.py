"""Command line of the analyses: ``ebb FABRIC [--lfts DUMP] --patterns 1000 --seed 1`` and ``roce FABRIC --qps 4``.

Importing this module registers ``ebb`` with :mod:`fabric_engine.cli` (list
``"fabric_engine.analysis.cli"`` in its ``PLUGINS`` to get ``python -m fabric_engine ebb``);
``python -m fabric_engine.analysis ebb ...`` runs it alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ..cli import command
from ..errors import FabricEngineError
from ..progress import Progress
from ..routing import ENGINES, route
from .ebb import METHODS, effective_bisection_bandwidth
from .patterns import PAIR_PATTERNS

__all__ = ["ebb_arguments", "run_ebb", "roce_arguments", "run_roce", "main"]


def _routing(args: argparse.Namespace):
    from pathlib import Path

    from .. import formats, routing

    fabric = formats.read(Path(args.fabric))
    if args.lfts:
        load = getattr(routing, "from_opensm_dump", None) or getattr(routing, "load_lfts", None)
        if load is None:
            raise FabricEngineError(f"{args.lfts}: no OpenSM LFT dump reader is available in fabric_engine.routing")
        return load(fabric, Path(args.lfts))
    return route(fabric, args.engine)


def ebb_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of the ``ebb`` subcommand."""
    p.add_argument("fabric", help="topology file (any format fabric_engine.formats reads)")
    p.add_argument("--lfts", help="OpenSM LFT dump (opensm-lfts.dump) to use instead of computing routes")
    p.add_argument("--engine", default="minhop", choices=sorted(ENGINES), help="routing engine (default minhop)")
    p.add_argument("--patterns", type=int, default=1000, help="random patterns (default 1000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--method", default="count", choices=METHODS, help="count (Hoefler et al.) or maxmin")
    p.add_argument("--pattern", default="bisection", choices=PAIR_PATTERNS)
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


@command("ebb", help="effective bisection bandwidth of a routed fabric (Hoefler et al. 2008)",
         arguments=ebb_arguments)
def run_ebb(args: argparse.Namespace) -> int:
    """Print the eBB the parsed ``args`` ask for as one JSON object."""
    bar = Progress("ebb", enabled=not args.quiet)
    bar.stage(f"routing with {args.engine}" if not args.lfts else f"loading {args.lfts}")
    routing = _routing(args)
    bar.stage(f"{args.patterns} {args.pattern} patterns")
    res = effective_bisection_bandwidth(routing, args.patterns, args.seed, method=args.method,
                                        pattern=args.pattern, progress=bar)
    bar.done()
    print(json.dumps(res.as_dict()))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m fabric_engine.analysis``; errors print ``error: ...`` and exit 2."""
    parser = argparse.ArgumentParser(prog="python -m fabric_engine.analysis")
    sub = parser.add_subparsers(dest="command", required=True)
    ebb_arguments(sub.add_parser("ebb", help="effective bisection bandwidth"))
    args = parser.parse_args(argv)
    try:
        return run_ebb(args)
    except (FabricEngineError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def roce_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of the ``roce`` subcommand."""
    from ..workload import PATTERNS, PLACEMENTS
    from .roce import MAX_QPS

    p.add_argument("fabric", help="topology file (any format fabric_engine.formats reads)")
    p.add_argument("--engine", default="ftree", choices=sorted(ENGINES), help="InfiniBand routing engine (ftree)")
    p.add_argument("--scenario", help="scenario spec (JSON) whose jobs to run; else --jobs x --job-hosts")
    p.add_argument("--jobs", type=int, default=4, help="jobs (default 4)")
    p.add_argument("--job-hosts", type=int, default=64, help="hosts per job (default 64)")
    p.add_argument("--pattern", default="ring_allreduce", choices=sorted(PATTERNS))
    p.add_argument("--placement", default="scattered", choices=sorted(PLACEMENTS))
    p.add_argument("--buffer-gb", type=float, default=1.0, help="collective buffer per job, GB (default 1)")
    p.add_argument("--qps", type=int, default=1, help=f"QPs per connection, 1..{MAX_QPS} (NCCL_IB_QPS_PER_CONNECTION)")
    p.add_argument("--seed", type=int, default=1, help="draws the switches' hash seeds")
    p.add_argument("--same-seed", action="store_true", help="one hash seed on every switch (polarization)")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


@command("roce", help="the same jobs as InfiniBand (LFTs, adaptive) and as RoCEv2 with ECMP hashing",
         arguments=roce_arguments)
def run_roce(args: argparse.Namespace) -> int:
    """Print the comparison as one JSON object (per side: jobs, imbalance, collisions)."""
    from pathlib import Path

    from .. import formats
    from ..scenario import _jobs
    from .roce import compare

    bar = Progress("roce", enabled=not args.quiet)
    bar.stage(f"reading {args.fabric}")
    fabric = formats.read(Path(args.fabric))
    if args.scenario:
        try:
            specs = json.loads(Path(args.scenario).read_text()).get("jobs") or []
        except (ValueError, AttributeError) as exc:
            raise FabricEngineError(f"{args.scenario}: not a JSON scenario with a jobs list ({exc})") from None
    else:
        if not 1 <= args.jobs <= 4096 or not 2 <= args.job_hosts <= fabric.num_hosts:
            raise FabricEngineError(f"--jobs must be in 1..4096 and --job-hosts in 2..{fabric.num_hosts}")
        specs = [{"name": f"job{i + 1}", "tenant": "t", "hosts": args.job_hosts, "placement": args.placement,
                  "pattern": args.pattern, "buffer_gb": args.buffer_gb} for i in range(args.jobs)]
    jobs = _jobs(fabric, specs)

    def progress(fraction: float, message: str) -> None:
        bar.stage(message)
        bar(fraction)

    res = compare(fabric, jobs, engine=args.engine, qps=args.qps, seed=args.seed, same_seed=args.same_seed,
                  progress=progress)
    bar.done()
    print(json.dumps(res.as_dict()))
    return 0
