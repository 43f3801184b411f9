"""Recent per-link history of a fabric: a bounded ring of ticks in the Django cache.

The fabric runner calls :func:`record` once per tick (and starts the rollup task
when it says a minute finished); any web process reads a link's series with
:func:`series`, and the rollup task reads whole minutes with :func:`ticks`.
Because the ring lives in the Django cache (Redis at scale, local memory in the
embedded default) the engine may run in another process than the web.

Layout: each tick is stored as ``ceil(2L / CHUNK)`` values, one per chunk of
``CHUNK`` directed links, each the bytes of ``float16[2, CHUNK]`` (rate in Gb/s,
utilization), so reading one link's series costs ``ticks x 4 KiB``, not whole
frames. A small index value lists the ring's sequence numbers and times. The
ring keeps at most ``KEEP_TICKS`` ticks and at most ``BUDGET_BYTES`` of link
data (never fewer than ``MIN_TICKS``); older ticks are deleted as new ones come.
float16 keeps three significant digits: enough for charts of rates up to
65,504 Gb/s and utilizations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache

__all__ = ["CHUNK", "KEEP_TICKS", "MIN_TICKS", "BUDGET_BYTES", "Series", "record", "series", "ticks",
           "index", "capacity", "clear", "store"]

#: Directed links per stored chunk.
CHUNK = 1024
#: Ticks kept at least, whatever the budget (and the least IBWEB_HISTORY_TICKS may be).
MIN_TICKS = 120
#: Ticks kept at most (IBWEB_HISTORY_TICKS; 10 minutes at the default 1 s tick).
KEEP_TICKS = max(MIN_TICKS, int(getattr(settings, "IBWEB_HISTORY_TICKS", 600)))
#: Bytes of link data kept per fabric at most.
BUDGET_BYTES = int(getattr(settings, "IBWEB_HISTORY_BYTES", 64 * 2**20))
_TTL_S = 24 * 3600
_DTYPE = np.float16


_private: LocMemCache | None = None


def store():
    """The cache holding the rings: the ``history`` cache if configured, else the default one.

    A local-memory default (the embedded setup: engine and web in one process) is
    replaced by a private local-memory cache without an entry limit, so that the
    ring's many small values never cull the live feed's snapshot parts.
    """
    global _private
    if "history" in settings.CACHES:
        return caches["history"]
    default = caches["default"]
    if not isinstance(default, LocMemCache):
        return default
    if _private is None:
        _private = LocMemCache("ibweb-history", {"TIMEOUT": _TTL_S, "OPTIONS": {"MAX_ENTRIES": 10**9}})
    return _private


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:history:{fabric_id}:{part}"


def _chunk_key(fabric_id: int, seq: int, chunk: int) -> str:
    return _key(fabric_id, f"{seq}:{chunk}")


def _tick_keys(fabric_id: int, seqs: list[int], n: int) -> list[str]:
    chunks = math.ceil(n / CHUNK)
    return [_chunk_key(fabric_id, s, c) for s in seqs for c in range(chunks)]


def capacity(n: int) -> int:
    """Ticks the ring keeps for ``n`` directed links (bounded by KEEP_TICKS and BUDGET_BYTES, at least MIN_TICKS)."""
    per_tick = 2 * np.dtype(_DTYPE).itemsize * max(n, 1)
    return max(MIN_TICKS, min(KEEP_TICKS, BUDGET_BYTES // per_tick))


@dataclass
class _Ring:
    """Writer-side state of one fabric's ring (mirrors the cached index)."""

    n: int
    seq: list[int]
    t: list[float]

    def as_index(self) -> dict:
        return {"n": self.n, "chunk": CHUNK, "seq": self.seq, "t": self.t}


_rings: dict[int, _Ring] = {}


def index(fabric_id: int) -> dict | None:
    """The cached index of a fabric's ring: ``{"n", "chunk", "seq": [...], "t": [...]}`` oldest first, or None."""
    return store().get(_key(fabric_id, "index"))


def _encode(rate: np.ndarray, util: np.ndarray) -> list[bytes]:
    both = np.stack([np.asarray(rate, dtype=np.float64), np.asarray(util, dtype=np.float64)])
    both = np.nan_to_num(both, nan=0.0, posinf=65504.0, neginf=0.0).clip(0.0, 65504.0).astype(_DTYPE)
    return [both[:, lo:lo + CHUNK].tobytes() for lo in range(0, both.shape[1], CHUNK)]


def _decode(blob: bytes) -> np.ndarray:
    """float32 ``[2, m]`` (rate, util) of one chunk."""
    return np.frombuffer(blob, dtype=_DTYPE).reshape(2, -1).astype(np.float32)


async def record(fabric_id: int, seq: int, t: float, rate: np.ndarray, util: np.ndarray) -> bool:
    """Append one tick to the fabric's ring; call once per engine tick, after computing the state.

    Parameters
    ----------
    fabric_id : int
        Primary key of the :class:`~ibweb.fabrics.models.Fabric`.
    seq : int
        The frame's sequence number; a sequence number not above the newest
        recorded one (a restarted engine) starts a new ring.
    t : float
        The frame's time, seconds since the epoch.
    rate, util : ndarray, shape ``(2L,)``
        Per-directed-link rate (Gb/s) and utilization, in directed-link order.

    Returns
    -------
    bool
        Whether ``t`` entered a new minute: the finished minutes can be rolled up
        (:func:`ibweb.live.tasks.rollup_history`).
    """
    rate = np.asarray(rate)
    util = np.asarray(util)
    n = int(rate.shape[0])
    if util.shape != rate.shape or rate.ndim != 1:
        raise ValueError(f"history.record: rate {rate.shape} and util {util.shape} must be equal 1-d shapes")
    ring = _rings.get(fabric_id)
    if ring is None:
        cached = await store().aget(_key(fabric_id, "index"))
        ring = _Ring(cached["n"], list(cached["seq"]), list(cached["t"])) if cached else _Ring(n, [], [])
        _rings[fabric_id] = ring
    stale: list[str] = []
    if ring.n != n or (ring.seq and seq <= ring.seq[-1]):
        stale = _tick_keys(fabric_id, ring.seq, ring.n)
        ring.seq, ring.t, ring.n = [], [], n
    previous_t = ring.t[-1] if ring.t else None
    blobs = _encode(rate, util)
    ring.seq.append(int(seq))
    ring.t.append(float(t))
    keep = capacity(n)
    if len(ring.seq) > keep:
        stale += _tick_keys(fabric_id, ring.seq[:-keep], n)
        del ring.seq[:-keep], ring.t[:-keep]
    values = {_chunk_key(fabric_id, seq, c): blob for c, blob in enumerate(blobs)}
    values[_key(fabric_id, "index")] = ring.as_index()
    await store().aset_many(values, _TTL_S)
    if stale:
        await store().adelete_many(stale)
    return previous_t is not None and int(previous_t // 60) < int(t // 60)


def clear(fabric_id: int) -> None:
    """Forget a fabric's ring (cache and writer state)."""
    idx = index(fabric_id)
    if idx:
        store().delete_many(_tick_keys(fabric_id, idx["seq"], idx["n"]))
    store().delete(_key(fabric_id, "index"))
    _rings.pop(fabric_id, None)


@dataclass(frozen=True)
class Series:
    """Recent values of some directed links: ``seq`` int64 ``(T,)``, ``t`` float64 ``(T,)``, ``rate`` and
    ``util`` float32 ``(T, K)`` for the K requested links, oldest tick first."""

    seq: np.ndarray
    t: np.ndarray
    rate: np.ndarray
    util: np.ndarray


def _select(idx: dict | None, after: float | None, since: float | None, until: float | None
            ) -> tuple[list[int], list[float]]:
    if not idx:
        return [], []
    pairs = [(s, t) for s, t in zip(idx["seq"], idx["t"], strict=True)
             if (after is None or t > after) and (since is None or t >= since) and (until is None or t < until)]
    return [s for s, _ in pairs], [t for _, t in pairs]


def series(fabric_id: int, links: list[int], after: float | None = None) -> Series:
    """The ring's values of directed ``links`` for the ticks after time ``after`` (all kept ticks when None).

    Raises ``IndexError`` naming a link outside ``0..2L-1``. Ticks whose data
    expired between reading the index and the chunks are left out.
    """
    idx = index(fabric_id)
    k = len(links)
    if idx:
        for d in links:
            if not 0 <= d < idx["n"]:
                raise IndexError(f"link {d} is outside 0..{idx['n'] - 1}")
    seqs, times = _select(idx, after, None, None)
    if not seqs:
        empty = np.zeros((0, k), dtype=np.float32)
        return Series(np.zeros(0, np.int64), np.zeros(0), empty, empty.copy())
    chunk = idx["chunk"]
    needed = sorted({d // chunk for d in links})
    got = store().get_many([_chunk_key(fabric_id, s, c) for s in seqs for c in needed])
    rate = np.zeros((len(seqs), k), dtype=np.float32)
    util = np.zeros((len(seqs), k), dtype=np.float32)
    present = np.ones(len(seqs), dtype=bool)
    for i, s in enumerate(seqs):  # loop over ticks; each step slices whole chunks
        for c in needed:
            blob = got.get(_chunk_key(fabric_id, s, c))
            if blob is None:
                present[i] = False
                break
            block = _decode(blob)
            for j, d in enumerate(links):
                if d // chunk == c:
                    rate[i, j], util[i, j] = block[0, d % chunk], block[1, d % chunk]
    return Series(np.asarray(seqs, np.int64)[present], np.asarray(times)[present], rate[present], util[present])


def ticks(fabric_id: int, since: float, until: float) -> Series:
    """Every directed link's values for the ticks with ``since <= t < until``: ``rate``, ``util`` ``(T, 2L)``."""
    idx = index(fabric_id)
    seqs, times = _select(idx, None, since, until)
    n = idx["n"] if idx else 0
    rate = np.zeros((len(seqs), n), dtype=np.float32)
    util = np.zeros((len(seqs), n), dtype=np.float32)
    present = np.ones(len(seqs), dtype=bool)
    if seqs:
        chunk = idx["chunk"]
        chunks = math.ceil(n / chunk)
        got = store().get_many([_chunk_key(fabric_id, s, c) for s in seqs for c in range(chunks)])
        for i, s in enumerate(seqs):  # loop over ticks and chunks, vectorized within a chunk
            for c in range(chunks):
                blob = got.get(_chunk_key(fabric_id, s, c))
                if blob is None:
                    present[i] = False
                    break
                block = _decode(blob)
                rate[i, c * chunk:c * chunk + block.shape[1]] = block[0]
                util[i, c * chunk:c * chunk + block.shape[1]] = block[1]
    return Series(np.asarray(seqs, np.int64)[present], np.asarray(times)[present], rate[present], util[present])
