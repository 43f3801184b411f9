"""Weighted water levels of many arbiters at once: how a port splits its bandwidth among what asks for it.

An arbiter serving members in turn (round robin, or weighted like IB's VL arbitration) gives each member
``i`` of group ``g`` the rate ``min(demand_i, weight_i * level_g)``, with the level that hands out
the group's whole capacity; a group whose members want less than its capacity has no level (``inf``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["water_levels"]

_TIGHT = 1.0 - 1e-12  # a member exactly at the level counts as held by it (keeps a saturated group's level finite)


def water_levels(group: np.ndarray, demand: np.ndarray, weight: np.ndarray | None, capacity: np.ndarray,
                 n_groups: int, max_rounds: int = 64) -> np.ndarray:
    """Level per group, float64 ``[n_groups]`` (``inf`` where the group's demands fit in its capacity).

    Rounds raise every level from ``capacity / total weight``: members below ``weight * level`` keep
    their demand and leave the rest to the others; a level stops rising when no member drops below it
    (at most one round per distinct demand level).

    >>> water_levels(np.array([0, 0, 0, 1]), np.array([0.1, 1.0, 1.0, 0.2]), None, np.array([1.0, 1.0]), 2)
    array([0.45,  inf])
    """
    group = np.asarray(group, dtype=np.int64)
    demand = np.asarray(demand, dtype=np.float64)
    w = np.ones_like(demand) if weight is None else np.asarray(weight, dtype=np.float64)
    cap = np.asarray(capacity, dtype=np.float64)
    total_w = np.bincount(group, weights=w, minlength=n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        level = np.where(total_w > 0, cap / total_w, np.inf)
    below = np.zeros(len(demand), bool)
    for _ in range(max_rounds):
        now = demand < w * level[group] * _TIGHT
        if (now == below).all():
            break
        below = now
        kept = np.bincount(group, weights=np.where(below, demand, 0.0), minlength=n_groups)
        left_w = np.bincount(group, weights=np.where(below, 0.0, w), minlength=n_groups)
        with np.errstate(divide="ignore", invalid="ignore"):
            level = np.where(left_w > 0, np.maximum(cap - kept, 0.0) / left_w, np.inf)
    return level
