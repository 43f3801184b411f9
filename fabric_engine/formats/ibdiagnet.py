"""ibdiagnet (ibdiagnet2, NVIDIA/Mellanox ibutils2) output as a fabric input: what support and UFM ask for.

ibdiagnet writes its findings into a folder (``/var/tmp/ibdiagnet2`` by default) that operators send
as a ``.tar.gz`` or ``.zip``. Of its files these are read:

=======================  ===============================================  ===================================
file                     what it is                                       reader
=======================  ===============================================  ===================================
``ibdiagnet2.db_csv``    ibdiagnet's database: CSV sections               :func:`read_db_csv`,
                         ``START_NODES``...``END_NODES``, ``PORTS``,      :func:`counters_from_db_csv`
                         ``LINKS``, ``PM_INFO`` ...                       (:mod:`.ibdiagnet_db_csv`)
``ibdiagnet2.lst``       one line per link, OpenSM ``subnet.lst`` format  :func:`read_lst` (:mod:`.ibdiagnet_lst`)
``ibdiagnet2.pm``        port counters, one block per port                :func:`counters_from_pm`
                                                                          (:mod:`.ibdiagnet_pm`)
``ibdiagnet2.net_dump``  per-switch port table (cable mapping, FEC)       recognised by :func:`is_ibdiagnet`
=======================  ===============================================  ===================================

:func:`read_folder` and :func:`read_archive` read the best topology file present, ``db_csv`` before
``lst``; :func:`load_folder`/:func:`load_archive` also give the port counters (``PM_INFO`` of the
db_csv, else ``ibdiagnet2.pm``) as :class:`~fabric_engine.telemetry.counters.CounterSamples`.
Archives are read with the standard library only, checked before anything is inflated
(:mod:`.ibdiagnet_archive`). Errors are :class:`~fabric_engine.errors.FormatError` naming the file (the
archive member) and the line; nothing is returned half-built.

Sources of the formats (read, not copied)
-----------------------------------------
* NVIDIA, *ibdiagnet User Manual* v2.19 and *IBUtils2 Utility Documentation* v2.23, "ibdiagnet Dump
  Files" (the file list: ``.lst`` "fabric links in LST format", ``.net_dump`` "fabric link dump
  including split cable mapping and FEC info", ``.pm`` "IB spec compliant ports counters",
  ``.db_csv`` "ibdiagnet internal database") and "Flexible Output Options" (db_csv sections can be
  disabled one by one, ``--disable_output csv:nodes``; hence a missing section is reported as such).
* OpenSM ``opensm/osm_dump.c`` ``dump_topology_node`` (github.com/linux-rdma/opensm): the ``.lst`` line,
  ``{ %s%s Ports:%02X SystemGUID:%016x NodeGUID:... PortGUID:... VenID:... DevID:%04X Rev:%08X {%s}
  LID:%04X PN:%02X }`` twice then ``PHY=%s LOG=%s SPD=%s``; ``-SM`` marks the master SM's node, a
  switch's LID is its port 0's, ``LOG`` is ``ACT``/``ARM``/``INI``/``DWN``.
* ibutils ``ibdm/ibdm/Fabric.cpp`` ``IBFabric::parseSubnetLine`` (github.com/nmorey/ibutils): how ibdm
  reads it back: every field hex (``strtol(.., 16)``), ``DWN`` links ignored, ``SPD`` optional (2.5), an
  8-digit DevID cut to 16 bits; ``ibdm/Clusters/RhinoBased512.lst`` is a sample.
* ibutils2 ``ibdm/Fabric.h`` (NVIDIA, BSD licence): ``IBLinkSpeed`` (``2.5``=1, ``5``=2, ``10``=4,
  ``14``=0x100, ``25``=0x200, ``50``=0x400, ``100``=0x800, ``FDR10``=0x10000, ``200``=0x1000000) and its
  ``speed2char`` strings, ``IBLinkWidth`` (1x=1, 4x=2, 8x=4, 12x=8, 2x=0x10), the names SDR...XDR;
  ``ibdiagnet_file_names.h``: ``ibdiagnet2.lst``, ``.pm``, ``.net_dump``, ``.db_csv``.
* Public readers of the files, for the db_csv columns and the ``.pm`` and ``.net_dump`` layouts:
  NVIDIA UFM's NDT plugin (github.com/Mellanox/ufm_sdk_3.0: ``NODES`` ``NodeDesc``/``NodeGUID``/
  ``NodeType`` 1 CA, 2 switch; ``LINKS`` ``NodeGuid1,PortNum1,NodeGuid2,PortNum2``; Aggregation Nodes
  described ``Mellanox Technologies Aggregation Node``), HyungKwang/My-Programing
  ``check_ib_link_status`` (``PM_INFO`` keyed by ``NodeGUID``/``PortNumber``, ``...Extended`` and
  ``...Ext`` 64-bit counters in hex, ``0xfffffffffffffffe`` or ``-1`` where a device lacks a counter;
  ``.net_dump`` blocks headed ``"<desc>", <vendor>, <guid>, LID <n>``), a Rust loader of the
  ``NODES``/``PORTS``/``LINKS`` tables (full ``NODES`` and ``PORTS`` headers, ``LinkSpeedActv`` as a
  wide integer), a Go Prometheus exporter of ``ibdiagnet2.pm`` (block header
  ``Port=N Lid=0x.. GUID=0x.. Device=N Port Name=...``, ``snake_case=0x...`` counter lines).
* InfiniBand Architecture Specification Vol. 1: PortInfo ``LinkWidthActive``, ``LinkSpeedActive``,
  ``LinkSpeedExtActive`` encodings; PortCounters and PortCountersExtended (the counters and widths of
  :mod:`fabric_engine.telemetry.counters`).

>>> is_ibdiagnet("START_NODES\\nNodeDesc,NumPorts,NodeType\\n")
'db_csv'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from ..errors import FormatError
from ..telemetry.counters import CounterSamples
from ..topology import Fabric
from ._input import MAX_TEXT_BYTES
from .ibdiagnet_archive import KNOWN_NAMES, Bundle, archive_bundle, folder_bundle
from .ibdiagnet_db_csv import counters_from_db_csv, read_db_csv
from .ibdiagnet_lst import read_lst
from .ibdiagnet_pm import counters_from_pm

__all__ = ["KINDS", "FILE_NAMES", "is_ibdiagnet", "read", "read_db_csv", "read_lst", "counters_from_db_csv",
           "counters_from_pm", "read_folder", "read_archive", "load_folder", "load_archive", "Capture"]

#: The ibdiagnet files this module knows, best topology source first.
KINDS: tuple[str, ...] = ("db_csv", "lst", "pm", "net_dump")
#: Kind -> the file's name in ibdiagnet's output folder.
FILE_NAMES: dict[str, str] = dict(KNOWN_NAMES)
_HEAD = 1 << 16
_DB_CSV = re.compile(r"^START_([A-Z0-9_]+)[ \t]*\r?$", re.M)
_LST = re.compile(r"^\s*\{\s*(?:SW|CA|Rt)(?:-SM)?\s+Ports:", re.M)
_NET_DUMP = re.compile(r'^"[^"\n]*",\s*[^,\n]*,\s*0x[0-9A-Fa-f]+,\s*LID\s+\d+', re.M)
_PM = re.compile(r"^Port=\d+\s+Lid=\S+\s+GUID=0x[0-9A-Fa-f]+\s+Device=", re.M)
_ARCHIVE_SUFFIXES = (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tar", ".zip", ".gz")


def is_ibdiagnet(text: str) -> str | None:
    """Which ibdiagnet file ``text`` is (``"db_csv"``, ``"lst"``, ``"pm"``, ``"net_dump"``), by its content."""
    head = text[:_HEAD].lstrip("\ufeff")
    m = _DB_CSV.search(head)
    if m is not None:
        # OpenSM's opensm-smdb.dump has START_/END_ sections too; ibdiagnet's NODES header has NumPorts.
        header = head[m.end():m.end() + 1000].split("\n", 2)
        if m.group(1) != "NODES" or len(header) > 1 and "numports" in header[1].lower():
            return "db_csv"
        return None
    first = next((ln for ln in head.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    if _LST.match(first):
        return "lst"
    if _PM.search(head):
        return "pm"
    if _NET_DUMP.search(head):
        return "net_dump"
    return None


def _fabric_name(source: str) -> str:
    """A fabric name from an upload's or file's name: ``"hpc-a_ibdiagnet.tgz"`` -> ``"hpc-a_ibdiagnet"``."""
    base = PurePath(source.replace("\\", "/")).name
    for suffix in _ARCHIVE_SUFFIXES:
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
            break
    for ext in (".db_csv", ".lst"):
        base = base[: -len(ext)] if base.endswith(ext) else base
    return "fabric" if not base or source.startswith("<") or base == "ibdiagnet2" else base


def read(text: str, source: str = "<text>", name: str | None = None) -> Fabric:
    """The fabric of an ``ibdiagnet2.db_csv`` or ``ibdiagnet2.lst`` text, told apart by content."""
    kind = is_ibdiagnet(text)
    name = name or _fabric_name(source)
    if kind == "db_csv":
        return read_db_csv(text, source, name)
    if kind == "lst":
        return read_lst(text, source, name)
    what = f"an {FILE_NAMES[kind]}, which has no topology" if kind else "not an ibdiagnet2.db_csv or .lst"
    raise FormatError(source, None, f"{what}; send ibdiagnet2.db_csv or ibdiagnet2.lst")


@dataclass(frozen=True)
class Capture:
    """One ibdiagnet run: its ``fabric``, its port ``counters`` (``None`` if it has none) and the
    ``files`` used (kind -> name inside the folder or archive)."""

    fabric: Fabric
    counters: CounterSamples | None
    files: dict[str, str] = field(default_factory=dict)

    def counter_summary(self) -> dict:
        """What the run's port counters say: ``{"ports": sampled, "with_errors": ports with a non-zero error
        counter, "errors": {counter: ports where it is non-zero}, "file": where they come from}``."""
        import numpy as np

        from ..telemetry.counters import COLUMN, ERROR_COUNTERS

        samples = self.counters
        if samples is None:
            return {"ports": 0, "with_errors": 0, "errors": {}, "file": None}
        cols = [COLUMN[c] for c in ERROR_COUNTERS]
        errors = (samples.values[:, cols] > 0) & (samples.bits[:, cols] > 0)
        per_counter = errors.sum(axis=0)
        return {"ports": len(samples), "with_errors": int(np.count_nonzero(errors.any(axis=1))),
                "errors": {c: int(n) for c, n in zip(ERROR_COUNTERS, per_counter, strict=True) if n},
                "file": self.files.get("pm") or self.files.get("db_csv")}


def _load(bundle: Bundle, name: str, counters: bool, t: float | None) -> Capture:
    topo = next((k for k in ("db_csv", "lst") if k in bundle.members), None)
    if topo is None:
        present = ", ".join(m.name for m in bundle.members.values()) or "none of ibdiagnet's files"
        raise FormatError(bundle.source, None, f"no ibdiagnet2.db_csv or ibdiagnet2.lst (found: {present})")
    text = bundle.read(topo)
    src = bundle.member_source(topo)
    fabric = read_db_csv(text, src, name) if topo == "db_csv" else read_lst(text, src, name)
    files = {topo: bundle.members[topo].name}
    samples = None
    if counters:
        if topo == "db_csv" and "\nSTART_PM_INFO" in text:
            stamp = t if t is not None else bundle.members[topo].mtime or 0.0
            samples = counters_from_db_csv(text, src, stamp)
        elif "pm" in bundle.members:
            stamp = t if t is not None else bundle.members["pm"].mtime or 0.0
            samples = counters_from_pm(bundle.read("pm"), bundle.member_source("pm"), stamp)
            files["pm"] = bundle.members["pm"].name
    return Capture(fabric, samples, files)


def load_folder(path: str | os.PathLike, counters: bool = True, t: float | None = None,
                max_bytes: int = MAX_TEXT_BYTES) -> Capture:
    """Fabric and counters of ibdiagnet's output folder ``path`` (``t``: sweep time, default the file's mtime)."""
    return _load(folder_bundle(path, max_bytes), Path(path).name or "fabric", counters, t)


def load_archive(data: bytes, source: str = "upload", counters: bool = True, t: float | None = None,
                 max_bytes: int = MAX_TEXT_BYTES) -> Capture:
    """Fabric and counters of an uploaded archive of the folder, or of one of its files (gzipped or not)."""
    return _load(archive_bundle(data, source, max_bytes, is_ibdiagnet), _fabric_name(source), counters, t)


def read_folder(path: str | os.PathLike) -> Fabric:
    """The fabric of ibdiagnet's output folder: its ``ibdiagnet2.db_csv``, else its ``ibdiagnet2.lst``."""
    return load_folder(path, counters=False).fabric


def read_archive(data: bytes, source: str = "upload", max_bytes: int = MAX_TEXT_BYTES) -> Fabric:
    """The fabric of an uploaded ibdiagnet archive (``.tar.gz``, ``.zip`` ...): db_csv first, then lst.

    ``max_bytes``: the most a file of it, and all of its members together, may hold.
    """
    return load_archive(data, source, counters=False, max_bytes=max_bytes).fabric
