"""Link health rows matched to the ports of a telemetry-fed fabric's discovery (issue 37).

A reader names a port by node GUID (UFM, ``ibdiagnet2.cables``), by LID (``perfquery -T``: ``lid:12``), by a node
name, or by nothing the fabric knows (``mlxlink`` prints only its device, ``mlx5_0``): the capture's own ``node``
(a name or ``0x`` node/port GUID) then names it. Every row matched to a port ``1..nports`` of a node of the fabric
gets that node's GUID and name (the health publisher finds nodes by GUID); the others are dropped and counted.
A row that does not give its port's lanes or lane speed (``perfquery -T`` gives neither) takes them from the cable
the discovery found on the port (iblinkinfo's width and speed): BER computed from counter deltas needs the rate.
"""

from __future__ import annotations

import numpy as np

from fabric_engine.health.records import HealthRecords, code, take_rows
from fabric_engine.topology import Fabric
from fabric_engine.topology.guid_index import GuidIndex
from fabric_engine.topology.speeds import SPEEDS

__all__ = ["node_of_key", "match_ports", "cable_rates"]

#: ``records`` speed code of every topology speed code (``SPEEDS`` index).
_SPEED_CODE = np.array([code("speed", name) for name in SPEEDS], np.int8)


def node_of_key(fabric: Fabric, key: str) -> int | None:
    """Node index of ``key`` (a node name or ``0x`` node or port GUID); None when the fabric has no such node."""
    try:
        return fabric.node(int(key, 16) if key.lower().startswith("0x") else key)
    except (KeyError, ValueError, OverflowError):
        return None


def _nodes(fabric: Fabric, rec: HealthRecords) -> np.ndarray:
    """Node index of every row by its GUID, LID or name (-1: none of the fabric's)."""
    n = len(rec)
    node = np.full(n, -1, np.int64)
    by_guid = rec.guid != 0
    if by_guid.any():
        g = rec.guid[by_guid].astype(np.uint64)
        found, _ = GuidIndex(fabric.guid, np.arange(fabric.num_nodes)).nodes(g)
        port_node, _ = fabric.guid_index.nodes(g)
        node[by_guid] = np.where(found >= 0, found, port_node)
    by_lid = np.zeros(n, bool)
    rest = np.flatnonzero(~by_guid)  # rows named by a LID or a name (none when every row has a GUID)
    names = rec.name[rest].astype(str)
    by_lid[rest] = np.char.startswith(names, "lid:")
    names_all = np.full(n, "", names.dtype)
    names_all[rest] = names
    names = names_all
    if by_lid.any():
        digits = np.char.replace(names[by_lid], "lid:", "", count=1)
        digit = np.char.isdigit(digits) & (np.char.str_len(digits) <= 9)  # a DR path is not a LID
        lid = np.where(digit, digits, "0").astype(np.int64)
        table = fabric.lid_to_node
        ok = (lid > 0) & (lid < table.size)
        node[by_lid] = np.where(ok, table[np.where(ok, lid, 0)], -1)
    by_name = ~by_guid & ~by_lid
    if by_name.any() and fabric.num_nodes:
        known = np.asarray(fabric.node_name).astype(str)
        order = np.argsort(known, kind="stable")
        want = names[by_name]
        pos = np.minimum(np.searchsorted(known[order], want), known.size - 1)
        node[by_name] = np.where(known[order][pos] == want, order[pos], -1)
    return node


def match_ports(fabric: Fabric, rec: HealthRecords, node: int | None = None,
                port: int | None = None) -> tuple[HealthRecords, np.ndarray]:
    """The rows of ``rec`` that are ports of ``fabric``, named by its node GUIDs and names, and the keys
    (:meth:`~fabric_engine.health.records.HealthRecords.keys`) of the rows dropped.

    ``node``: every row is of this node index; ``port``: every row is this port number.
    """
    nodes = np.full(len(rec), node, np.int64) if node is not None else _nodes(fabric, rec)
    ports = np.full(len(rec), port, np.int64) if port is not None else rec.port.astype(np.int64)
    nports = np.asarray(fabric.nports, np.int64)
    ok = (nodes >= 0) & (ports >= 1) & (ports <= np.where(nodes >= 0, nports[np.maximum(nodes, 0)], 0))
    rows = np.flatnonzero(ok)
    every = rows.size == len(rec)
    dropped = np.zeros(0, str) if every else HealthRecords(rec.guid[~ok], rec.name[~ok], rec.port[~ok], {},
                                                            rec.source[~ok]).keys()  # of the rows dropped only
    kept = nodes[rows]
    # every row kept: copied as they are (a broadcast column, read-only, stays one), else the rows taken
    data = {f: (v.copy(order="K") if v.flags.writeable else v) if every else take_rows(v, rows)
            for f, v in rec.data.items()}
    lanes, speed = cable_rates(fabric, kept, ports[rows])
    data["lanes"] = np.where(data["lanes"] > 0, data["lanes"], lanes).astype(data["lanes"].dtype)
    data["speed"] = np.where(data["speed"] > 0, data["speed"], speed).astype(data["speed"].dtype)
    out = HealthRecords(np.asarray(fabric.guid, np.uint64)[kept], np.asarray(fabric.node_name, object)[kept],
                        ports[rows].astype(np.int16), data, rec.source if every else rec.source[rows])
    return out, dropped


def cable_rates(fabric: Fabric, node: np.ndarray, port: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lanes (-1: no cable) and ``records`` speed code (0: no cable) of the cable on each (node index, port)."""
    a = np.asarray(fabric.a_node, np.int64) * 256 + np.asarray(fabric.a_port, np.int64)
    b = np.asarray(fabric.b_node, np.int64) * 256 + np.asarray(fabric.b_port, np.int64)
    ends = np.concatenate([a, b])
    want = np.asarray(node, np.int64) * 256 + np.asarray(port, np.int64)
    if not ends.size:
        return np.full(want.size, -1, np.int16), np.zeros(want.size, np.int8)
    order = np.argsort(ends, kind="stable")
    pos = np.minimum(np.searchsorted(ends[order], want), ends.size - 1)
    link = order[pos] % max(a.size, 1)
    found = ends[order[pos]] == want
    lanes = np.where(found, np.asarray(fabric.width, np.int16)[link], -1).astype(np.int16)
    speed = np.where(found, _SPEED_CODE[np.asarray(fabric.speed, np.int64)[link]], 0).astype(np.int8)
    return lanes, speed
