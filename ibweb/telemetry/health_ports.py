"""Link health rows matched to the ports of a telemetry-fed fabric's discovery (issue 37).

A reader names a port by node GUID (UFM, ``ibdiagnet2.cables``), by LID (``perfquery -T``: ``lid:12``), by a node
name, or by nothing the fabric knows (``mlxlink`` prints only its device, ``mlx5_0``): the capture's own ``node``
(a name or ``0x`` node/port GUID) then names it. Every row matched to a port ``1..nports`` of a node of the fabric
gets that node's GUID and name (the health publisher finds nodes by GUID); the others are dropped and counted.
"""

from __future__ import annotations

import numpy as np

from fabric_engine.health.records import HealthRecords
from fabric_engine.topology import Fabric
from fabric_engine.topology.guid_index import GuidIndex

__all__ = ["node_of_key", "match_ports"]


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
    names = rec.name.astype(str)
    by_lid = ~by_guid & np.char.startswith(names, "lid:")
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
    dropped = rec.keys()[~ok]
    rows = np.flatnonzero(ok)
    kept = nodes[rows]
    out = HealthRecords(np.asarray(fabric.guid, np.uint64)[kept], np.asarray(fabric.node_name, object)[kept],
                        ports[rows].astype(np.int16), {f: v[rows] for f, v in rec.data.items()}, rec.source[rows])
    return out, dropped
