"""``/metrics`` split into scrape targets of bounded size: contiguous ranges of a fabric's nodes.

One exposition of every port of a 16,384-GPU fabric is hundreds of megabytes, more than a scraper reads within
its timeout. A fabric is cut into *parts*, each the cabled ports of a contiguous range of node indices (a switch
and all its ports in one part, so a switch's ports are side by side in one scrape), a part holding at most
``max_ports`` ports plus those of the one node that crosses its bound. The parts depend on the topology only, so
every web process cuts a record version alike.

>>> import numpy as np
>>> node_ranges(np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3]), num_nodes=5, max_ports=4).tolist()
[0, 2, 4, 5]
>>> node_ranges(np.array([], dtype=np.int64), num_nodes=0, max_ports=4).tolist()
[0, 0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["node_ranges", "part_of"]


def node_ranges(port_node: np.ndarray, num_nodes: int, max_ports: int) -> np.ndarray:
    """Boundaries ``b`` (int64 ``[k + 1]``, ``b[0] = 0``, ``b[k] = num_nodes``) of the parts: part ``i`` holds
    nodes ``b[i] <= n < b[i + 1]``; ``port_node`` is the node of every port exported."""
    if max_ports < 1:
        raise ValueError(f"max_ports: {max_ports}, at least 1")
    counts = np.bincount(np.asarray(port_node, np.int64), minlength=num_nodes)[:num_nodes]
    start = np.cumsum(counts) - counts  # ports before each node
    part = start // max_ports
    return np.r_[0, np.flatnonzero(np.diff(part)) + 1, num_nodes].astype(np.int64)


def part_of(bounds: np.ndarray, index: int) -> tuple[int, int]:
    """``(first node, end node)`` of part ``index`` of ``bounds``; IndexError when there is no such part."""
    if not 0 <= index < len(bounds) - 1:
        raise IndexError(f"part {index}: the fabric has {len(bounds) - 1} parts (0..{len(bounds) - 2})")
    return int(bounds[index]), int(bounds[index + 1])
