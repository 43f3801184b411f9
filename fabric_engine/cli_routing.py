"""CLI subcommands for routing: ``route``, ``trace`` and ``routing-report``.

::

    python -m fabric_engine route FABRIC --engine ftree --dump-lfts out.dump
    python -m fabric_engine trace FABRIC --lfts DUMP SRC DST
    python -m fabric_engine routing-report FABRIC --lfts DUMP

``FABRIC`` is any fabric file :func:`fabric_engine.formats.read` understands (gzip or not). The
LFTs come from ``--lfts`` (an ``opensm-lfts.dump`` or ``ibroute`` output) or are computed with
``--engine`` (default ``minhop``). OpenSM's guid files, read as OpenSM reads them
(:mod:`fabric_engine.routing.guid_files`): ``-a FILE`` root switches (updn and ftree, OpenSM's
``--root_guid_file``), ``-u FILE`` compute-node port GUIDs and ``-G FILE`` I/O-node port GUIDs
(ftree, ``--cn_guid_file``/``--io_guid_file``). A SHARP fabric (an Aggregation Node CA on every
switch) needs ``-a`` and ``-u`` for ftree; ``route FABRIC --write-guid-files DIR`` writes both from
the fabric. An engine that cannot route the fabric as designed (ftree on a fabric that is no fat
tree, updn without a root) says so on stderr with what it did instead.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .cli import command
from .cli_input import add_input_arguments, read_fabric
from .errors import FabricEngineError
from .progress import Progress

__all__ = ["route_command", "trace_command", "report_command"]


def _engines() -> list[str]:
    from .routing import ENGINES

    return list(ENGINES)


def _source_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("fabric", help="fabric file (ibnetdiscover and its dialects, ibdiagnet, ibsim net or json)")
    add_input_arguments(p)
    p.add_argument("--lfts", help="load LFTs from an opensm-lfts.dump or ibroute output instead of routing")
    _engine_args(p)


def _engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", default="minhop", choices=_engines(), help="routing engine (default minhop)")
    p.add_argument("-a", "--root-guid-file", dest="roots", metavar="FILE",
                   help="updn, ftree: root switch node GUIDs, one per line (OpenSM's --root_guid_file)")
    p.add_argument("-u", "--cn-guid-file", dest="cns", metavar="FILE",
                   help="ftree: compute node port GUIDs; other CAs are routed after them (OpenSM's --cn_guid_file)")
    p.add_argument("-G", "--io-guid-file", dest="ios", metavar="FILE",
                   help="ftree: I/O node port GUIDs, never compute nodes (OpenSM's --io_guid_file)")
    p.add_argument("-H", "--max-reverse-hops", dest="max_reverse_hops", type=int, default=0, metavar="N",
                   help="ftree: reverse hops allowed to I/O nodes (OpenSM's -H; only 0 is modelled)")


def _route(fabric, args: argparse.Namespace):
    """Route ``fabric`` with the engine and options in ``args``; warnings of the engine go to stderr."""
    from .routing import route
    from .routing.guid_files import read_guids
    from .routing.quality import engine_warnings

    options = {}
    if getattr(args, "roots", None):
        if args.engine not in ("updn", "ftree"):
            raise FabricEngineError("-a/--root-guid-file applies to --engine updn and ftree only")
        options["roots"] = read_guids(Path(args.roots))
    for key, flag in (("cns", "-u/--cn-guid-file"), ("ios", "-G/--io-guid-file")):
        if getattr(args, key, None):
            if args.engine != "ftree":
                raise FabricEngineError(f"{flag} applies to --engine ftree only")
            options[key] = read_guids(Path(getattr(args, key)))
    if getattr(args, "max_reverse_hops", 0):
        if args.engine != "ftree":
            raise FabricEngineError("-H/--max-reverse-hops applies to --engine ftree only")
        options["max_reverse_hops"] = args.max_reverse_hops
    routing = route(fabric, args.engine, **options)
    for warning in engine_warnings(routing):
        print(f"warning: {warning}", file=sys.stderr)
    return routing


def _load(args: argparse.Namespace):
    from .routing import load_lfts

    fabric = read_fabric(args.fabric, args)
    if getattr(args, "lfts", None):
        return fabric, load_lfts(fabric, Path(args.lfts))
    return fabric, _route(fabric, args)


def _route_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("fabric", help="fabric file (ibnetdiscover and its dialects, ibdiagnet, ibsim net or json)")
    add_input_arguments(p)
    _engine_args(p)
    p.add_argument("--dump-lfts", help="write the LFTs to this file ('-' for stdout)")
    p.add_argument("--style", choices=("opensm", "ibroute"), default="opensm",
                   help="LFT text style: opensm-lfts.dump (default) or ibroute output")
    p.add_argument("--report", action="store_true", help="also print the routing quality report")
    p.add_argument("--write-guid-files", metavar="DIR",
                   help="write DIR/roots.guids and DIR/cns.guids for ftree (-a, -u) from the fabric, and stop")


@command("route", help="compute the LFTs of a fabric with a routing engine", arguments=_route_arguments)
def route_command(args: argparse.Namespace) -> int:
    from .formats import opensm_lfts
    from .routing.quality import report

    bar = Progress("route")
    bar.stage(f"reading {args.fabric}")
    fabric = read_fabric(args.fabric, args)
    bar(0.2)
    if args.write_guid_files:
        bar.done()
        return _write_guid_files(fabric, Path(args.write_guid_files), args.fabric)
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
        if args.dump_lfts != "-":  # streamed to the file table by table, never one string
            with open(args.dump_lfts, "wb") as out:
                opensm_lfts.write_to(routing, out, args.style)
            print(f"wrote LFTs to {args.dump_lfts}", file=sys.stderr)
        elif hasattr(sys.stdout, "buffer"):
            sys.stdout.flush()
            opensm_lfts.write_to(routing, sys.stdout.buffer, args.style)
            sys.stdout.buffer.flush()
        else:  # a text-only stdout (redirected in-process)
            sys.stdout.write(opensm_lfts.write(routing, args.style))
    bar.done()
    if args.report:
        print(report(routing))
    return 0


def _write_guid_files(fabric, where: Path, source: str) -> int:
    """Write the root and compute-node guid files of ``fabric`` under ``where`` and say how to use them."""
    from .routing.guid_files import suggest_guid_files, write_guids

    roots, cns = suggest_guid_files(fabric)
    if not roots or not cns:
        raise FabricEngineError(f"{source}: no compute node on a switch; no guid files written")
    where.mkdir(parents=True, exist_ok=True)
    r = write_guids(where / "roots.guids", roots, f"root switches (node GUIDs) of {fabric.name}: the switches "
                                                  "farthest from the compute nodes")
    c = write_guids(where / "cns.guids", cns, f"compute node port GUIDs of {fabric.name}: the gpu hosts' ports "
                                              "(no Aggregation Node, storage or mgmt node)")
    print(f"wrote {len(roots)} root switch(es) to {r} and {len(cns)} compute node port(s) to {c}", file=sys.stderr)
    print(f"python -m fabric_engine route {source} --engine ftree -a {r} -u {c}")
    print(f"opensm -R ftree --root_guid_file {r} --cn_guid_file {c}")
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
