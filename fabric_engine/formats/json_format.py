"""ibweb's JSON form of a :class:`Fabric` (``"format": "ibweb-fabric"``, version 1).

Columnar: ``nodes`` and ``links`` hold parallel arrays, in node and cable index
order, exactly as the live feed snapshot and the REST API carry them::

    {"format": "ibweb-fabric", "version": 1, "name": "demo",
     "nodes": {"kind": ["switch", "host"], "name": [...], "guid": ["0x98039b0300000001", ...],
               "lid": [...], "nports": [...], "role": ["switch", "gpu"], "tier": [1, 0], "group": [-1, -1]},
     "links": {"a_node": [...], "a_port": [...], "b_node": [...], "b_port": [...],
               "width": [4, ...], "speed": ["NDR", ...], "capacity_gbps": [400.0, ...], "length_m": [3.0, ...]}}

Fields: ``kind`` ``"host"``/``"switch"``; ``guid`` a 64-bit hex string; ``lid`` the switch
LID or a host's first-port LID (a host's port ``p`` has LID ``lid + p - 1``); ``role``
one of ``gpu``, ``storage``, ``mgmt``, ``switch``; ``tier`` 0 host, 1 leaf, 2 spine,
3 core; ``group`` pod/SU/group or -1. Links are cables ``a`` -> ``b`` with 1-based
ports, ``width`` in lanes (1, 2, 4, 8, 12) and lane ``speed`` (SDR .. XDR);
``capacity_gbps`` is derived from them and ignored by :func:`from_json`.
"""

from __future__ import annotations

import json

import numpy as np

from ..errors import FormatError
from ..topology import ROLES, SPEEDS, Fabric
from ..topology.fabric import KIND_NAMES
from . import _common

__all__ = ["FORMAT", "VERSION", "to_json", "from_json"]

FORMAT = "ibweb-fabric"
VERSION = 1


def to_json(fabric: Fabric) -> dict:
    """The JSON-ready dict of ``fabric``."""
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
        },
    }


_NODE_FIELDS = ("kind", "name", "guid", "lid", "nports", "role", "tier", "group")
_LINK_FIELDS = ("a_node", "a_port", "b_node", "b_port", "width", "speed")


def _codes(values: list, names: tuple[str, ...], field: str, source: str) -> list[int]:
    table = {n: i for i, n in enumerate(names)}
    try:
        return [table[v] for v in values]
    except (KeyError, TypeError):
        bad = next(v for v in values if not isinstance(v, str) or v not in table)
        raise FormatError(source, None, f"{field}: unknown value {bad!r}; known: {', '.join(names)}") from None


def _ints(values: list, field: str, source: str) -> np.ndarray:
    try:
        arr = np.asarray(values)
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise ValueError
        return arr.astype(np.int64)
    except (ValueError, TypeError):
        raise FormatError(source, None, f"{field}: expected a list of integers") from None


def from_json(data: dict | str | bytes, source: str = "<json>") -> Fabric:
    """The :class:`Fabric` of an ``ibweb-fabric`` JSON document (dict or text).

    Raises :class:`FormatError` naming the field (or the line, for JSON syntax errors).
    """
    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise FormatError(source, exc.lineno, f"invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise FormatError(source, None, "expected a JSON object")
    if data.get("format") != FORMAT:
        raise FormatError(source, None, f"format: expected {FORMAT!r}, got {data.get('format')!r}")
    if data.get("version") != VERSION:
        raise FormatError(source, None, f"version: this reader knows version {VERSION}, got {data.get('version')!r}")
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
        parts[section] = block
    nodes, links = parts["nodes"], parts["links"]
    try:
        guid = [int(g, 16) for g in nodes["guid"]]
    except (TypeError, ValueError):
        raise FormatError(source, None, "nodes.guid: expected hex strings like '0x98039b0300000001'") from None
    if not all(isinstance(n, str) and n for n in nodes["name"]):
        raise FormatError(source, None, "nodes.name: expected non-empty strings")
    name = data.get("name")
    return _common.build(
        source, name if isinstance(name, str) and name else "fabric",
        kind=_codes(nodes["kind"], KIND_NAMES, "nodes.kind", source), node_name=nodes["name"], guid=guid,
        lid=_ints(nodes["lid"], "nodes.lid", source), nports=_ints(nodes["nports"], "nodes.nports", source),
        role=_codes(nodes["role"], ROLES, "nodes.role", source), tier=_ints(nodes["tier"], "nodes.tier", source),
        group=_ints(nodes["group"], "nodes.group", source),
        a_node=_ints(links["a_node"], "links.a_node", source), a_port=_ints(links["a_port"], "links.a_port", source),
        b_node=_ints(links["b_node"], "links.b_node", source), b_port=_ints(links["b_port"], "links.b_port", source),
        width=_ints(links["width"], "links.width", source),
        speed=_codes(links["speed"], SPEEDS, "links.speed", source),
        length_m=np.asarray(links.get("length_m", [3.0] * len(links["a_node"])), dtype=np.float64),
        meta={"source_format": "json"},
    )
