"""Link-health grades (:mod:`fabric_engine.health.grade`) placed on a fabric's port slots.

The grade of a port is its worst known measure (``-1`` unknown, ``0`` normal, ``1`` warning, ``2`` error); a
health row names its port by GUID (the node's, or a CA port's own) and port number. Vectorized: a sorted
search per row, ``np.maximum.at`` for ports read by several rows.
"""

from __future__ import annotations

import numpy as np

from ..health.grade import UNKNOWN
from ..topology import Fabric

__all__ = ["port_grades", "link_grades"]


def port_grades(fabric: Fabric, guid: np.ndarray, port: np.ndarray, grade: np.ndarray) -> np.ndarray:
    """Worst grade per port slot, int8 ``[P]`` (``-1`` where no row names the port)."""
    guid = np.asarray(guid, dtype=np.uint64)
    port = np.asarray(port, dtype=np.int64)
    out = np.full(int(fabric.nports.sum()), UNKNOWN, np.int8)
    if guid.size == 0:
        return out
    order = np.argsort(fabric.guid, kind="stable")
    sorted_guid = fabric.guid[order]
    pos = np.minimum(np.searchsorted(sorted_guid, guid), max(len(sorted_guid) - 1, 0))
    by_node = sorted_guid[pos] == guid
    node = np.where(by_node, order[pos], -1).astype(np.int64)
    pnode, pfound = fabric.guid_index.nodes(guid)
    node = np.where(by_node, node, np.where(pfound, pnode, -1))
    ok = (node >= 0) & (port >= 1) & (port <= fabric.nports[np.maximum(node, 0)])
    slot = fabric.port_offset[node[ok]] + port[ok] - 1
    np.maximum.at(out, slot, np.asarray(grade, dtype=np.int8)[ok])
    return out


def link_grades(fabric: Fabric, port_grade: np.ndarray) -> np.ndarray:
    """Worst grade of each cable's two ends, int8 ``[L]``."""
    a = fabric.port_offset[fabric.a_node] + fabric.a_port - 1
    b = fabric.port_offset[fabric.b_node] + fabric.b_port - 1
    return np.maximum(port_grade[a], port_grade[b])
