"""GUID files as OpenSM reads them: ``--root_guid_file`` (-a), ``--cn_guid_file`` (-u), ``--io_guid_file`` (-G).

OpenSM 3.3.23 reads all three with ``parse_node_map`` (``complib/cl_nodenamemap.c``): one GUID per
line, leading blanks skipped, blank lines and lines starting with ``#`` ignored; the GUID is read with
``strtoull(p, &e, 0)`` -- ``0x``/``0X`` hexadecimal, a leading ``0`` octal, otherwise decimal -- and
must be followed by a blank, ``#`` or the end of the line (anything after it, such as a node name, is
ignored). Any other line makes OpenSM reject the whole file (``ERR AB2A``/``AB23``/``AB28``); so does
:func:`read_guids`, with a :class:`~fabric_engine.errors.FormatError` naming the file and the line.

What the GUIDs are matched against (``osm_ucast_ftree.c``): root GUIDs against switch *node* GUIDs
(``rank_root_sw_by_guid``), compute-node and I/O GUIDs against CA *port* GUIDs
(``fabric_construct_hca_ports``: ``osm_physp_get_port_guid``).

>>> [hex(g) for g in read_guids("# roots\\n0x98039b0300000001  spine01\\n  0X2A\\n10\\n")]
['0x98039b0300000001', '0x2a', '0xa']
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..errors import FormatError

__all__ = ["read_guids", "parse_guids", "MAX_GUID_FILE_BYTES", "write_guids", "suggest_guid_files"]

#: Largest GUID file accepted (checked before it is read): 16 MiB is some 800,000 GUIDs, a dozen subnets' worth.
MAX_GUID_FILE_BYTES = 16 * 2**20
# strtoull(p, &e, 0) as parse_node_map calls it: an optional sign is accepted by C but never meant for a GUID.
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")


def _text(data: str | os.PathLike, source: str | None) -> tuple[str, str]:
    """``(source, text)`` of a path (size checked first, gzip allowed) or of the text itself (decided by type)."""
    from ..formats._input import read_text

    if isinstance(data, str):
        return source or "<guids>", data
    if not isinstance(data, os.PathLike):
        raise TypeError(f"read_guids() takes a Path or the text (str), not {type(data).__name__}")
    p = Path(data)
    source = source or str(p)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise FormatError(source, None, f"cannot read: {exc.strerror or exc}") from None
    if size > MAX_GUID_FILE_BYTES:
        raise FormatError(source, None, f"{size:,} bytes: a GUID file has at most {MAX_GUID_FILE_BYTES:,}")
    return source, read_text(p, source, max_bytes=MAX_GUID_FILE_BYTES)


def read_guids(data: str | os.PathLike, source: str | None = None) -> list[int]:
    """The GUIDs of a GUID file, in file order, as OpenSM parses them (module doc).

    ``data`` is a ``Path`` of the file (trusted callers: the CLI) or the file's text: a ``str`` is always
    the text, never a file name. Raises :class:`~fabric_engine.errors.FormatError` naming the file and
    line of a line OpenSM would refuse, of a GUID beyond 64 bits, or for a file over
    :data:`MAX_GUID_FILE_BYTES`.
    """
    return parse_guids(*reversed(_text(data, source)))


def parse_guids(text: str, source: str = "<guids>") -> list[int]:
    """The GUIDs of a GUID file's ``text`` (never a path: an upload's text is only ever text)."""
    guids = []
    for no, line in enumerate(text.splitlines(), start=1):
        s = line.lstrip()
        if not s or s.startswith("#"):
            continue
        m = _NUMBER.match(s)
        end = m.end() if m else 0
        if not m or (end < len(s) and not s[end].isspace() and s[end] != "#"):
            word = s.split()[0]
            hint = " (OpenSM reads a GUID without 0x as decimal: write 0x...)" if re.fullmatch(
                r"[0-9a-fA-F]{1,16}", word) else ""
            raise FormatError(source, no, f"not a GUID: {word[:40]!r}{hint}")
        guid = int(m.group(0), 0) if not re.fullmatch(r"0[0-7]+", m.group(0)) else int(m.group(0), 8)
        if guid >= 2**64:
            raise FormatError(source, no, f"GUID out of range (more than 64 bits): {m.group(0)!r}")
        guids.append(guid)
    return guids


def write_guids(path: str | os.PathLike, guids: Iterable[int], comment: str = "") -> Path:
    """Write ``guids`` one per line as ``0x%016x`` under ``# comment`` lines (OpenSM and :func:`read_guids` read it)."""
    p = Path(path)
    head = "".join(f"# {line}\n" for line in comment.splitlines())
    p.write_text(head + "".join(f"0x{int(g):016x}\n" for g in guids))
    return p


def suggest_guid_files(fabric) -> tuple[list[int], list[int]]:
    """``(root switch node GUIDs, compute-node port GUIDs)`` for OpenSM's ``--root_guid_file``/``--cn_guid_file``.

    Compute nodes: the cabled ports of the ``gpu`` hosts (all hosts when none has that role); SHARP
    Aggregation Nodes are never hosts. Roots: the switches farthest from the compute nodes' switches.
    """
    from ..topology import ROLES
    from .graph import switch_distances

    f = fabric
    hosts = f.hosts
    gpu = hosts[f.role[hosts] == ROLES.index("gpu")]
    hosts = gpu if gpu.size else hosts
    is_cn = np.zeros(f.num_nodes, dtype=bool)
    is_cn[hosts] = True
    slots = np.flatnonzero(is_cn[f.port_node] & (f.port_out_link >= 0))
    leaves = f.switch_index[f.dl_dst[f.port_out_link[slots]]]
    leaves = np.unique(leaves[leaves >= 0])
    if not leaves.size:
        return [], [int(g) for g in f.port_guid[slots]]
    d = switch_distances(f)[leaves]
    d = np.where(d >= 0, d, np.iinfo(np.int16).max).min(axis=0)
    far = d[d < np.iinfo(np.int16).max].max(initial=0)
    roots = f.switches[(d == far) & (d < np.iinfo(np.int16).max)]
    return [int(g) for g in f.guid[roots]], [int(g) for g in f.port_guid[slots]]
