"""ibweb's JSON form of a :class:`Fabric` (``"format": "ibweb-fabric"``, version 1).

Columnar: ``nodes`` and ``links`` hold parallel arrays, in node and cable index
order, exactly as the live feed snapshot and the REST API carry them::

    {"format": "ibweb-fabric", "version": 1, "name": "demo",
     "nodes": {"kind": ["switch", "host"], "name": [...], "guid": ["0x98039b0300000001", ...],
               "lid": [...], "nports": [...], "role": ["switch", "gpu"], "tier": [1, 0], "group": [-1, -1]},
     "links": {"a_node": [...], "a_port": [...], "b_node": [...], "b_port": [...],
               "width": [4, ...], "speed": ["NDR", ...], "capacity_gbps": [400.0, ...], "length_m": [3.0, ...]}}

Fields: ``kind`` ``"host"``/``"switch"``; ``guid`` a 64-bit hex string; ``lid`` the switch
LID or a host's first-port LID (a host's port ``p`` has LID ``lid + p - 1``, unless the optional
``port_lids`` table of the ports off that rule says otherwise; :mod:`.json_ports`); ``role``
one of ``gpu``, ``storage``, ``mgmt``, ``switch``, ``aggregation`` (a SHARP Aggregation Node,
never a host); ``tier`` 0 host, 1 leaf, 2 spine,
3 core; ``group`` pod/SU/group or -1. Links are cables ``a`` -> ``b`` with 1-based
ports, ``width`` in lanes (1, 2, 4, 8, 12) and lane ``speed`` (SDR .. XDR);
``capacity_gbps`` is derived from them and ignored by :func:`from_json`. ``trained_down`` (optional, present
only when some cable is) flags cables whose two ends printed different rates, the lower read
(``Fabric.trained_down``). An optional ``as_read``
object keeps what a capture said beyond the graph (loopback cables, chassis, NodeDescriptions,
the reader's warnings; :mod:`.json_meta`).

:func:`from_json` checks every count and value against the bounds of one subnet
(:mod:`fabric_engine.topology.limits`: at most 49,151 nodes, 1..254 ports a node,
LIDs 1..0xBFFF, 64-bit GUIDs, names of at most 256 characters) before it builds
anything, naming the field and index of the first offence.
"""

from __future__ import annotations

import json

import numpy as np

from ..errors import FormatError
from ..topology import ROLES, SPEEDS, TIER_NAMES, WIDTHS, Fabric
from ..topology.fabric import KIND_NAMES
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NAME_CHARS, MAX_NODE_PORTS, MAX_UNICAST_LID
from . import _common, json_meta, json_ports

__all__ = ["FORMAT", "VERSION", "to_json", "from_json"]

FORMAT = "ibweb-fabric"
VERSION = 1


def to_json(fabric: Fabric, as_read: tuple[str, ...] = json_meta.KEYS) -> dict:
    """The JSON-ready dict of ``fabric``, with the ``as_read`` entries named (all by default; ``()`` for none)."""
    f = fabric
    kinds = np.array(KIND_NAMES, dtype=object)
    roles = np.array(ROLES, dtype=object)
    speeds = np.array(SPEEDS, dtype=object)
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": f.name,
        "nodes": {
            "kind": kinds[f.kind].tolist(),
            "name": [str(n) for n in f.node_name],
            "guid": [f"0x{int(g):016x}" for g in f.guid],
            "lid": f.lid.tolist(),
            "nports": f.nports.tolist(),
            "role": roles[f.role].tolist(),
            "tier": f.tier.tolist(),
            "group": f.group.tolist(),
        },
        "links": {
            "a_node": f.a_node.tolist(),
            "a_port": f.a_port.tolist(),
            "b_node": f.b_node.tolist(),
            "b_port": f.b_port.tolist(),
            "width": f.width.tolist(),
            "speed": speeds[f.speed].tolist(),
            "capacity_gbps": f.capacity_gbps[: f.num_links].tolist(),
            "length_m": np.round(f.length_m.astype(np.float64), 2).tolist(),
            **({"trained_down": f.trained_down.tolist()} if f.trained_down.any() else {}),
        },
        **json_ports.lids_to_json(f),
        **({"as_read": extra} if (extra := {**json_meta.to_json(f.meta, as_read),
                                            **(json_ports.guids_to_json(f) if json_ports.GUIDS in as_read else {})})
           else {}),
    }


_NODE_FIELDS = ("kind", "name", "guid", "lid", "nports", "role", "tier", "group")
_LINK_FIELDS = ("a_node", "a_port", "b_node", "b_port", "width", "speed")


def _codes(values: list, names: tuple[str, ...], field: str, source: str) -> list[int]:
    table = {n: i for i, n in enumerate(names)}
    try:
        return [table[v] for v in values]
    except (KeyError, TypeError):
        i, bad = next((i, v) for i, v in enumerate(values) if not isinstance(v, str) or v not in table)
        raise FormatError(source, None, f"{field}[{i}]: unknown value {str(bad)[:40]!r}; known: {', '.join(names)}") \
            from None


def _ints(values: list, field: str, source: str, lo: int, hi: int, why: str) -> np.ndarray:
    """``values`` as int64, each checked to be an integer in ``lo..hi``."""
    try:
        arr = np.asarray(values)
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise ValueError
        arr = arr.astype(np.int64)
    except (ValueError, TypeError, OverflowError):
        raise FormatError(source, None, f"{field}: expected a list of integers") from None
    bad = np.flatnonzero((arr < lo) | (arr > hi))
    if bad.size:
        i = int(bad[0])
        raise FormatError(source, None, f"{field}[{i}]: {int(arr[i])} is outside {lo}..{hi} ({why})")
    return arr


def _guids(values: list, source: str) -> list[int]:
    out = []
    for i, g in enumerate(values):
        try:
            if not isinstance(g, str) or len(g) > 18:
                raise ValueError
            v = int(g, 16)
        except ValueError:
            raise FormatError(source, None, f"nodes.guid[{i}]: expected a hex string like '0x98039b0300000001'") \
                from None
        if not 0 < v < 1 << 64:
            raise FormatError(source, None, f"nodes.guid[{i}]: {g} is not a non-zero 64-bit GUID")
        out.append(v)
    return out


def _trained_down(values, count: int, source: str) -> dict:
    """``meta`` entry of the optional ``links.trained_down`` flags (cable indices), checked."""
    if values is None:
        return {}
    if not isinstance(values, list) or len(values) != count or not all(isinstance(v, bool) for v in values):
        raise FormatError(source, None, f"links.trained_down: expected {count} booleans")
    return {"trained_down": [i for i, v in enumerate(values) if v]} if any(values) else {}


def _lengths(values, count: int, source: str) -> np.ndarray:
    if values is None:
        return np.full(count, 3.0)
    try:
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape != (count,) or not np.isfinite(arr).all() or (arr < 0).any():
            raise ValueError
    except (ValueError, TypeError, OverflowError):
        raise FormatError(source, None, f"links.length_m: expected {count} finite, non-negative numbers") from None
    return arr


_LIMITS = {
    "nodes": (MAX_UNICAST_LID, f"one subnet has {MAX_UNICAST_LID:,} unicast LIDs, one per switch and host port"),
    "links": (MAX_FABRIC_PORTS // 2, f"a subnet's fabric has at most {MAX_FABRIC_PORTS:,} ports, two per link"),
}
_PORTS_WHY = "port numbers are 1..254"


def from_json(data: dict | str | bytes, source: str = "<json>") -> Fabric:
    """The :class:`Fabric` of an ``ibweb-fabric`` JSON document (dict or text).

    Raises :class:`FormatError` naming the field (or the line, for JSON syntax errors).
    """
    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise FormatError(source, exc.lineno, f"invalid JSON: {exc.msg}") from None
        except RecursionError:
            raise FormatError(source, None, "invalid JSON: nested too deeply") from None
        except ValueError as exc:  # e.g. an integer of more than 4,300 digits
            raise FormatError(source, None, f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise FormatError(source, None, "expected a JSON object")
    if data.get("format") != FORMAT:
        raise FormatError(source, None, f"format: expected {FORMAT!r}, got {str(data.get('format'))[:40]!r}")
    if data.get("version") != VERSION:
        raise FormatError(source, None, f"version: this reader knows version {VERSION}, "
                                        f"got {str(data.get('version'))[:40]!r}")
    parts = {}
    for section, fields in (("nodes", _NODE_FIELDS), ("links", _LINK_FIELDS)):
        block = data.get(section)
        if not isinstance(block, dict):
            raise FormatError(source, None, f"{section}: expected an object of parallel arrays")
        lengths = set()
        for fld in fields:
            if not isinstance(block.get(fld), list):
                raise FormatError(source, None, f"{section}.{fld}: missing or not a list")
            lengths.add(len(block[fld]))
        if len(lengths) > 1:
            raise FormatError(source, None, f"{section}: arrays differ in length ({sorted(lengths)})")
        most, why = _LIMITS[section]
        if max(lengths) > most:
            raise FormatError(source, None, f"{section}: {max(lengths):,} entries; at most {most:,} ({why})")
        parts[section] = block
    nodes, links = parts["nodes"], parts["links"]
    n = len(nodes["name"])
    guid = _guids(nodes["guid"], source)
    for i, nm in enumerate(nodes["name"]):
        if not isinstance(nm, str) or not 0 < len(nm) <= MAX_NAME_CHARS:
            raise FormatError(source, None, f"nodes.name[{i}]: expected a string of 1..{MAX_NAME_CHARS} characters")
    name = data.get("name")
    nports = _ints(nodes["nports"], "nodes.nports", source, 1, MAX_NODE_PORTS, _PORTS_WHY)
    if int(nports.sum()) > MAX_FABRIC_PORTS:
        raise FormatError(source, None, f"nodes.nports: {int(nports.sum()):,} ports in all; a subnet's fabric has "
                                        f"at most {MAX_FABRIC_PORTS:,}")
    node_range = (0, max(n - 1, 0), f"node indices of the {n} nodes")
    kind = np.asarray(_codes(nodes["kind"], KIND_NAMES, "nodes.kind", source), dtype=np.int8)
    lid = _ints(nodes["lid"], "nodes.lid", source, 1, MAX_UNICAST_LID, "unicast LIDs are 1..0xBFFF")
    as_read = data.get("as_read")
    guid_table = as_read.get(json_ports.GUIDS) if isinstance(as_read, dict) else None
    if guid_table is not None:
        as_read = {k: v for k, v in as_read.items() if k != json_ports.GUIDS}
    return _common.build(
        source, name if isinstance(name, str) and 0 < len(name) <= MAX_NAME_CHARS else "fabric",
        kind=kind, node_name=nodes["name"], guid=guid, lid=lid, nports=nports,
        port_lid=json_ports.port_lids(data.get(json_ports.LIDS), kind, lid, nports, nodes["name"], source),
        port_guid=json_ports.port_guids(guid_table, kind, guid, nports, nodes["name"], source),
        role=_codes(nodes["role"], ROLES, "nodes.role", source),
        tier=_ints(nodes["tier"], "nodes.tier", source, 0, len(TIER_NAMES) - 1, "0 host, 1 leaf, 2 spine, 3 core"),
        group=_ints(nodes["group"], "nodes.group", source, -1, 2**31 - 1, "-1 or a group number"),
        a_node=_ints(links["a_node"], "links.a_node", source, *node_range),
        a_port=_ints(links["a_port"], "links.a_port", source, 1, MAX_NODE_PORTS, _PORTS_WHY),
        b_node=_ints(links["b_node"], "links.b_node", source, *node_range),
        b_port=_ints(links["b_port"], "links.b_port", source, 1, MAX_NODE_PORTS, _PORTS_WHY),
        width=_ints(links["width"], "links.width", source, 1, max(WIDTHS), f"lanes, one of {WIDTHS}"),
        speed=_codes(links["speed"], SPEEDS, "links.speed", source),
        length_m=_lengths(links.get("length_m"), len(links["a_node"]), source),
        meta={"source_format": "json", **json_meta.from_json(as_read, nodes["name"], source),
              **_trained_down(links.get("trained_down"), len(links["a_node"]), source)},
    )
