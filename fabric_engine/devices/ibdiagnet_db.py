"""Read the device sections of ``ibdiagnet2.db_csv``: TEMP_SENSING, NODES_INFO, FEC_MODE, WARNINGS_* and ERRORS_*.

The database's sections are CSV tables between ``START_<NAME>`` and ``END_<NAME>`` (split by
:func:`fabric_engine.formats.ibdiagnet_db_csv.sections`; ibutils2 ``ibdiag_types.h`` names them
``SECTION_TEMP_SENSING``, ``SECTION_NODES_INFO``, ``SECTION_FEC_MODE``). Columns are found by name,
case-insensitively, so versions that add or reorder columns read alike:

* ``TEMP_SENSING`` (the vendor TempSensing SMP of each switch): ``NodeGUID``/``NodeGuid`` and
  ``CurrentTemperature`` (``CurrentTemp``, ``Temperature`` in other writers); ``MaxTemperature``,
  ``WarningThreshold``, ``CriticalThreshold`` where present. One :class:`DeviceVitals` per node, named by its
  ``NODES`` description when that section is there;
* ``NODES_INFO`` (the vendor GeneralInfo MAD): ``NodeGUID``, ``HWInfo_DeviceID``, ``HWInfo_DeviceHWRevision``,
  ``HWInfo_UpTime`` (seconds), ``FWInfo_Major/Minor/SubMinor`` and ``FWInfo_Extended_Major/Minor/SubMinor``
  (the extended fields are the version when any is non-zero, as ibdiag's ``fw_version_obj`` takes them),
  ``FWInfo_PSID``; numbers in hex;
* ``FEC_MODE``: ``NodeGuid``, ``PortNum`` and the FEC columns; the active FEC from a column named like
  ``FECActv``/``FECModeActive`` (ibdm ``IBFECMode`` numbers, as :mod:`fabric_engine.health.ibdiagnet_phy` reads
  them), every other cell kept as printed, in columns (:class:`~.vitals.FecModes`);
* ``WARNINGS_<CHECK>`` and ``ERRORS_<CHECK>`` (ibdiagnet's findings per check): ``Scope``, ``NodeGUID``,
  ``PortGUID``, ``PortNumber``, ``EventName``, ``Summary``.

A value that is not a number where one is read, a GUID out of range, a temperature outside -60..200 C name the
file and line (:class:`FormatError`); ``N/A`` cells are not given.
"""

from __future__ import annotations

import re

import numpy as np

from ..formats.ibdiagnet_db_csv import Section, sections
from ..health.ibdiagnet_phy import IB_FEC_MODES  # ibdm IBFECMode -> FEC name, read there for the link health rows
from ..health.thresholds import normalize_fec
from ._text import MAX_FIELD_CHARS, device_type, float_of, guid_of, int_of
from .nodes_info import NODE_INFO_FIELDS, node_info
from .vitals import DeviceVitals, FabricWarning, FecModes, NodeInfo, Temperature

__all__ = ["read", "looks_like", "DEVICE_SECTIONS"]

#: Sections read by name (``WARNINGS_*`` and ``ERRORS_*`` are found by prefix).
DEVICE_SECTIONS = ("TEMP_SENSING", "NODES_INFO", "FEC_MODE", "NODES")
# A newline first (a literal: a fast scan of a big database; the text is searched with one put before it).
_FINDINGS = re.compile(r"\nSTART_((?:WARNINGS|ERRORS)_[A-Za-z0-9_]{1,100})[ \t]*\r?(?=\n|$)")
_DEVICE_START = re.compile(r"\nSTART_(?:TEMP_SENSING|NODES_INFO|FEC_MODE|WARNINGS_\w+|ERRORS_\w+)[ \t]*\r?(?=\n|$)")
_MISSING = frozenset({"", "N/A", "NA", "-"})


def looks_like(text: str) -> bool:
    """Whether ``text`` is an ibdiagnet database with a device section."""
    return _DEVICE_START.search(text) is not None or _DEVICE_START.match("\n" + text[:200]) is not None


def _cells(sec: Section, *names: str) -> list[str] | None:
    return sec.col(*names, required=False)


def _index(sec: Section, *names: str) -> int | None:
    wanted = [n.lower() for n in names]
    heads = [h.strip().lower() for h in sec.header]
    return next((heads.index(n) for n in wanted if n in heads), None)


def _guids(sec: Section) -> list[int]:
    """The rows' node GUIDs, each distinct text parsed once (a switch has a row per port)."""
    values = sec.col("NodeGUID", "NodeGuid")
    parsed: dict[str, int] = {}
    for i, v in enumerate(values):
        if v not in parsed:
            parsed[v] = guid_of(v, sec.source, int(sec.lines[i]))
    return [parsed[v] for v in values]


def _names(found: dict[str, Section]) -> dict[int, str]:
    nodes = found.get("NODES")
    if nodes is None:
        return {}
    desc = nodes.col("NodeDesc")
    return dict(zip(_guids(nodes), (d[:MAX_FIELD_CHARS] for d in desc), strict=True))


def _temperatures(sec: Section, names: dict[int, str]) -> list[DeviceVitals]:
    guids = _guids(sec)
    cur = sec.col("CurrentTemperature", "CurrentTemp", "Temperature")
    extra = {key: _cells(sec, *alts) for key, alts in (("max", ("MaxTemperature", "MaxTemp")),
                                                       ("warn", ("WarningThreshold", "WarnThresh")),
                                                       ("crit", ("CriticalThreshold", "CritThresh")))}
    by_node: dict[int, tuple[int, list[Temperature]]] = {}
    for i, g in enumerate(guids):
        line = int(sec.lines[i])

        def num(values: list[str] | None, what: str, i: int = i, line: int = line) -> float | None:
            if values is None or values[i].upper() in _MISSING:
                return None
            return float_of(values[i], sec.source, line, f"TEMP_SENSING {what}", -60, 200)

        first, temps = by_node.setdefault(g, (line, []))
        temps.append(Temperature("ASIC" if not temps else f"sensor {len(temps) + 1}", num(cur, "temperature"),
                                 num(extra["max"], "maximum"), num(extra["warn"], "warning threshold"),
                                 num(extra["crit"], "critical threshold")))
    return [DeviceVitals(g, names.get(g, f"0x{g:016x}"), f"{sec.source}:{line}", None, None, None, None, None, None,
                         (), (), tuple(temps), ()) for g, (line, temps) in by_node.items()]


def _nodes_info(sec: Section, names: dict[int, str]) -> list[NodeInfo]:
    used = [(i, h.strip()) for i, h in enumerate(sec.header) if h.strip() in NODE_INFO_FIELDS]
    out, memo = [], {}
    for i, g in enumerate(_guids(sec)):
        line = int(sec.lines[i])
        row = sec.rows[i]
        fields = {h: (row[k].strip(), line) for k, h in used}
        out.append(node_info(fields, g, names.get(g, f"0x{g:016x}"), sec.source, line, memo))
    return out


def _fec(sec: Section) -> FecModes:
    """The section as columns: each distinct GUID and FEC cell parsed once, no loop over the ports."""
    columns = list(zip(*sec.rows, strict=False)) if sec.rows else []
    heads = [h.strip() for h in sec.header]

    def column(*names: str) -> np.ndarray:
        i = _index(sec, *names)
        if i is None:
            return np.full(len(sec.rows), "", dtype=object)
        return np.array(columns[i], dtype=object) if columns else np.zeros(0, dtype=object)

    cells, inverse = np.unique(np.array(column("NodeGuid", "NodeGUID"), dtype=str), return_inverse=True)
    first = np.zeros(cells.size, np.int64)
    first[inverse[::-1]] = np.arange(inverse.size)[::-1]  # the first row of each distinct cell, for its line
    guid = np.array([guid_of(c, sec.source, int(sec.lines[k])) for c, k in zip(cells.tolist(), first.tolist(),
                                                                                   strict=True)], dtype=np.uint64)
    port = sec.ints(sec.col("PortNum", "PortNumber"), "PortNum", 0, 255).astype(np.int16)
    fec_cells, fec_inverse = np.unique(np.array(column("FECActv", "FECModeActive", "FECActive", "ActiveFEC"),
                                                dtype=str), return_inverse=True)
    active = np.array([_fec_name(c.strip()) or "" for c in fec_cells.tolist()], dtype=object)
    identity = {"nodeguid", "portguid", "portnum", "portnumber"}
    fields = {h: np.array(columns[i], dtype=object) for i, h in enumerate(heads)
              if h.lower() not in identity and columns}
    return FecModes(guid[inverse] if guid.size else np.zeros(0, np.uint64), port,
                    active[fec_inverse] if active.size else np.zeros(0, dtype=object), np.asarray(sec.lines),
                    fields, sec.source)


def _fec_name(cell: str) -> str | None:
    """The FEC an ``FECActv`` cell names: an ibdm IBFECMode number, or a name as mlxlink prints it."""
    if cell.upper() in _MISSING:
        return None
    try:
        return IB_FEC_MODES.get(int(cell, 16) if cell[:2].lower() == "0x" else int(cell))
    except ValueError:
        return normalize_fec(cell[:MAX_FIELD_CHARS]) or None


def _findings(sec: Section) -> list[FabricWarning]:
    severity = "warning" if sec.name.startswith("WARNINGS_") else "error"
    check = sec.name.split("_", 1)[1]
    scope, event, summary = (_cells(sec, n) for n in ("Scope", "EventName", "Summary"))
    guid, port = _cells(sec, "NodeGUID", "NodeGuid"), _cells(sec, "PortNumber", "PortNum")
    out = []
    for i in range(len(sec.rows)):
        line = int(sec.lines[i])
        g = guid[i] if guid is not None else ""
        p = port[i] if port is not None else ""
        out.append(FabricWarning(
            severity, check, scope[i][:MAX_FIELD_CHARS] if scope else "",
            guid_of(g, sec.source, line) or None if g.upper() not in _MISSING else None,
            int_of(p, sec.source, line, "PortNumber", 255) if p.upper() not in _MISSING else None,
            event[i][:MAX_FIELD_CHARS] if event else "", summary[i][:1024] if summary else "", f"{sec.source}:{line}"))
    return out


def read(text: str, source: str = "ibdiagnet2.db_csv", warnings: list | None = None) -> dict[str, list]:
    """The device sections of ``text``: ``{"vitals", "nodes_info", "fec_modes", "warnings"}``."""
    wanted = set(DEVICE_SECTIONS) | {m.group(1) for m in _FINDINGS.finditer(text)}
    if text.startswith("START_") and (first := _FINDINGS.match("\n" + text[:200])) is not None:
        wanted.add(first.group(1))
    found = sections(text, source, wanted)
    names = _names(found)
    out: dict[str, list] = {"vitals": [], "nodes_info": [], "fec_modes": [], "warnings": []}
    if "TEMP_SENSING" in found:
        out["vitals"] = _temperatures(found["TEMP_SENSING"], names)
    if "NODES_INFO" in found:
        out["nodes_info"] = _nodes_info(found["NODES_INFO"], names)
    if "FEC_MODE" in found:
        out["fec_modes"] = [_fec(found["FEC_MODE"])]
    for name in sorted(n for n in found if n.startswith(("WARNINGS_", "ERRORS_"))):
        out["warnings"].extend(_findings(found[name]))
    return out


def node_type(info: NodeInfo) -> str:
    """The device type of a node (``MT54002``), or ``unknown`` when its DeviceID was not read."""
    return device_type(info.device_id) if info.device_id is not None else "unknown"
