"""Port state as a telemetry sweep shows it, for the link health of a fabric whose readings do not say it.

A telemetry-fed fabric's discovery (``iblinkinfo``) says which ports are cabled, and its source's cables down
(``link_down`` conditions against the reference cabling or the plan, :meth:`~ibweb.live.engine.sources.FabricSource.
cables_down`) which cables of the reference are not: :func:`swept_ports` makes them :class:`SweptPorts` (``up`` 1
for every cabled port end, 0 for both ends of a cable down), seen at the sweep. :func:`with_swept` gives their state
to the readings that do not give it, and adds the ports the readings lack that matter (the health publisher: down
now, or with downs kept), so the report ranks a port that is or was down even where no ``mlxlink`` or UFM reading
was pushed for it, and a fabric with neither readings nor downs has no report.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabric_engine.health.port_slots import PortSlots
from fabric_engine.health.records import FIELDS, HealthRecords, empty
from fabric_engine.topology import Fabric

from .report import node_indices

__all__ = ["SweptPorts", "swept_ports", "with_swept", "read_by"]


@dataclass(frozen=True, eq=False)
class SweptPorts:
    """One row per port a sweep shows: ``guid`` (node GUID), ``port``, ``name`` (its node's), ``up`` (1/0), at ``t``."""

    guid: np.ndarray
    port: np.ndarray
    name: np.ndarray
    up: np.ndarray
    t: float

    def __len__(self) -> int:
        return int(self.port.size)


def _ends_down(fabric: Fabric, down: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ends (node GUID, port, name) of the cables ``down`` that are not cabled in ``fabric``, each once."""
    seen: dict[tuple[int, int], str] = {}
    for alert in down:  # one per cable down (few)
        g, p = alert.get("guids") or [], alert.get("ports") or []
        ends = [alert.get("a") or "", alert.get("b") or ""]
        for k in range(min(len(g), len(p), 2)):
            try:
                key = (int(str(g[k]), 16), int(p[k]))
            except (TypeError, ValueError):
                continue
            if 0 <= key[0] < 1 << 64 and 0 <= key[1] <= 255:
                seen.setdefault(key, str(ends[k]).rsplit(" port ", 1)[0])
    guid = np.array([k[0] for k in seen], np.uint64)
    port = np.array([k[1] for k in seen], np.int64)
    name = np.array(list(seen.values()), dtype=object)
    if not guid.size:
        return guid, port, name
    node = node_indices(fabric, guid)  # a port cabled now (to another peer) is up, not down
    ok = node >= 0
    in_range = ok & (port >= 1) & (port <= np.where(ok, fabric.nports[np.maximum(node, 0)], 0))
    cabled = np.zeros(guid.size, bool)
    cabled[in_range] = fabric.port_out_link[fabric.slot(node[in_range], port[in_range])] >= 0
    return guid[~cabled], port[~cabled], name[~cabled]


def swept_ports(fabric: Fabric, down: list[dict], t: float) -> SweptPorts:
    """Every cabled port end of ``fabric`` up, every end of a cable of ``down`` (``link_down`` alerts: ``guids``,
    ``ports``, ``a``/``b``) that is not cabled now down, seen at ``t``."""
    src = np.asarray(fabric.dl_src, np.int64)
    dn_guid, dn_port, dn_name = _ends_down(fabric, down)
    return SweptPorts(np.concatenate([np.asarray(fabric.guid, np.uint64)[src], dn_guid]),
                      np.concatenate([np.asarray(fabric.dl_src_port, np.int64), dn_port]),
                      np.concatenate([np.asarray(fabric.node_name, dtype=object)[src], dn_name]),
                      np.r_[np.ones(src.size, np.int16), np.zeros(dn_guid.size, np.int16)], float(t))


def _rows(guid: np.ndarray, port: np.ndarray, wanted_guid: np.ndarray, wanted_port: np.ndarray) -> np.ndarray:
    """Row of (``guid``, ``port``) (one row per port) holding each wanted port (-1: none)."""
    slots = PortSlots()
    row_of = np.empty(guid.size, np.int64)
    row_of[slots.lookup(guid.astype(np.uint64), port.astype(np.int64))] = np.arange(guid.size)
    found = slots.find(wanted_guid.astype(np.uint64), wanted_port.astype(np.int64))
    return np.where(found >= 0, row_of[np.maximum(found, 0)], -1)


def read_by(rec: HealthRecords | None, swept: SweptPorts) -> np.ndarray:
    """Which rows of ``swept`` ``rec`` gives the state of (its own readings then stand)."""
    if rec is None or not len(rec):
        return np.zeros(len(swept), bool)
    row = _rows(rec.guid, rec.port, swept.guid, swept.port)
    return (row >= 0) & (rec["up"][np.maximum(row, 0)] >= 0)


def _records(swept: SweptPorts, rows: np.ndarray, t: float) -> HealthRecords:
    out = empty(rows.size, "sweep")
    out.guid, out.port, out.name = swept.guid[rows], swept.port[rows].astype(np.int16), swept.name[rows]
    out.data["up"][:] = swept.up[rows]
    out.data["t"][:] = t
    return out


def with_swept(rec: HealthRecords | None, swept: SweptPorts | None,
               add: np.ndarray | None = None) -> HealthRecords | None:
    """``rec`` with the state of ``swept`` where ``rec`` does not give it, and the ports of ``swept`` it lacks among
    ``add`` (a mask of ``swept``'s rows; None: all). None when there is neither."""
    if swept is None or not len(swept):
        return rec
    extra = np.ones(len(swept), bool) if add is None else np.asarray(add, bool).copy()
    if rec is None or not len(rec):
        rows = np.flatnonzero(extra)
        return _records(swept, rows, swept.t) if rows.size else rec
    row = _rows(swept.guid, swept.port, rec.guid, rec.port)
    up = rec["up"].copy()
    fill = (row >= 0) & (up < 0)
    up[fill] = swept.up[row[fill]]
    extra[row[row >= 0]] = False
    if not extra.any():  # no port to add: ``rec``'s columns as they are, its state filled in
        return HealthRecords(rec.guid.astype(np.uint64, copy=False), rec.name, rec.port.astype(np.int16, copy=False),
                             {**{f: rec.data[f] for f in FIELDS}, "up": up}, rec.source)
    more = _records(swept, np.flatnonzero(extra), float(rec["t"][0]))
    data = {f: np.concatenate([rec.data[f] if f != "up" else up, more.data[f]]) for f in FIELDS}
    return HealthRecords(np.concatenate([rec.guid.astype(np.uint64), more.guid]), np.concatenate([rec.name, more.name]),
                         np.concatenate([rec.port.astype(np.int16), more.port]), data,
                         np.concatenate([rec.source, more.source]))
