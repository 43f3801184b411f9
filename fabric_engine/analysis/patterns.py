"""Traffic patterns for fabric analysis: random bisections, permutations, shifts.

Each function returns ``(src, dst)`` int64 arrays of shape ``(P, K)``: pattern
``p`` is the set of flows ``src[p, i] -> dst[p, i]``.
"""

from __future__ import annotations

import numpy as np

from ..errors import FabricEngineError

__all__ = ["bisection_pairs", "permutation_pairs", "shift_pairs", "PAIR_PATTERNS"]


def bisection_pairs(hosts: np.ndarray, patterns: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random bisections: hosts split into two random halves, each host of one half paired with one of
    the other; both directions of each pair communicate (Hoefler et al., Cluster 2008).

    >>> s, d = bisection_pairs(np.arange(6), 2, np.random.default_rng(0))
    >>> s.shape, bool((np.sort(s, axis=1) == np.arange(6)).all())
    ((2, 6), True)
    """
    h = np.asarray(hosts, dtype=np.int64)
    half = len(h) // 2
    if half < 1:
        raise FabricEngineError("a bisection needs at least two hosts")
    perm = rng.permuted(np.broadcast_to(h, (patterns, len(h))), axis=1)
    a, b = perm[:, :half], perm[:, half:2 * half]
    return np.concatenate([a, b], axis=1), np.concatenate([b, a], axis=1)


def permutation_pairs(hosts: np.ndarray, patterns: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random permutations: every host sends to one host and receives from one (self-pairs removed
    by a random cyclic shift of a random order, so every pattern is a derangement)."""
    h = np.asarray(hosts, dtype=np.int64)
    if len(h) < 2:
        raise FabricEngineError("a permutation needs at least two hosts")
    order = rng.permuted(np.broadcast_to(h, (patterns, len(h))), axis=1)
    shift = rng.integers(1, len(h), size=(patterns, 1))
    cols = (np.arange(len(h))[None, :] + shift) % len(h)
    return order, np.take_along_axis(order, cols, axis=1)


def shift_pairs(hosts: np.ndarray, shifts: np.ndarray | list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Shift patterns: host ``i`` sends to host ``i + k`` (mod n), one pattern per ``k``."""
    h = np.asarray(hosts, dtype=np.int64)
    k = np.asarray(shifts, dtype=np.int64).reshape(-1, 1)
    if ((k % len(h)) == 0).any():
        raise FabricEngineError(f"shift must not be a multiple of the host count {len(h)}")
    src = np.broadcast_to(h, (len(k), len(h)))
    return src.copy(), h[(np.arange(len(h))[None, :] + k) % len(h)]


PAIR_PATTERNS = ("bisection", "permutation", "shift")
