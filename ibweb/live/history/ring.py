"""The writer of a fabric's recent per-link history: a bounded ring of ticks in the Django cache, kept across
topology changes, and its store (and, in the embedded default, its mirror on disk).

The fabric runner calls :func:`record` once per tick with the topology the tick's arrays follow; any web process
reads the ring with
:mod:`ibweb.live.history.reads`. Because the ring lives in the Django cache (Redis at scale, local memory in the
embedded default) the engine may run in another process than the web. Its keys and chunks:
:mod:`ibweb.live.history.layout`.

Three things may be missing, and each reads differently (issue 35): a value the engine had no
measurement for (a link without counters) is NaN (no data); a link the tick's topology lacks
(a cable cut: the discovery no longer has it) is *down* (``Series.down``); a tick that never came
(engine stopped, server down) is simply not in the ring, a gap in time. The embedded default's ring
(local memory) is mirrored on disk (:mod:`ibweb.live.history.ring_files`), written every few seconds and
at the server's stop (:func:`flush_all`), and read back at start: a restarted engine continues after its
newest tick (:func:`last_seq`).

A topology change starts a run, not a new ring: a link's series follows its identity through every
run and is a gap (NaN) in ticks whose topology lacks it, never another link's values. Only a
sequence number not above the newest (a restarted engine) starts a new ring. The ring keeps at most
``KEEP_TICKS`` ticks and at most ``BUDGET_BYTES`` of link data (never fewer than ``MIN_TICKS``); older
ticks, and topologies no tick uses any more, are deleted as new ones come.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import math
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from cachetools import LRUCache
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache

from fabric_engine.topology import Fabric
from ibweb.live.history import layout
from ibweb.live.history.link_identity import LinkIdentities
from ibweb.live.history.ring_files import RingFiles

__all__ = ["KEEP_TICKS", "MIN_TICKS", "BUDGET_BYTES", "store", "capacity", "index", "topology", "last_seq", "record",
           "flush", "flush_all", "clear"]

log = logging.getLogger(__name__)

#: Ticks kept at least, whatever the budget (and the least IBWEB_HISTORY_TICKS may be).
MIN_TICKS = 120
#: Ticks kept at most (IBWEB_HISTORY_TICKS; 10 minutes at the default 1 s tick).
KEEP_TICKS = max(MIN_TICKS, int(getattr(settings, "IBWEB_HISTORY_TICKS", 600)))
#: Bytes of link data kept per fabric at most.
BUDGET_BYTES = int(getattr(settings, "IBWEB_HISTORY_BYTES", 64 * 2**20))
_TTL_S = 24 * 3600
_TOUCH_S = 3600.0  # how often the writer renews the expiry of the topology its ticks use
_MEMO = 16  # decoded topologies kept per process


_private: LocMemCache | None = None
_disk: RingFiles | None = None
_private_lock = threading.Lock()


def store():
    """The cache holding the rings: the ``history`` cache if configured, else the default one.

    A local-memory default (the embedded setup: engine and web in one process) is
    replaced by a private local-memory cache without an entry limit, so that the
    ring's many small values never cull the live feed's snapshot parts; it is filled
    from the rings on disk (``IBWEB_HISTORY_DIR``) when first used.
    """
    global _private, _disk
    if "history" in settings.CACHES:
        return caches["history"]
    default = caches["default"]
    if not isinstance(default, LocMemCache):
        return default
    with _private_lock:
        if _private is None:
            private = LocMemCache("ibweb-history", {"TIMEOUT": _TTL_S, "OPTIONS": {"MAX_ENTRIES": 10**9}})
            root = getattr(settings, "IBWEB_HISTORY_DIR", None) or Path(settings.VAR_DIR) / "history"
            _disk = RingFiles(root)
            _restore(private, _disk)
            _private = private
    return _private


def _restore(cache: LocMemCache, disk: RingFiles) -> None:
    """Put the rings on disk into ``cache`` (the embedded default starting)."""
    for fabric_id, (idx, blobs, topos) in disk.load(layout.chunk_sizes).items():  # loop over fabrics, then ticks
        values: dict[str, object] = {layout.topo_key(fabric_id, v): b for v, b in topos.items()}
        values.update({layout.chunk_key(fabric_id, s, c): b
                       for s, chunks in blobs.items() for c, b in enumerate(chunks)})
        if idx["seq"]:
            values[layout.index_key(fabric_id)] = idx
        cache.set_many(values, _TTL_S)
        log.info("fabric %s: %d ticks of history read back from %s", fabric_id, len(idx["seq"]), disk.root)


def capacity(n: int) -> int:
    """Ticks the ring keeps for ``n`` directed links (bounded by KEEP_TICKS and BUDGET_BYTES, at least MIN_TICKS)."""
    per_tick = 2 * np.dtype(layout.DTYPE).itemsize * max(n, 1)
    return max(MIN_TICKS, min(KEEP_TICKS, BUDGET_BYTES // per_tick))


@dataclass
class _Ring:
    """Writer-side state of one fabric's ring (mirrors the cached index)."""

    seq: list[int]
    t: list[float]
    runs: list[list]
    tick_s: float | None = None
    touched: dict[str, float] = field(default_factory=dict)  # topology version -> monotonic time of its renewal

    def as_index(self) -> dict:
        n = self.runs[-1][2] if self.runs else 0
        return {"n": n, "chunk": layout.CHUNK, "tick_s": self.tick_s, "seq": self.seq, "t": self.t, "runs": self.runs}


_rings: dict[int, _Ring] = {}
_memo: LRUCache[tuple[int, str], LinkIdentities] = LRUCache(maxsize=_MEMO)
_memo_lock = threading.Lock()


def index(fabric_id: int) -> dict | None:
    """The cached index of a fabric's ring: ``{"n", "chunk", "seq", "t", "runs"}`` oldest first, or None."""
    return store().get(layout.index_key(fabric_id))


def topology(fabric_id: int, version: str | None, fabric: Fabric | None = None) -> LinkIdentities | None:
    """The link identities of topology ``version`` of the fabric's ring (decoded once per process), or None.

    ``fabric``: the engine fabric of that version, used when the cache does not hold it (a ring not
    written yet). None for a run recorded without a topology, or a topology no longer cached.
    """
    if version is None:
        return None
    with _memo_lock:
        hit = _memo.get((fabric_id, version))  # a hit is the most recently used
        if hit is not None:
            return hit
    blob = store().get(layout.topo_key(fabric_id, version))
    ids = LinkIdentities.decode(blob) if blob is not None else LinkIdentities.of(fabric) if fabric else None
    if ids is not None:
        with _memo_lock:
            _memo[(fabric_id, version)] = ids
    return ids


def last_seq(fabric_id: int) -> int:
    """Sequence number of the ring's newest tick (0 when empty): a restarted embedded engine continues after it."""
    idx = index(fabric_id)
    return int(idx["seq"][-1]) if idx and idx["seq"] else 0


async def record(fabric_id: int, seq: int, t: float, rate: np.ndarray, util: np.ndarray, topology: str | None = None,
                 fabric: Fabric | None = None, *, missing: np.ndarray | None = None, tick_s: float | None = None
                 ) -> bool:
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
        Per-directed-link rate (Gb/s) and utilization, in directed-link order of ``fabric``;
        NaN where the tick has no measurement of the link (kept as no data, never as 0).
    topology : str, optional
        Version of the topology the arrays follow (the runner's record base version), never reused
        for another topology; a new version starts a run, not a new ring.
    fabric : Fabric, optional
        The engine fabric of ``topology``: its link identities are stored once per version.
        Without both (or with a fabric of another size) the tick is read by position only.
    missing : ndarray of bool, shape ``(2L,)``, optional
        Links the tick has no measurement of (stored as NaN, whatever ``rate`` says).
    tick_s : float, optional
        Seconds the tick stands for (the engine's tick; the history API says it).

    Returns
    -------
    bool
        Whether ``t`` entered a new minute.
    """
    rate = np.asarray(rate)
    util = np.asarray(util)
    n = int(rate.shape[0])
    if util.shape != rate.shape or rate.ndim != 1:
        raise ValueError(f"ring.record: rate {rate.shape} and util {util.shape} must be equal 1-d shapes")
    if missing is not None:
        missing = np.asarray(missing, dtype=bool)
        if missing.shape != rate.shape:
            raise ValueError(f"ring.record: missing {missing.shape} must have the shape of rate {rate.shape}")
        rate, util = np.where(missing, np.nan, rate), np.where(missing, np.nan, util)
    if topology is not None and (fabric is None or 2 * fabric.num_links != n):
        log.warning("fabric %s: tick %s has %d directed links, not those of topology %s; kept by position",
                    fabric_id, seq, n, topology)
        topology = None
    ring = _rings.get(fabric_id)
    if ring is None:
        cached = await store().aget(layout.index_key(fabric_id))
        ring = (_Ring(list(cached["seq"]), list(cached["t"]), layout.runs(cached), cached.get("tick_s")) if cached
                else _Ring([], [], []))
        _rings[fabric_id] = ring
    if tick_s is not None and tick_s > 0:
        ring.tick_s = float(tick_s)
    stale: list[str] = []
    before = {r[1] for r in ring.runs}
    if ring.seq and seq <= ring.seq[-1]:  # a restarted engine: a new ring
        stale = layout.tick_keys(fabric_id, ring.seq, ring.runs)
        ring.seq, ring.t, ring.runs = [], [], []
    previous_t = ring.t[-1] if ring.t else None
    values: dict[str, object] = {}
    if not ring.runs or ring.runs[-1][1:] != [topology, n]:
        ring.runs.append([int(seq), topology, n])
    if topology is not None and time.monotonic() - ring.touched.get(topology, -math.inf) > _TOUCH_S:
        topo_key = layout.topo_key(fabric_id, topology)
        if not await store().atouch(topo_key, _TTL_S):
            values[topo_key] = await asyncio.to_thread(lambda: LinkIdentities.of(fabric).encode())
        ring.touched[topology] = time.monotonic()
    ring.seq.append(int(seq))
    ring.t.append(float(t))
    keep = capacity(n)
    if len(ring.seq) > keep:
        stale += layout.tick_keys(fabric_id, ring.seq[:-keep], ring.runs)
        del ring.seq[:-keep], ring.t[:-keep]
        while len(ring.runs) > 1 and ring.runs[1][0] <= ring.seq[0]:
            del ring.runs[0]
    gone = {v for v in before - {r[1] for r in ring.runs} if v is not None}
    stale += [layout.topo_key(fabric_id, v) for v in gone]
    for v in gone:
        ring.touched.pop(v, None)
    chunks = layout.encode(rate, util)
    values.update({layout.chunk_key(fabric_id, seq, c): blob for c, blob in enumerate(chunks)})
    values[layout.index_key(fabric_id)] = ring.as_index()
    await asyncio.to_thread(store().set_many, values, _TTL_S)  # one pipeline (aset_many: a round trip per key)
    stale = [k for k in stale if k not in values]  # a restarted engine's first ticks reuse the old sequence numbers
    if stale:
        await asyncio.to_thread(store().delete_many, stale)
    disk = _disk if store() is _private else None
    if disk is not None:
        disk.add(fabric_id, seq, chunks)
        if disk.due(fabric_id):
            await asyncio.to_thread(flush, fabric_id)
    return previous_t is not None and int(previous_t // 60) < int(t // 60)


def flush(fabric_id: int) -> None:
    """Write the fabric's ring to disk now (embedded default only; :func:`record` does it every few seconds)."""
    if _disk is None or store() is not _private:
        return
    idx = index(fabric_id)
    if idx is None:
        return
    versions = list(dict.fromkeys(r[1] for r in layout.runs(idx) if r[1] is not None))
    found = store().get_many([layout.topo_key(fabric_id, v) for v in _disk.lacks(fabric_id, versions)])
    _disk.flush(fabric_id, idx, {v: found.get(layout.topo_key(fabric_id, v)) for v in versions})


def flush_all(quiet: bool = False) -> None:
    """Write the ticks of every fabric not on disk yet (embedded default only); never raises (logged).

    ``quiet``: no line per fabric written (at the interpreter's exit, where logging may be closed).
    Called at the server's stop (:class:`~ibweb.live.engine.lifespan.EngineLifespan`: uvicorn ends on
    SIGTERM with that signal, running no ``atexit``) and at the interpreter's exit. Without it the
    ticks of the last write interval (up to ``FLUSH_S``, more while a stop took) were lost at every
    stop, and the restarted engine numbered its ticks after the last one written: numbers the stopped
    server had served came back for other ticks, and no tick above them (issue 35).
    """
    disk = _disk
    if disk is None:
        return
    for fabric_id in disk.pending():  # loop over fabrics
        try:
            flush(fabric_id)
            if not quiet:
                log.info("fabric %s: history written to %s at stop (newest tick %d)", fabric_id, disk.root,
                         last_seq(fabric_id))
        except Exception:  # stopping: say why the last ticks are lost
            log.exception("fabric %s: the last ticks of history could not be written", fabric_id)


# a stop by SIGINT, or another host than the ASGI server; quiet: logging's streams may be closed by then
atexit.register(flush_all, quiet=True)


def clear(fabric_id: int) -> None:
    """Forget a fabric's ring (cache, writer state and decoded topologies)."""
    idx = index(fabric_id)
    runs = layout.runs(idx)
    if idx:
        store().delete_many(layout.tick_keys(fabric_id, idx["seq"], runs))
    topos = [layout.topo_key(fabric_id, r[1]) for r in runs if r[1] is not None]
    store().delete_many(topos + [layout.index_key(fabric_id)])
    if _disk is not None and store() is _private:
        _disk.drop(fabric_id)
    _rings.pop(fabric_id, None)
    with _memo_lock:
        for k in [k for k in _memo if k[0] == fabric_id]:
            del _memo[k]
