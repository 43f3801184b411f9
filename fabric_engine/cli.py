"""``python -m fabric_engine``: generate, convert and describe fabrics.

Subcommands live in a registry so that each concept adds its own module::

    # fabric_engine/cli_routing.py
    from .cli import command

    def _arguments(parser):
        parser.add_argument("fabric")

    @command("route", help="compute LFTs for a fabric", arguments=_arguments)
    def route(args) -> int:
        ...
        return 0

and one line naming that module in :data:`PLUGINS`. Handlers return the exit code;
a :class:`~fabric_engine.errors.FabricEngineError` they raise is printed as
``error: <message>`` with exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .allocator import keep_freed_memory
from .cli_counters import perfquery_summary, print_perfquery_summary
from .cli_input import add_input_arguments, ibdiagnet_counters, read_fabric
from .errors import FabricEngineError
from .summary import describe
from .topology import SPEEDS, Fabric

__all__ = ["command", "main", "build_parser", "COMMANDS", "PLUGINS"]

#: Modules that register more subcommands when imported (one line each).
PLUGINS: tuple[str, ...] = (
    "fabric_engine.analysis.cli",
    "fabric_engine.cli_routing",
    "fabric_engine.health.cli",
    "fabric_engine.validation.cli",
)


@dataclass(frozen=True)
class Command:
    """One registered subcommand."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None] | None
    run: Callable[[argparse.Namespace], int]


#: Registered subcommands by name.
COMMANDS: dict[str, Command] = {}


def command(name: str, *, help: str, arguments: Callable[[argparse.ArgumentParser], None] | None = None):
    """Register the decorated ``run(args) -> exit code`` as subcommand ``name``."""
    def register(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        if name in COMMANDS and COMMANDS[name].run is not run:
            raise ValueError(f"CLI command {name!r} is registered twice")
        COMMANDS[name] = Command(name, help, arguments, run)
        return run
    return register


# ------------------------------------------------------------------ generate
def _common_generate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--radix", type=int, default=64, help="ports per switch (default 64)")
    p.add_argument("--speed", default="NDR", help=f"lane speed, one of {', '.join(SPEEDS)} (default NDR)")
    p.add_argument("--width", type=int, default=4, help="lanes per link (default 4)")
    p.add_argument("--storage-servers", type=int, default=0, help="storage servers (role storage)")
    p.add_argument("--storage-ports", type=int, default=2, help="HCA ports per storage server (default 2)")
    p.add_argument("--mgmt-nodes", type=int, default=0, help="management nodes (role mgmt)")
    p.add_argument("--name", help="fabric name")
    p.add_argument("--format", choices=("ibnetdiscover", "ibsim", "json"),
                   help="output format (default: from the -o file name, else json)")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")


def _generate_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="{fat-tree,rail-optimized,dragonfly-plus}")
    p = kinds.add_parser("fat-tree", help="2- or 3-level fat tree")
    p.add_argument("--hosts", type=int, required=True)
    p.add_argument("--levels", type=int, default=2, choices=(2, 3))
    p.add_argument("--oversubscription", type=float, default=1.0, help="leaf down:up ratio (default 1)")
    p.add_argument("--cores", type=int, help="core switches (3 levels)")
    p.add_argument("--spines", type=int, help="spine switches (2 levels)")
    p.add_argument("--storage-placement", choices=("dedicated", "spread"), default="dedicated")
    _common_generate_args(p)
    p = kinds.add_parser("rail-optimized", help="DGX SuperPOD-style rail-optimized scalable units")
    p.add_argument("--nodes", type=int, required=True, help="GPU nodes")
    p.add_argument("--gpus-per-node", type=int, default=8)
    p.add_argument("--nodes-per-su", type=int, default=32)
    p.add_argument("--levels", type=int, default=2, choices=(2, 3))
    p.add_argument("--spines", type=int)
    p.add_argument("--cores", type=int)
    p.add_argument("--storage-placement", choices=("dedicated", "spread"), default="dedicated")
    _common_generate_args(p)
    p = kinds.add_parser("dragonfly-plus", help="Dragonfly+ groups joined by global links")
    p.add_argument("--groups", type=int, required=True)
    p.add_argument("--leaves-per-group", type=int, default=4)
    p.add_argument("--spines-per-group", type=int, default=4)
    p.add_argument("--hosts-per-leaf", type=int)
    p.add_argument("--global-links", type=int, help="global links per spine (default groups-1)")
    _common_generate_args(p)


def _write_output(fabric: Fabric, output: str, fmt: str | None) -> None:
    from . import formats

    fmt = fmt or (formats.format_from_name(output) if output != "-" else None) or "json"
    text = formats.write(fabric, fmt)
    if output == "-":
        sys.stdout.write(text)
    else:
        Path(output).write_text(text)
        print(f"wrote {fabric!r} to {output} ({fmt})", file=sys.stderr)


@command("generate", help="generate a fabric design", arguments=_generate_arguments)
def generate_command(args: argparse.Namespace) -> int:
    from .topology import generate as gen

    common = dict(radix=args.radix, speed=args.speed, width=args.width, name=args.name,
                  storage_servers=args.storage_servers, storage_ports=args.storage_ports, mgmt_nodes=args.mgmt_nodes)
    if args.kind == "fat-tree":
        fabric = gen.fat_tree(hosts=args.hosts, levels=args.levels, oversubscription=args.oversubscription,
                              cores=args.cores, spines=args.spines, storage_placement=args.storage_placement, **common)
    elif args.kind == "rail-optimized":
        fabric = gen.rail_optimized(nodes=args.nodes, gpus_per_node=args.gpus_per_node,
                                    nodes_per_su=args.nodes_per_su, levels=args.levels, spines=args.spines,
                                    cores=args.cores, storage_placement=args.storage_placement, **common)
    else:
        fabric = gen.dragonfly_plus(groups=args.groups, leaves_per_group=args.leaves_per_group,
                                    spines_per_group=args.spines_per_group, hosts_per_leaf=args.hosts_per_leaf,
                                    global_links=args.global_links, **common)
    _write_output(fabric, args.output, args.format)
    return 0


# ------------------------------------------------------------------- convert
def _convert_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="input file")
    p.add_argument("output", help="output file ('-' for stdout)")
    add_input_arguments(p)
    p.add_argument("--to", dest="to_fmt", choices=("ibnetdiscover", "ibsim", "json"),
                   help="output format (default: from the output name)")


@command("convert", help="convert a fabric file between formats", arguments=_convert_arguments)
def convert_command(args: argparse.Namespace) -> int:
    from . import formats

    fabric = read_fabric(args.input, args)
    to = args.to_fmt or formats.format_from_name(args.output)
    if to is None:
        raise FabricEngineError(f"cannot tell the output format from {args.output!r}; pass --to")
    _write_output(fabric, args.output, to)
    return 0


# ---------------------------------------------------------------------- info
def _info_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="fabric file")
    add_input_arguments(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


@command("info", help="describe a fabric file (or ibdiagnet's output folder or archive, or perfquery's output)",
         arguments=_info_arguments)
def info_command(args: argparse.Namespace) -> int:
    if args.from_fmt is None and Path(args.file).is_file():
        summary = perfquery_summary(args.file, quiet=args.json)
        if summary is not None:
            if args.json:
                print(json.dumps(summary, indent=2))
            else:
                print_perfquery_summary(args.file, summary)
            return 0
    d = describe(read_fabric(args.file, args, quiet=args.json))
    counters = ibdiagnet_counters(args.file) if args.from_fmt in (None, "ibdiagnet") else None
    if counters is not None:
        d["counters"] = counters
    if args.json:
        print(json.dumps(d, indent=2))
        return 0
    print(f"fabric {d['name']}: {d['nodes']['hosts']} hosts, {d['nodes']['switches']} switches, "
          f"{d['links']['total']} links")
    if d["nodes"].get("host_systems") is not None:
        print(f"host systems:     {d['nodes']['host_systems']} (adapters sharing a system image GUID are one)")
    if d["sharp"]["aggregation_nodes"]:
        print(f"SHARP:            {d['sharp']['aggregation_nodes']} Aggregation Nodes on "
              f"{d['sharp']['switches']} switches (not hosts)")
    for ch in d["chassis"]:
        print(f"chassis {ch['guid']}: {len(ch['switches'])} ASICs: {', '.join(ch['switches'])}")
    if counters is not None:
        print(f"counters:         {counters['ports']} ports sampled ({counters['file'] or 'no PM data'}), "
              f"{counters['with_errors']} with error counts")
    if d["links"]["loopbacks"]:
        print(f"loopbacks:        {len(d['links']['loopbacks'])} (" + ", ".join(
            f"{n}[{a}]-[{b}]" for n, a, b, *_ in d["links"]["loopbacks"]) + "), not routed")
    if d["links"]["trained_down"]:
        print(f"trained down:     {d['links']['trained_down']} links (their two ends printed different rates; "
              f"the lower is read)")
    print("switches by tier: " + ", ".join(f"{k} {v}" for k, v in d["switch_tiers"].items()))
    print("hosts by role:    " + ", ".join(f"{k} {v}" for k, v in d["host_roles"].items()))
    print(f"ports:            {d['host_ports']} host ports, {d['switch_ports_used']}/{d['switch_ports']} "
          f"switch ports cabled")
    for rate, v in d["links"]["by_rate"].items():
        print(f"links {rate:>8}:   {v['links']} x {v['gbps_each']:g} Gb/s")
    print(f"bisection:        {d['bisection_gbps']:,.0f} Gb/s (first half of the hosts vs the second)")
    print("oversubscription: " + (", ".join(f"{k} {v:g}:1" for k, v in d["oversubscription"].items()) or "-"))
    return 0


# ---------------------------------------------------------------------- main
def _load_plugins() -> None:
    for module in PLUGINS:
        importlib.import_module(module)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    _load_plugins()
    parser = argparse.ArgumentParser(prog="python -m fabric_engine", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    for cmd in COMMANDS.values():
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        if cmd.arguments:
            cmd.arguments(p)
        p.set_defaults(_run=cmd.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code.

    Bad input ends in one line ``error: <what, naming the file and line>`` and exit code 2, never in
    a traceback: engine errors carry their own message; a file that cannot be written, memory that
    runs out or any other unexpected failure is reported in one line too (exit code 3), ``Ctrl-C``
    exits with 130.
    """
    args = build_parser().parse_args(argv)
    keep_freed_memory()
    try:
        return int(args._run(args) or 0)
    except FabricEngineError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        return 0
    except OSError as exc:
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print("error: out of memory (the fabric or the input is too large for this machine)", file=sys.stderr)
        return 3
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        print(f"error: {args.command}: unexpected {type(exc).__name__}: {_one_line(str(exc))}", file=sys.stderr)
        return 3


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "(no message)"
