"""Port GUID -> port slot and node: one sorted index per fabric (:attr:`Fabric.guid_index`).

A switch's ports all carry its node GUID; a lookup answers the lowest slot carrying a GUID
(the switch's port 1, a host port's own slot).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["GuidIndex"]


class GuidIndex:
    """Port GUIDs sorted once, looked up vectorized.

    ``port_guid`` is uint64 ``[P]``, ``port_node`` the node of every slot ``[P]``.

    Examples
    --------
    >>> ix = GuidIndex(np.array([30, 10, 10], dtype=np.uint64), np.array([2, 0, 0]))
    >>> ix.slots([10, 30, 99])
    (array([ 1,  0, -1]), array([ True,  True, False]))
    >>> ix.nodes([30])
    (array([2]), array([ True]))
    """

    __slots__ = ("_sorted", "_order", "_port_node")

    def __init__(self, port_guid: np.ndarray, port_node: np.ndarray) -> None:
        guid = np.asarray(port_guid, dtype=np.uint64)
        node = np.asarray(port_node)
        if guid.ndim != 1 or guid.shape != node.shape:
            raise ValueError(f"port_guid {guid.shape} and port_node {node.shape} must be one-dimensional, alike")
        self._order = np.argsort(guid, kind="stable").astype(np.int64)
        self._sorted = guid[self._order]
        self._port_node = node

    def _find(self, guids: Iterable[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(position in the sorted GUIDs, found)`` of every GUID; positions of unknown GUIDs are meaningless."""
        want = np.asarray(guids, dtype=np.uint64)
        if not len(self._sorted):
            return np.zeros(want.shape, dtype=np.int64), np.zeros(want.shape, dtype=bool)
        pos = np.minimum(np.searchsorted(self._sorted, want), len(self._sorted) - 1)
        return pos, self._sorted[pos] == want

    def slots(self, guids: Iterable[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Port slot of every GUID (int64, -1 where unknown) and whether it is a port (bool)."""
        pos, found = self._find(guids)
        slot = self._order[pos] if len(self._order) else pos
        return np.where(found, slot, -1).astype(np.int64, copy=False), found

    def nodes(self, guids: Iterable[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Node index of every GUID (int64, -1 where unknown) and whether it is a port (bool)."""
        slot, found = self.slots(guids)
        node = self._port_node[np.maximum(slot, 0)] if len(self._port_node) else slot
        return np.where(found, node, -1).astype(np.int64, copy=False), found
