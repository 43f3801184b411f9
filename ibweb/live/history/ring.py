"""Recent per-link history of a fabric: a bounded ring of ticks in the Django cache, kept across topology changes.

The fabric runner calls :func:`record` once per tick with the topology the tick's arrays follow (and
starts the rollup task when it says a minute finished); any web process reads a link's series with
:func:`series` (by identity, :mod:`ibweb.live.history.link_identity`, or by directed-link index in the newest
topology) or a port's with :func:`port_series`, and the rollup task reads whole minutes with
:func:`ticks`. Because the ring lives in the Django cache (Redis at scale, local memory in the
embedded default) the engine may run in another process than the web.

Layout (keys under ``ibweb:history:<fabric>:``):

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
ticks, and topologies no tick uses any more, are deleted as new ones come. float16 keeps three
significant digits: enough for charts of rates up to 65,504 Gb/s and utilizations.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from cachetools import LRUCache
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache

from fabric_engine.topology import Fabric
from ibweb.live.history.link_identity import IDENTITY, LinkIdentities, port_key
from ibweb.live.history.ring_files import RingFiles

__all__ = ["CHUNK", "KEEP_TICKS", "MIN_TICKS", "BUDGET_BYTES", "Series", "Ticks", "Recabling", "record", "series",
           "port_series", "recablings", "ticks", "index", "topology", "newest", "known", "known_before", "capacity",
           "clear", "store", "tick_seconds", "last_seq", "flush", "flush_all"]

log = logging.getLogger(__name__)

#: Directed links per stored chunk.
CHUNK = 1024
#: Ticks kept at least, whatever the budget (and the least IBWEB_HISTORY_TICKS may be).
MIN_TICKS = 120
#: Ticks kept at most (IBWEB_HISTORY_TICKS; 10 minutes at the default 1 s tick).
KEEP_TICKS = max(MIN_TICKS, int(getattr(settings, "IBWEB_HISTORY_TICKS", 600)))
#: Bytes of link data kept per fabric at most.
BUDGET_BYTES = int(getattr(settings, "IBWEB_HISTORY_BYTES", 64 * 2**20))
_TTL_S = 24 * 3600
_TOUCH_S = 3600.0  # how often the writer renews the expiry of the topology its ticks use
_MEMO = 16  # decoded topologies kept per process
_DTYPE = np.float16


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


def _chunk_sizes(n: int) -> list[int]:
    """Byte size of each stored chunk of a tick of ``n`` directed links."""
    per = 2 * np.dtype(_DTYPE).itemsize
    return [per * min(CHUNK, n - lo) for lo in range(0, n, CHUNK)]


def _restore(cache: LocMemCache, disk: RingFiles) -> None:
    """Put the rings on disk into ``cache`` (the embedded default starting)."""
    for fabric_id, (idx, blobs, topos) in disk.load(_chunk_sizes).items():  # loop over fabrics, then ticks
        values: dict[str, object] = {_topo_key(fabric_id, v): b for v, b in topos.items()}
        values.update({_chunk_key(fabric_id, s, c): b for s, chunks in blobs.items() for c, b in enumerate(chunks)})
        if idx["seq"]:
            values[_key(fabric_id, "index")] = idx
        cache.set_many(values, _TTL_S)
        log.info("fabric %s: %d ticks of history read back from %s", fabric_id, len(idx["seq"]), disk.root)


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:history:{fabric_id}:{part}"


def _chunk_key(fabric_id: int, seq: int, chunk: int) -> str:
    return _key(fabric_id, f"{seq}:{chunk}")


def _topo_key(fabric_id: int, version: str) -> str:
    return _key(fabric_id, f"topo:{version}")


def _run_of(runs: list[list], seqs: Sequence[int]) -> np.ndarray:
    """Run number of each tick ``seqs``, int64."""
    first = np.array([r[0] for r in runs], dtype=np.int64)
    return np.searchsorted(first, np.asarray(seqs, dtype=np.int64), side="right") - 1


def _tick_keys(fabric_id: int, seqs: list[int], runs: list[list]) -> list[str]:
    sizes = [runs[r][2] for r in _run_of(runs, seqs)] if seqs else []
    return [_chunk_key(fabric_id, s, c) for s, n in zip(seqs, sizes, strict=True) for c in range(math.ceil(n / CHUNK))]


def _runs(idx: dict | None) -> list[list]:
    """The index's runs (an index written before runs existed: one run without a topology)."""
    if not idx or not idx["seq"]:
        return []
    return idx.get("runs") or [[idx["seq"][0], None, idx["n"]]]


def capacity(n: int) -> int:
    """Ticks the ring keeps for ``n`` directed links (bounded by KEEP_TICKS and BUDGET_BYTES, at least MIN_TICKS)."""
    per_tick = 2 * np.dtype(_DTYPE).itemsize * max(n, 1)
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
        return {"n": n, "chunk": CHUNK, "tick_s": self.tick_s, "seq": self.seq, "t": self.t, "runs": self.runs}


_rings: dict[int, _Ring] = {}
_memo: LRUCache[tuple[int, str], LinkIdentities] = LRUCache(maxsize=_MEMO)
_memo_lock = threading.Lock()


def index(fabric_id: int) -> dict | None:
    """The cached index of a fabric's ring: ``{"n", "chunk", "seq", "t", "runs"}`` oldest first, or None."""
    return store().get(_key(fabric_id, "index"))


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
    blob = store().get(_topo_key(fabric_id, version))
    ids = LinkIdentities.decode(blob) if blob is not None else LinkIdentities.of(fabric) if fabric else None
    if ids is not None:
        with _memo_lock:
            _memo[(fabric_id, version)] = ids
    return ids


def newest(fabric_id: int) -> tuple[str | None, int] | None:
    """``(version, n)`` of the topology of the ring's newest tick (version None: recorded without one), or None."""
    runs = _runs(index(fabric_id))
    return (runs[-1][1], runs[-1][2]) if runs else None


def known(fabric_id: int) -> list[LinkIdentities]:
    """The cached topologies of the ring's ticks, newest first."""
    found = (topology(fabric_id, r[1]) for r in reversed(_runs(index(fabric_id))))
    return [ids for ids in found if ids is not None]


def known_before(fabric_id: int, until: float) -> list[LinkIdentities]:
    """The cached topologies of the ring's runs that started before time ``until``, newest first: the links a
    tick before ``until`` could have had (one it lacks is down, not yet to come)."""
    idx = index(fabric_id)
    runs = _runs(idx)
    if not runs:
        return []
    t_of = dict(zip(idx["seq"], idx["t"], strict=True))
    first_t = [t_of.get(r[0], -math.inf) for r in runs]  # a run's first tick may have left the ring: long ago
    found = (topology(fabric_id, r[1]) for r, t in zip(reversed(runs), reversed(first_t), strict=True) if t < until)
    return [ids for ids in found if ids is not None]


def tick_seconds(idx: dict | None) -> float:
    """Seconds one tick of the ring stands for: as recorded, else the median spacing of its ticks (1 s when
    fewer than two)."""
    if idx and idx.get("tick_s"):
        return float(idx["tick_s"])
    t = np.asarray(idx["t"] if idx else [], dtype=np.float64)
    gaps = np.diff(t)
    return float(np.median(gaps)) if len(gaps) else 1.0


def last_seq(fabric_id: int) -> int:
    """Sequence number of the ring's newest tick (0 when empty): a restarted embedded engine continues after it."""
    idx = index(fabric_id)
    return int(idx["seq"][-1]) if idx and idx["seq"] else 0


def _encode(rate: np.ndarray, util: np.ndarray) -> list[bytes]:
    """The chunks of one tick; NaN (no data) stays NaN, infinities are clipped."""
    both = np.stack([np.asarray(rate, dtype=np.float64), np.asarray(util, dtype=np.float64)])
    both = both.clip(0.0, 65504.0).astype(_DTYPE)
    return [both[:, lo:lo + CHUNK].tobytes() for lo in range(0, both.shape[1], CHUNK)]


def _decode(blob: bytes) -> np.ndarray:
    """float32 ``[2, m]`` (rate, util) of one chunk."""
    return np.frombuffer(blob, dtype=_DTYPE).reshape(2, -1).astype(np.float32)


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
        Seconds the tick stands for (the engine's tick); the rollups count coverage with it.

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
    if missing is not None:
        missing = np.asarray(missing, dtype=bool)
        if missing.shape != rate.shape:
            raise ValueError(f"history.record: missing {missing.shape} must have the shape of rate {rate.shape}")
        rate, util = np.where(missing, np.nan, rate), np.where(missing, np.nan, util)
    if topology is not None and (fabric is None or 2 * fabric.num_links != n):
        log.warning("fabric %s: tick %s has %d directed links, not those of topology %s; kept by position",
                    fabric_id, seq, n, topology)
        topology = None
    ring = _rings.get(fabric_id)
    if ring is None:
        cached = await store().aget(_key(fabric_id, "index"))
        ring = (_Ring(list(cached["seq"]), list(cached["t"]), _runs(cached), cached.get("tick_s")) if cached
                else _Ring([], [], []))
        _rings[fabric_id] = ring
    if tick_s is not None and tick_s > 0:
        ring.tick_s = float(tick_s)
    stale: list[str] = []
    before = {r[1] for r in ring.runs}
    if ring.seq and seq <= ring.seq[-1]:  # a restarted engine: a new ring
        stale = _tick_keys(fabric_id, ring.seq, ring.runs)
        ring.seq, ring.t, ring.runs = [], [], []
    previous_t = ring.t[-1] if ring.t else None
    values: dict[str, object] = {}
    if not ring.runs or ring.runs[-1][1:] != [topology, n]:
        ring.runs.append([int(seq), topology, n])
    if topology is not None and time.monotonic() - ring.touched.get(topology, -math.inf) > _TOUCH_S:
        if not await store().atouch(_topo_key(fabric_id, topology), _TTL_S):
            values[_topo_key(fabric_id, topology)] = await asyncio.to_thread(lambda: LinkIdentities.of(fabric).encode())
        ring.touched[topology] = time.monotonic()
    ring.seq.append(int(seq))
    ring.t.append(float(t))
    keep = capacity(n)
    if len(ring.seq) > keep:
        stale += _tick_keys(fabric_id, ring.seq[:-keep], ring.runs)
        del ring.seq[:-keep], ring.t[:-keep]
        while len(ring.runs) > 1 and ring.runs[1][0] <= ring.seq[0]:
            del ring.runs[0]
    gone = {v for v in before - {r[1] for r in ring.runs} if v is not None}
    stale += [_topo_key(fabric_id, v) for v in gone]
    for v in gone:
        ring.touched.pop(v, None)
    chunks = _encode(rate, util)
    values.update({_chunk_key(fabric_id, seq, c): blob for c, blob in enumerate(chunks)})
    values[_key(fabric_id, "index")] = ring.as_index()
    await store().aset_many(values, _TTL_S)
    stale = [k for k in stale if k not in values]  # a restarted engine's first ticks reuse the old sequence numbers
    if stale:
        await store().adelete_many(stale)
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
    versions = list(dict.fromkeys(r[1] for r in _runs(idx) if r[1] is not None))
    found = store().get_many([_topo_key(fabric_id, v) for v in _disk.lacks(fabric_id, versions)])
    _disk.flush(fabric_id, idx, {v: found.get(_topo_key(fabric_id, v)) for v in versions})


def flush_all() -> None:
    """Write the ticks of every fabric not on disk yet (embedded default only); never raises (logged).

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
            log.info("fabric %s: history written to %s at stop (newest tick %d)", fabric_id, disk.root,
                     last_seq(fabric_id))
        except Exception:  # stopping: say why the last ticks are lost
            log.exception("fabric %s: the last ticks of history could not be written", fabric_id)


atexit.register(flush_all)  # a stop by SIGINT, or another host than the ASGI server


def clear(fabric_id: int) -> None:
    """Forget a fabric's ring (cache, writer state and decoded topologies)."""
    idx = index(fabric_id)
    runs = _runs(idx)
    if idx:
        store().delete_many(_tick_keys(fabric_id, idx["seq"], runs))
    store().delete_many([_topo_key(fabric_id, r[1]) for r in runs if r[1] is not None] + [_key(fabric_id, "index")])
    if _disk is not None and store() is _private:
        _disk.drop(fabric_id)
    _rings.pop(fabric_id, None)
    with _memo_lock:
        for k in [k for k in _memo if k[0] == fabric_id]:
            del _memo[k]


@dataclass(frozen=True)
class Series:
    """Recent values of some directed links: ``seq`` int64 ``(T,)``, ``t`` float64 ``(T,)``, ``rate`` and
    ``util`` float32 ``(T, K)`` for the K requested links, oldest tick first; NaN where the tick has no value
    of the link: no measurement, or (``down`` bool ``(T, K)``) the tick's topology lacks it (a cable down).
    A tick recorded without a topology is never down (unknown)."""

    seq: np.ndarray
    t: np.ndarray
    rate: np.ndarray
    util: np.ndarray
    down: np.ndarray


@dataclass(frozen=True)
class Ticks:
    """The ticks of one run (one topology): ``identities`` (None: recorded without a topology, or no longer
    cached) and their :class:`Series` of every directed link, ``rate``, ``util`` ``(T, 2L)``."""

    identities: LinkIdentities | None
    series: Series


@dataclass(frozen=True)
class Recabling:
    """A transmitting port's peer changed: at ``t`` (the first tick of the new cabling) its directed link
    ``before`` became ``after`` (:data:`~ibweb.live.history.link_identity.IDENTITY` scalars, same transmitting end)."""

    t: float
    before: np.void
    after: np.void


def _select(idx: dict | None, after: float | None, since: float | None, until: float | None
            ) -> tuple[list[int], list[float]]:
    if not idx:
        return [], []
    pairs = [(s, t) for s, t in zip(idx["seq"], idx["t"], strict=True)
             if (after is None or t > after) and (since is None or t >= since) and (until is None or t < until)]
    return [s for s, _ in pairs], [t for _, t in pairs]


def _empty(k: int) -> Series:
    empty = np.zeros((0, k), dtype=np.float32)
    return Series(np.zeros(0, np.int64), np.zeros(0), empty, empty.copy(), np.zeros((0, k), dtype=bool))


def _read(fabric_id: int, idx: dict | None, after: float | None, k: int,
          resolve: Callable[[list], np.ndarray | None]) -> Series:
    """The values of ``k`` links in the ticks after ``after``; ``resolve(run)`` gives their directed-link
    indices in a run's topology, int64 ``[k]`` (-1: the topology lacks it, down), or None when the run's
    topology is unknown (a gap, not down). Costs one chunk per tick and link."""
    seqs, times = _select(idx, after, None, None)
    if not seqs:
        return _empty(k)
    runs, chunk = _runs(idx), idx["chunk"]
    run_of = _run_of(runs, seqs)
    plan: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}  # run -> [(chunk, columns, offsets)]
    lacks = np.zeros((len(runs), k), dtype=bool)
    for r in np.unique(run_of).tolist():  # loop over the window's topologies
        found = resolve(runs[r])
        pos = np.full(k, -1, dtype=np.int64) if found is None else np.asarray(found, dtype=np.int64)
        lacks[r] = found is not None and pos < 0
        plan[r] = []
        for c in np.unique(pos[pos >= 0] // chunk).tolist():
            cols = np.flatnonzero((pos >= 0) & (pos // chunk == c))
            plan[r].append((c, cols, pos[cols] % chunk))
    got = store().get_many([_chunk_key(fabric_id, s, c) for s, r in zip(seqs, run_of.tolist(), strict=True)
                            for c, _, _ in plan[r]])
    rate = np.full((len(seqs), k), np.nan, dtype=np.float32)
    util = np.full((len(seqs), k), np.nan, dtype=np.float32)
    present = np.ones(len(seqs), dtype=bool)
    for i, (s, r) in enumerate(zip(seqs, run_of.tolist(), strict=True)):  # loop over ticks; each step slices chunks
        for c, cols, offsets in plan[r]:
            blob = got.get(_chunk_key(fabric_id, s, c))
            if blob is None:
                present[i] = False
                break
            block = _decode(blob)
            rate[i, cols], util[i, cols] = block[0, offsets], block[1, offsets]
    return Series(np.asarray(seqs, np.int64)[present], np.asarray(times)[present], rate[present], util[present],
                  lacks[run_of][present])


def series(fabric_id: int, links: Sequence[int] | np.ndarray, after: float | None = None) -> Series:
    """The ring's values of ``links`` for the ticks after time ``after`` (all kept ticks when None).

    ``links``: identities (:data:`~ibweb.live.history.link_identity.IDENTITY` ``[K]``), followed through every
    topology of the ring, or directed-link indices of the newest tick's topology, read as their
    identities (by position within that topology's ticks when it has none). Ticks whose topology lacks
    a link are NaN for it. Raises ``IndexError`` naming an index outside ``0..2L-1``. Ticks whose data
    expired between reading the index and the chunks are left out.
    """
    idx = index(fabric_id)
    runs = _runs(idx)
    keys = np.asarray(links)
    if keys.dtype != IDENTITY:
        d = keys.astype(np.int64).reshape(-1)
        for bad in d[(d < 0) | (d >= idx["n"])].tolist() if idx else []:
            raise IndexError(f"link {bad} is outside 0..{idx['n'] - 1}")
        if not runs:
            return _empty(len(d))
        last = runs[-1]
        ids = topology(fabric_id, last[1])
        if ids is None:
            return _read(fabric_id, idx, after, len(d), lambda run: d if run[1:] == last[1:] else None)
        keys = ids.keys[d]

    def resolve(run: list) -> np.ndarray | None:
        ids = topology(fabric_id, run[1])
        return ids.find(keys) if ids is not None else None

    return _read(fabric_id, idx, after, len(keys), resolve)


def port_series(fabric_id: int, guid: int, port: int, after: float | None = None) -> Series:
    """The values of the directed link leaving port ``port`` of node GUID ``guid`` (column 0) and of the one
    entering it (column 1) in each tick, whatever the port is cabled to; NaN while it is not cabled."""
    key = port_key(guid, port)

    def resolve(run: list) -> np.ndarray | None:
        ids = topology(fabric_id, run[1])
        if ids is None:
            return None
        d = ids.find_ports(key)
        return np.concatenate([d, ids.reverse(d)])

    return _read(fabric_id, index(fabric_id), after, 2, resolve)


def recablings(fabric_id: int, guid: int, port: int, after: float | None = None) -> list[Recabling]:
    """Each change of the peer of port ``port`` of node GUID ``guid`` among the ticks after ``after``.

    A stretch where the port is not cabled is no change (a gap); it counts when the port comes back
    cabled to another peer.
    """
    idx = index(fabric_id)
    seqs, times = _select(idx, after, None, None)
    if not seqs:
        return []
    runs, key = _runs(idx), port_key(guid, port)
    run_of = _run_of(runs, seqs)
    starts = np.flatnonzero(np.diff(run_of, prepend=-1))  # first tick of each run in the window
    out: list[Recabling] = []
    before: np.void | None = None
    for i in starts.tolist():  # loop over the window's topologies
        ids = topology(fabric_id, runs[run_of[i]][1])
        d = int(ids.find_ports(key)[0]) if ids is not None else -1
        if d < 0:
            continue
        now = ids.keys[d]
        if before is not None and (now["rx_guid"], now["rx_port"]) != (before["rx_guid"], before["rx_port"]):
            out.append(Recabling(float(times[i]), before, now))
        before = now
    return out


def ticks(fabric_id: int, since: float, until: float) -> list[Ticks]:
    """Every directed link's values for the ticks with ``since <= t < until``, one :class:`Ticks` per topology."""
    idx = index(fabric_id)
    seqs, times = _select(idx, None, since, until)
    if not seqs:
        return []
    runs, chunk = _runs(idx), idx["chunk"]
    run_of = _run_of(runs, seqs)
    out = []
    for r in np.unique(run_of).tolist():  # loop over topologies, ticks and chunks, vectorized within a chunk
        mine = np.flatnonzero(run_of == r)
        n = runs[r][2]
        chunks = math.ceil(n / chunk)
        part = [seqs[i] for i in mine.tolist()]
        got = store().get_many([_chunk_key(fabric_id, s, c) for s in part for c in range(chunks)])
        rate = np.zeros((len(part), n), dtype=np.float32)
        util = np.zeros((len(part), n), dtype=np.float32)
        present = np.ones(len(part), dtype=bool)
        for i, s in enumerate(part):
            for c in range(chunks):
                blob = got.get(_chunk_key(fabric_id, s, c))
                if blob is None:
                    present[i] = False
                    break
                block = _decode(blob)
                rate[i, c * chunk:c * chunk + block.shape[1]] = block[0]
                util[i, c * chunk:c * chunk + block.shape[1]] = block[1]
        if present.any():
            s = Series(np.asarray(part, np.int64)[present], np.asarray(times)[mine][present], rate[present],
                       util[present], np.broadcast_to(False, (int(present.sum()), n)))
            out.append(Ticks(topology(fabric_id, runs[r][1]), s))
    return out
