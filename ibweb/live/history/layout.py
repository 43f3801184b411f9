"""How a fabric's history ring is laid out in the Django cache: its keys, its chunks of link values, its runs.

Keys under ``ibweb:history:<fabric>:``:

* ``<seq>:<c>``: chunk ``c`` of tick ``seq``, the bytes of ``float16[2, CHUNK]`` (rate in Gb/s,
  utilization) of ``CHUNK`` directed links in the order of the tick's topology, so reading one link's
  series costs ``ticks x 4 KiB``, not whole frames;
* ``topo:<version>``: that topology's link identities and nodes (:meth:`LinkIdentities.encode`),
  written once per topology (the version is the runner's record base version, never reused), kept
  (touched hourly) while ticks of the ring use it, with the ring's expiry;
* ``index``: ``{"n", "chunk", "tick_s", "seq": [...], "t": [...], "runs": [[first seq, version, n], ...]}``,
  oldest first; each run is a stretch of ticks of one topology (``n`` directed links; version
  ``None``: recorded without a topology, read by position within that run only); ``tick_s`` the
  seconds one tick stands for (the engine's tick).

float16 keeps three significant digits: enough for charts of rates up to 65,504 Gb/s and utilizations.
The writer is :mod:`ibweb.live.history.ring`, the readers :mod:`ibweb.live.history.reads`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["CHUNK", "DTYPE", "key", "index_key", "chunk_key", "topo_key", "runs", "run_of", "tick_keys",
           "chunk_sizes", "encode", "decode"]

#: Directed links per stored chunk.
CHUNK = 1024
#: The stored values' type.
DTYPE = np.float16


def key(fabric_id: int, part: str) -> str:
    """The cache key of ``part`` of the fabric's ring."""
    return f"ibweb:history:{fabric_id}:{part}"


def index_key(fabric_id: int) -> str:
    """The cache key of the fabric's ring index."""
    return key(fabric_id, "index")


def chunk_key(fabric_id: int, seq: int, chunk: int) -> str:
    """The cache key of chunk ``chunk`` of tick ``seq``."""
    return key(fabric_id, f"{seq}:{chunk}")


def topo_key(fabric_id: int, version: str) -> str:
    """The cache key of the link identities of topology ``version``."""
    return key(fabric_id, f"topo:{version}")


def runs(idx: dict | None) -> list[list]:
    """The index's runs (an index written before runs existed: one run without a topology)."""
    if not idx or not idx["seq"]:
        return []
    return idx.get("runs") or [[idx["seq"][0], None, idx["n"]]]


def run_of(runs: list[list], seqs: Sequence[int]) -> np.ndarray:
    """Run number of each tick ``seqs``, int64."""
    first = np.array([r[0] for r in runs], dtype=np.int64)
    return np.searchsorted(first, np.asarray(seqs, dtype=np.int64), side="right") - 1


def tick_keys(fabric_id: int, seqs: list[int], runs: list[list]) -> list[str]:
    """The cache keys of every chunk of ticks ``seqs``."""
    sizes = [runs[r][2] for r in run_of(runs, seqs)] if seqs else []
    return [chunk_key(fabric_id, s, c) for s, n in zip(seqs, sizes, strict=True) for c in range(math.ceil(n / CHUNK))]


def chunk_sizes(n: int) -> list[int]:
    """Byte size of each stored chunk of a tick of ``n`` directed links."""
    per = 2 * np.dtype(DTYPE).itemsize
    return [per * min(CHUNK, n - lo) for lo in range(0, n, CHUNK)]


def encode(rate: np.ndarray, util: np.ndarray) -> list[bytes]:
    """The chunks of one tick; NaN (no data) stays NaN, infinities are clipped."""
    both = np.stack([np.asarray(rate, dtype=np.float64), np.asarray(util, dtype=np.float64)])
    both = both.clip(0.0, 65504.0).astype(DTYPE)
    return [both[:, lo:lo + CHUNK].tobytes() for lo in range(0, both.shape[1], CHUNK)]


def decode(blob: bytes) -> np.ndarray:
    """float32 ``[2, m]`` (rate, util) of one chunk."""
    return np.frombuffer(blob, dtype=DTYPE).reshape(2, -1).astype(np.float32)
