"""How every CLI command reads a fabric file: format, node name map, and the warnings it prints.

``--from`` names the format (default: inferred), ``--node-name-map`` a GUID-to-name file
(rdma-core's format, :mod:`.formats.node_name_map`). Lines skipped while reading (prompts,
banners, a tool's stderr; :mod:`.captured`) are printed to stderr, one
``file:line: reason: text`` each, so a pipeline's output stays the command's own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .topology import Fabric

__all__ = ["add_input_arguments", "read_fabric", "print_warnings", "ibdiagnet_counters"]


def add_input_arguments(p: argparse.ArgumentParser, dest: str = "from_fmt") -> None:
    """``--from`` and ``--node-name-map``."""
    from .formats import FORMATS

    p.add_argument("--from", dest=dest, choices=FORMATS, help="input format (default: inferred from the content)")
    p.add_argument("--node-name-map", metavar="FILE",
                   help="node GUID -> name file (as ibnetdiscover --node-name-map takes)")


def read_fabric(path: str, args: argparse.Namespace, dest: str = "from_fmt", quiet: bool = False) -> Fabric:
    """The fabric in the file ``path`` (a command-line argument: always a file, read as a ``Path``), read as
    ``args`` say; its warnings go to stderr unless ``quiet``."""
    from . import formats
    from .formats import node_name_map
    from .formats._input import read_text

    names = None
    if getattr(args, "node_name_map", None):
        names = node_name_map.read(read_text(Path(args.node_name_map), max_bytes=64 * 2**20), args.node_name_map)
    fabric = formats.read(Path(path), fmt=getattr(args, dest, None), node_name_map=names)
    if not quiet:
        print_warnings(fabric, path)
    return fabric


def print_warnings(fabric: Fabric, source: str) -> None:
    """Every warning in ``fabric.meta["warnings"]`` on stderr."""
    for w in fabric.meta.get("warnings") or ():
        text = f": {w['text']}" if w["text"] else ""
        print(f"warning: {source}:{w['line']}: {w['reason']}{text}", file=sys.stderr)


def ibdiagnet_counters(path: str) -> dict | None:
    """Summary of the port counters an ibdiagnet folder or archive holds (``None`` for other inputs):
    :meth:`~fabric_engine.formats.ibdiagnet.Capture.counter_summary`."""
    from .formats import ibdiagnet
    from .formats._input import read_bytes
    from .formats.ibdiagnet_archive import is_archive

    p = Path(path)
    if p.is_dir():
        return ibdiagnet.load_folder(p).counter_summary()
    data = read_bytes(p)
    if not is_archive(data):
        return None
    return ibdiagnet.load_archive(data, str(p)).counter_summary()
