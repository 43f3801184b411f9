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

import weakref
from dataclasses import dataclass

import numpy as np

from fabric_engine.health.port_slots import PortSlots
from fabric_engine.health.records import FIELDS, HealthRecords, empty, same_lanes
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


class _Table:
    """The ports of one :class:`SweptPorts` as :class:`~fabric_engine.health.port_slots.PortSlots` and each slot's
    row: built once per sweep state (the publisher keeps one ``SweptPorts`` until the cables down change), and
    ``PortSlots.find`` keeps its last answer, so the readings of every sweep (the same ports) are matched once."""

    def __init__(self, swept: SweptPorts) -> None:
        self.slots = PortSlots(remember=False)  # looked up once; found (``find``) every grading
        self.row_of = np.empty(len(swept), np.int64)
        self.row_of[self.slots.lookup(swept.guid.astype(np.uint64), swept.port.astype(np.int64))] = np.arange(
            len(swept))

    def rows(self, guid: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Row of the swept ports holding each port (``guid``, ``port``), -1: none."""
        found = self.slots.find(np.asarray(guid).astype(np.uint64, copy=False), np.asarray(port).astype(np.int64))
        return np.where(found >= 0, self.row_of[np.maximum(found, 0)], -1)


_tables: weakref.WeakKeyDictionary[SweptPorts, _Table] = weakref.WeakKeyDictionary()


def _rows(swept: SweptPorts, rec: HealthRecords) -> np.ndarray:
    """Row of ``swept`` holding each row's port of ``rec`` (-1: none; one row per port on both sides)."""
    table = _tables.get(swept)
    if table is None:
        table = _tables[swept] = _Table(swept)
    return table.rows(rec.guid, rec.port)


def read_by(rec: HealthRecords | None, swept: SweptPorts) -> np.ndarray:
    """Which rows of ``swept`` ``rec`` gives the state of (its own readings then stand)."""
    out = np.zeros(len(swept), bool)
    if rec is None or not len(rec):
        return out
    row = _rows(swept, rec)  # the row of ``swept`` of each port of ``rec``: read the other way round
    hit = row >= 0
    out[row[hit]] = rec["up"][hit] >= 0
    return out


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
    row = _rows(swept, rec)
    up = rec["up"].copy()
    fill = (row >= 0) & (up < 0)
    up[fill] = swept.up[row[fill]]
    extra[row[row >= 0]] = False
    if not extra.any():  # no port to add: ``rec``'s columns as they are, its state filled in
        return HealthRecords(rec.guid.astype(np.uint64, copy=False), rec.name, rec.port.astype(np.int16, copy=False),
                             {**{f: rec.data[f] for f in FIELDS}, "up": up}, rec.source)
    more = _records(swept, np.flatnonzero(extra), float(rec["t"][0]))
    data = {f: np.concatenate(same_lanes(f, [rec.data[f] if f != "up" else up, more.data[f]])) for f in FIELDS}
    return HealthRecords(np.concatenate([rec.guid.astype(np.uint64), more.guid]), np.concatenate([rec.name, more.name]),
                         np.concatenate([rec.port.astype(np.int16), more.port]), data,
                         np.concatenate([rec.source, more.source]))
