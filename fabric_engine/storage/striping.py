"""Lustre-like file layouts: a file cut into ``stripe_size`` chunks dealt round-robin over ``stripe_count`` servers.

Lustre's defaults are a stripe count of 1 and a stripe size of 1 MiB; a count of -1
stripes over every OST (Lustre Operations Manual, "Managing File Layout (Striping)",
``lfs setstripe``). With the round-robin allocator consecutive files start on
consecutive servers, which is what :func:`stripe_servers` does with ``first``.
"""

from __future__ import annotations

import numpy as np

from ..errors import FabricEngineError

__all__ = ["stripe_servers", "stripe_bytes", "LUSTRE_STRIPE_SIZE", "LUSTRE_STRIPE_COUNT"]

#: Lustre's default stripe size (bytes) and stripe count.
LUSTRE_STRIPE_SIZE = 1 << 20
LUSTRE_STRIPE_COUNT = 1


def _count(stripe_count: int, n_servers: int) -> int:
    if n_servers < 1:
        raise FabricEngineError("storage: the fabric has no storage servers (role storage)")
    if stripe_count == -1:
        return n_servers
    if stripe_count < 1:
        raise FabricEngineError(f"storage: stripe_count {stripe_count} must be -1 or at least 1")
    return min(int(stripe_count), n_servers)


def stripe_servers(first: np.ndarray, stripe_count: int, n_servers: int) -> np.ndarray:
    """Server indices of the stripes of files starting on servers ``first``: int64 ``(files, count)``.

    >>> stripe_servers(np.array([0, 3]), 2, 4).tolist()
    [[0, 1], [3, 0]]
    """
    c = _count(stripe_count, n_servers)
    return (np.asarray(first, dtype=np.int64)[:, None] + np.arange(c)) % n_servers


def stripe_bytes(size: float, stripe_count: int, stripe_size: float, n_servers: int) -> np.ndarray:
    """Bytes each stripe of a file of ``size`` bytes holds, float64 ``(count,)``.

    Chunk ``i`` goes to stripe ``i mod count``; the last chunk may be partial.

    >>> stripe_bytes(10 * 2**20 + 5, 4, 2**20, 8).tolist()
    [3145728.0, 3145728.0, 2097157.0, 2097152.0]
    """
    c = _count(stripe_count, n_servers)
    if stripe_size <= 0 or size < 0:
        raise FabricEngineError("storage: stripe_size must be positive and sizes non-negative")
    chunks, rest = divmod(float(size), float(stripe_size))
    full_rounds, extra = divmod(int(chunks), c)
    out = np.full(c, full_rounds * float(stripe_size))
    out[:extra] += stripe_size
    out[extra % c] += rest
    return out
