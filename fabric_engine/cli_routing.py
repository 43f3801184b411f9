"""CLI subcommands for routing: ``route``, ``trace`` and ``routing-report``.

::

    python -m fabric_engine route FABRIC --engine ftree --dump-lfts out.dump
    python -m fabric_engine trace FABRIC --lfts DUMP SRC DST
    python -m fabric_engine routing-report FABRIC --lfts DUMP

``FABRIC`` is any fabric file :func:`fabric_engine.formats.read` understands (gzip or not). The
LFTs come from ``--lfts`` (an ``opensm-lfts.dump`` or ``ibroute`` output) or are computed with
``--engine`` (default ``minhop``); ``-a FILE`` gives updn its root switches as OpenSM's
``--root_guid_file`` does. An engine that cannot route the fabric as designed (ftree on a
fabric that is no fat tree, updn without a root) says so on stderr with what it did instead.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .cli import command
from .errors import FabricEngineError
from .progress import Progress

__all__ = ["route_command", "trace_command", "report_command"]


def _engines() -> list[str]:
    from .routing import ENGINES

    return list(ENGINES)


def _source_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("fabric", help="fabric file (ibnetdiscover, ibsim net or json; gzip or not)")
    p.add_argument("--from", dest="from_fmt", choices=("ibnetdiscover", "ibsim", "json"), help="fabric file format")
    p.add_argument("--lfts", help="load LFTs from an opensm-lfts.dump or ibroute output instead of routing")
    _engine_args(p)


def _engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", default="minhop", choices=_engines(), help="routing engine (default minhop)")
    p.add_argument("-a", "--root-guid-file", dest="roots", metavar="FILE",
                   help="updn: root switch GUIDs, one per line (OpenSM's --root_guid_file)")


def _route(fabric, args: argparse.Namespace):
    """Route ``fabric`` with the engine and options in ``args``; warnings of the engine go to stderr."""
    from .routing import route
    from .routing.quality import engine_warnings
    from .routing.updn import read_root_guids

    options = {}
    if getattr(args, "roots", None):
        if args.engine != "updn":
            raise FabricEngineError("-a/--root-guid-file applies to --engine updn only")
        options["roots"] = read_root_guids(Path(args.roots))
    routing = route(fabric, args.engine, **options)
    for warning in engine_warnings(routing):
        print(f"warning: {warning}", file=sys.stderr)
    return routing


def _load(args: argparse.Namespace):
    from . import formats
    from .routing import load_lfts

    fabric = formats.read(Path(args.fabric), fmt=args.from_fmt)
    if getattr(args, "lfts", None):
        return fabric, load_lfts(fabric, args.lfts)
    return fabric, _route(fabric, args)


def _route_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("fabric", help="fabric file (ibnetdiscover, ibsim net or json; gzip or not)")
    p.add_argument("--from", dest="from_fmt", choices=("ibnetdiscover", "ibsim", "json"), help="fabric file format")
    _engine_args(p)
    p.add_argument("--dump-lfts", help="write the LFTs to this file ('-' for stdout)")
    p.add_argument("--style", choices=("opensm", "ibroute"), default="opensm",
                   help="LFT text style: opensm-lfts.dump (default) or ibroute output")
    p.add_argument("--report", action="store_true", help="also print the routing quality report")


@command("route", help="compute the LFTs of a fabric with a routing engine", arguments=_route_arguments)
def route_command(args: argparse.Namespace) -> int:
    from . import formats
    from .formats import opensm_lfts
    from .routing.quality import report

    bar = Progress("route")
    bar.stage(f"reading {args.fabric}")
    fabric = formats.read(Path(args.fabric), fmt=args.from_fmt)
    bar(0.2)
    bar.stage(f"routing with {args.engine}")
    t0 = time.perf_counter()
    routing = _route(fabric, args)
    elapsed = time.perf_counter() - t0
    bar(0.8)
    print(f"{args.engine}: routed {fabric!r} in {elapsed * 1000:.1f} ms "
          f"(LFTs {routing.lft.shape[0]} x {routing.lft.shape[1]}, {routing.lft.nbytes / 1e6:.1f} MB)",
          file=sys.stderr)
    if args.dump_lfts:
        bar.stage(f"writing {args.dump_lfts}")
        text = opensm_lfts.write(routing, args.style)
        if args.dump_lfts == "-":
            sys.stdout.write(text)
        else:
            Path(args.dump_lfts).write_text(text)
            print(f"wrote LFTs to {args.dump_lfts}", file=sys.stderr)
    bar.done()
    if args.report:
        print(report(routing))
    return 0


def _trace_arguments(p: argparse.ArgumentParser) -> None:
    _source_args(p)
    p.add_argument("src", help="source host (name or GUID)")
    p.add_argument("dst", help="destination host (name or GUID)")
    p.add_argument("--switch-ns", type=float, help="forwarding latency per switch in ns (default 130)")
    p.add_argument("--json", action="store_true", help="print the hops as JSON")


def _node_key(text: str):
    return int(text, 0) if text.lower().startswith("0x") else text


@command("trace", help="trace the routed path between two hosts, like ibtracert", arguments=_trace_arguments)
def trace_command(args: argparse.Namespace) -> int:
    from .routing.latency import LatencyModel, trace_latency

    fabric, routing = _load(args)
    try:
        src, dst = fabric.node(_node_key(args.src)), fabric.node(_node_key(args.dst))
    except KeyError as exc:
        raise FabricEngineError(str(exc.args[0])) from None
    model = LatencyModel(switch_ns=args.switch_ns) if args.switch_ns is not None else LatencyModel()
    hops = routing.trace(src, dst, model=model)
    lat = trace_latency(routing, hops, model)
    if args.json:
        print(json.dumps({"hops": hops, "latency": lat}, indent=2))
        return 0
    first, last = hops[0], hops[-1]
    print(f'From {"switch" if fabric.switch_index[first["node"]] >= 0 else "ca"} '
          f'{{0x{int(fabric.guid[first["node"]]):016x}}} lid {first["lid"]} "{first["name"]}"')
    for prev, hop in zip(hops, hops[1:], strict=False):
        kind = "switch" if fabric.switch_index[hop["node"]] >= 0 else "ca"
        print(f'[{prev["out_port"]}] -> {kind} port {{0x{int(fabric.guid[hop["node"]]):016x}}}[{hop["in_port"]}] '
              f'lid {hop["lid"]} "{hop["name"]}"  +{hop["latency_ns"]:.0f} ns')
    print(f'To ca {{0x{int(fabric.guid[last["node"]]):016x}}} lid {last["lid"]} "{last["name"]}"')
    print(f"latency ~{lat['total_ns']:.0f} ns: {lat['switches']} switches x {model.switch_ns:g} ns "
          f"+ {lat['metres']:g} m of cable x {model.ns_per_m:g} ns/m (adapters not counted)")
    return 0


def _report_arguments(p: argparse.ArgumentParser) -> None:
    _source_args(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")


@command("routing-report", help="port balance, path lengths, unreachable pairs and entries, credit loops and "
                                "engine warnings of a routing",
         arguments=_report_arguments)
def report_command(args: argparse.Namespace) -> int:
    from .routing.quality import report

    _, routing = _load(args)
    rep = report(routing)
    if args.json:
        print(json.dumps(rep.to_dict(), indent=2))
    else:
        print(rep)
    return 0 if rep.credit_loops.acyclic else 1
