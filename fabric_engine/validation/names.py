"""How findings name nodes, ports and links (one place, so every check writes them alike)."""

from __future__ import annotations

import numpy as np

from ..topology import Fabric

__all__ = ["port_name", "link_name", "cable_names"]


def port_name(fabric: Fabric, node: int, port: int) -> str:
    """``node/port``."""
    return f"{fabric.node_name[node]}/{int(port)}"


def link_name(fabric: Fabric, cable: int) -> str:
    """``a/port - b/port`` of cable ``cable``."""
    return (f"{port_name(fabric, int(fabric.a_node[cable]), int(fabric.a_port[cable]))} - "
            f"{port_name(fabric, int(fabric.b_node[cable]), int(fabric.b_port[cable]))}")


def cable_names(fabric: Fabric, cables: np.ndarray) -> list[str]:
    """:func:`link_name` of each of ``cables`` (a loop over the given cables only)."""
    return [link_name(fabric, int(c)) for c in np.asarray(cables, dtype=np.int64).tolist()]
