"""Placement of jobs on hosts: packed (whole leaves) or scattered (round-robin over leaves).

Jobs run on GPU hosts only (role ``gpu``); storage servers and management nodes are never placed on.
"""

from __future__ import annotations

import numpy as np

from ..errors import FabricEngineError
from ..topology import ROLES, Fabric

__all__ = ["place_packed", "place_scattered", "PLACEMENTS", "compute_hosts"]


def compute_hosts(fabric: Fabric) -> np.ndarray:
    """Node indices of the hosts jobs run on (role ``gpu``), int64, ascending."""
    h = fabric.hosts
    return h[fabric.role[h] == ROLES.index("gpu")]


def _free(fabric: Fabric, count: int, taken: np.ndarray) -> np.ndarray:
    hosts = compute_hosts(fabric)
    free = hosts[~np.isin(hosts, taken)]
    if count > len(free):
        raise FabricEngineError(f"{count} hosts asked, {len(free)} free")
    return free


def place_packed(fabric: Fabric, count: int, taken: np.ndarray) -> np.ndarray:
    """The first ``count`` free hosts in leaf order (fills whole leaves)."""
    free = _free(fabric, count, taken)
    order = np.argsort(fabric.host_leaf[free], kind="stable")
    return free[order][:count]


def place_scattered(fabric: Fabric, count: int, taken: np.ndarray) -> np.ndarray:
    """``count`` free hosts dealt round-robin over the leaves (one per leaf in turn)."""
    free = _free(fabric, count, taken)
    leaf = fabric.host_leaf[free]
    order = np.argsort(leaf, kind="stable")
    leaf_sorted = leaf[order]
    first = np.searchsorted(leaf_sorted, leaf_sorted, side="left")
    rank_in_leaf = np.arange(len(free)) - first
    deal = np.lexsort((leaf_sorted, rank_in_leaf))
    return free[order][deal][:count]


#: Placement name -> function ``(fabric, count, taken) -> hosts``.
PLACEMENTS = {"packed": place_packed, "scattered": place_scattered}
