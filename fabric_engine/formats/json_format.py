"""ibweb's JSON form of a :class:`Fabric` (``"format": "ibweb-fabric"``, version 1).

Columnar: ``nodes`` and ``links`` hold parallel arrays, in node and cable index
order, exactly as the live feed snapshot and the REST API carry them::

    {"format": "ibweb-fabric", "version": 1, "name": "demo",
     "nodes": {"kind": ["switch", "host"], "name": [...], "guid": ["0x98039b0300000001", ...],
               "lid": [...], "nports": [...], "role": ["switch", "gpu"], "tier": [1, 0], "group": [-1, -1]},
     "links": {"a_node": [...], "a_port": [...], "b_node": [...], "b_port": [...],
               "width": [4, ...], "speed": ["NDR", ...], "capacity_gbps": [400.0, ...], "length_m": [3.0, ...]}}
"""

from __future__ import annotations

import numpy as np

from ..topology import ROLES, SPEEDS, Fabric
from ..topology.fabric import KIND_NAMES

__all__ = ["FORMAT", "VERSION", "to_json"]

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
