"""Command line of the analyses: ``ebb FABRIC [--lfts DUMP] --patterns 1000 --seed 1``.

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

__all__ = ["ebb_arguments", "run_ebb", "main"]


def _routing(args: argparse.Namespace):
    from .. import formats, routing

    fabric = formats.read(args.fabric)
    if args.lfts:
        load = getattr(routing, "from_opensm_dump", None) or getattr(routing, "load_lfts", None)
        if load is None:
            raise FabricEngineError(f"{args.lfts}: no OpenSM LFT dump reader is available in fabric_engine.routing")
        return load(fabric, args.lfts)
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
