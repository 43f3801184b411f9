"""The newest link health readings of a fabric, per port, in the cache (issue 37).

Pushed captures, the collector's ``perfquery -T`` and an uploaded ibdiagnet run add rows (already matched to the
fabric's ports, :mod:`.health_ports`); rows of the same port identity merge field by field, the newest given
value winning (:func:`~fabric_engine.health.records.merge`: a port's BER from ``mlxlink`` and its module from
``ibdiagnet2.cables`` meet). At most one row per port of the fabric is kept, for :data:`_TTL_S` after the last
write. Keys (under ``ibweb:telemetry:<fabric id>:``): ``health`` (the :class:`HealthRecords`),
``health_v`` (a number written with it, so a reader polls a few bytes each tick) and ``health_base`` (the last
counters of every port whose tool gives counts but no BER, per source, :func:`~fabric_engine.health.grade.
counter_baseline`); ``log_downs`` and ``log_downs_v``: the port changes the collector read in OpenSM's log
(:func:`put_log_downs`), which a down tracker takes with :class:`LogDowns`.

BER from counter deltas: where two readings of the same port meet (here), a row with counters and no BER of its
own (``perfquery -T``) gets raw, effective and symbol BER from the deltas to the same port's previous counters of
the same source (``perfquery -T #3`` and ``#5`` are one source: the sweep numbers its switches' outputs), over the
interval between their times (:func:`~fabric_engine.health.grade.ber_from_deltas`). Its BER and window replace the
port's older ones even when unknown (the first reading, a cleared counter): a stale BER never stands for a new
interval.

The read-merge-write is atomic across processes (two web processes pushing, a push and a sweep): it holds a
Redis lock per fabric (redis-py's, as the engine's leader lock) when the cache is Redis; with the local-memory
cache (the embedded setup, one process) a process lock is enough.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Iterator

import numpy as np
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.core.cache.backends.redis import RedisCache

from fabric_engine.health.grade import COUNTERS, ber_from_deltas, counter_baseline, own_ber
from fabric_engine.health.opensm_log import feed
from fabric_engine.health.port_counters import saturated
from fabric_engine.health.records import FIELDS, HealthRecords, compact, merge, take_rows

from .health_ports import match_ports

__all__ = ["combine", "put", "read", "version", "forget", "merge_lock", "Readings", "LOCK_TIMEOUT_S",
           "put_log_downs", "log_downs", "LogDowns", "MAX_LOG_DOWNS"]

_TTL_S = 24 * 3600
_lock = threading.Lock()
#: Longest a merge may hold the fabric's lock (a holder killed meanwhile frees it then), and wait for it.
LOCK_TIMEOUT_S = 60.0
_RUN = re.compile(r" #\d+$")  # the sweep's number of a switch's output: not part of the source
#: Most sources whose counters are kept for BER deltas (pushes named by their files; the sweep is one).
MAX_SOURCES = 64
#: Most port changes from OpenSM's log kept per fabric (the newest).
MAX_LOG_DOWNS = 20_000
_LOG_FIELDS = {"t": np.float64, "guid": np.uint64, "port": np.int16, "up": np.int8, "exact": bool}
_DERIVED = ("raw_ber", "eff_ber", "sym_ber", "raw_ber_lane", "window_s")


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:telemetry:{fabric_id}:{part}"


def _take(rec: HealthRecords, rows: np.ndarray) -> HealthRecords:
    return HealthRecords(rec.guid[rows], rec.name[rows], rec.port[rows],
                         {f: take_rows(v, rows) for f, v in rec.data.items()}, rec.source[rows])


def _numbers(guid: np.ndarray, port: np.ndarray, guids: np.ndarray) -> np.ndarray:
    """Port identities as numbers (rank of the GUID in the sorted ``guids`` x 256 + port; -1: a GUID not there)."""
    guid = np.asarray(guid, np.uint64)
    if not guids.size:
        return np.full(guid.size, -1, np.int64)
    rank = np.minimum(np.searchsorted(guids, guid), guids.size - 1)
    return np.where(guids[rank] == guid, rank * 256 + np.asarray(port, np.int64), -1)


def _unique_ports(rec: HealthRecords) -> bool:
    """One row per port identity (:meth:`~fabric_engine.health.records.HealthRecords.keys`)."""
    if len(rec) and (rec.guid != 0).all():  # by GUID and port: numbers, no strings
        ids = _numbers(rec.guid, rec.port, np.unique(np.asarray(rec.guid, np.uint64)))
        return np.unique(ids).size == ids.size
    keys = rec.keys() if len(rec) else np.zeros(0, str)
    return np.unique(keys).size == keys.size


def _match(new: HealthRecords, old: HealthRecords, new_keys: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The old row of each new row's port (where ``match``): by GUID and port as numbers where every row has a GUID,
    else by :meth:`~fabric_engine.health.records.HealthRecords.keys` (the same identities)."""
    if new.guid.size == old.guid.size and np.array_equal(new.guid, old.guid) and np.array_equal(new.port, old.port):
        return np.arange(len(new)), np.ones(len(new), bool)  # the same ports in the same order: every sweep's case
    if new_keys is None and (new.guid != 0).all() and (old.guid != 0).all():
        guids = np.unique(np.asarray(old.guid, np.uint64))
        ko, kn = _numbers(old.guid, old.port, guids), _numbers(new.guid, new.port, guids)
    else:
        kn = new.keys() if new_keys is None else new_keys
        ko = old.keys()
    order = np.argsort(ko, kind="stable")
    pos = np.minimum(np.searchsorted(ko[order], kn), ko.size - 1)
    src = order[pos]
    return src, (ko[src] == kn) & ((kn >= 0) if kn.dtype.kind == "i" else True)


def _newest(a: np.ndarray, old: np.ndarray, fill, match: np.ndarray, src: np.ndarray, same: bool) -> np.ndarray:
    """One field: ``a``'s given values, ``old``'s (rows ``src`` where ``match``) elsewhere."""
    given = ~np.isnan(a) if a.dtype.kind == "f" else a != fill
    if given.all() or not match.any():
        return a
    if same and old.dtype == a.dtype and not given.any():  # no port of ``new`` gives it: ``old``'s, shared
        return old
    keep_new = given | ~(match[:, None] if a.ndim == 2 else match)
    return np.where(keep_new, a, old if same else take_rows(old, src))


def combine(new: HealthRecords, old: HealthRecords | None, new_keys: np.ndarray | None = None) -> HealthRecords:
    """``old`` updated by ``new`` (one row per port each): ``new``'s given values win, ``old``'s fill the rest
    (field by field, as :func:`~fabric_engine.health.records.merge` does); ``new``'s rows first, then ``old``'s
    other ports. ``new_keys``: ``new.keys()`` when the caller has them."""
    if old is None or not len(old):
        return new
    if not len(new):
        return old
    if not _unique_ports(new):  # not one row per port: merged as the readers' rows are
        kn = new.keys() if new_keys is None else new_keys
        overlap = np.isin(old.keys(), kn)
        both = merge([new, _take(old, np.flatnonzero(overlap))])
        return merge([both, _take(old, np.flatnonzero(~overlap))])  # disjoint keys: only concatenated
    src, match = _match(new, old, new_keys)
    same = bool(match.all()) and src.size == len(old) and bool((src == np.arange(src.size)).all())
    data = {f: _newest(new.data[f], old.data[f], fill, match, src, same)  # one pass per field, all ports at once
            for f, (_dtype, _cols, fill) in FIELDS.items()}
    used = np.zeros(len(old), bool)
    used[src[match]] = True
    rest = np.flatnonzero(~used)
    if not rest.size:
        return HealthRecords(new.guid, new.name, new.port, data, new.source)
    return HealthRecords(np.concatenate([new.guid, old.guid[rest]]), np.concatenate([new.name, old.name[rest]]),
                         np.concatenate([new.port, old.port[rest]]),
                         {f: np.concatenate([v, take_rows(old.data[f], rest)]) for f, v in data.items()},
                         np.concatenate([new.source, old.source[rest]]))


@contextlib.contextmanager
def merge_lock(fabric_id: int) -> Iterator[None]:
    """Hold the fabric's merge lock: this process's, and Redis's when the cache is Redis (every process's)."""
    backend = caches[DEFAULT_CACHE_ALIAS]  # ``cache`` is a proxy of it
    with _lock:
        if not isinstance(backend, RedisCache):
            yield
            return
        key = backend.make_and_validate_key(_key(fabric_id, "health_lock"))
        client = backend._cache.get_client(key, write=True)  # the cache's own connection pool
        with client.lock(key, timeout=LOCK_TIMEOUT_S, blocking_timeout=LOCK_TIMEOUT_S):
            yield


def _counter_rows(rec: HealthRecords) -> np.ndarray:
    """Rows with counters and no BER of their own: those whose BER comes from deltas."""
    counted = np.zeros(len(rec), bool)
    for c in COUNTERS:
        given = ~np.isnan(rec[c])
        counted |= given.any(axis=1) if given.ndim == 2 else given
    return np.flatnonzero(counted & ~own_ber(rec))


def _with_deltas(rec: HealthRecords, base: dict) -> tuple[HealthRecords, np.ndarray]:
    """``rec`` with BER from the deltas to ``base`` (source -> :func:`counter_baseline`, updated in place) and the
    rows that got theirs so."""
    rows = _counter_rows(rec)
    if not rows.size:
        return rec, rows
    keys = (rec if rows.size == len(rec) else _take(rec, rows)).keys()  # the identities of those rows only
    sources, which = np.unique(rec.source[rows].astype(str), return_inverse=True)
    kinds = np.array([_RUN.sub("", x) for x in sources.tolist()], dtype=object)[which]  # per source, not port
    data = {f: np.array(v) if f in _DERIVED else v for f, v in rec.data.items()}
    out = HealthRecords(rec.guid, rec.name, rec.port, data, rec.source)
    for kind in np.unique(kinds).tolist():  # one pass per source (a sweep's is one), never per port
        sel = np.flatnonzero(kinds == kind)
        mine = rows[sel]
        part = rec if mine.size == len(rec) else _take(rec, mine)  # a sweep's rows: all of them, not copied
        prev = base.get(kind)
        first = prev is None  # the first reading of the source: no interval yet, its BER unknown
        got = ber_from_deltas(counter_baseline(_take(part, np.zeros(0, np.int64))) if first else prev, part,
                              after_keys=keys[sel])
        for f in _DERIVED:
            data[f][mine] = got[f]
        stuck = saturated(kind, part)  # a 16-bit SymbolErrorCounter at its top: that symbol BER is unknown
        if stuck.any():
            data["sym_ber"][mine[stuck]] = np.nan
        now = counter_baseline(part, keys[sel])
        if not first:  # ports of the source not in this reading keep their counters
            keep = ~np.isin(prev["keys"], now["keys"])
            now = {f: np.concatenate([now[f], prev[f][keep]]) for f in now}
        base.pop(kind, None)
        base[kind] = now  # the newest source last: the oldest go first past MAX_SOURCES
    for kind in list(base)[:-MAX_SOURCES]:
        del base[kind]
    return out, rows


def put(fabric_id: int, rec: HealthRecords) -> int:
    """Merge ``rec`` (one row per port, see :func:`combine`) into the fabric's readings, BER computed from the
    counter deltas where ``rec`` has none of its own; the ports kept."""
    if not _unique_ports(rec):  # one row per port, as ``combine`` takes them
        rec = merge([rec])
    with merge_lock(fabric_id):
        old = cache.get(_key(fabric_id, "health"))
        base = dict(cache.get(_key(fabric_id, "health_base")) or {})
        rec, derived = _with_deltas(rec, base)
        merged = combine(rec, old)
        if derived.size and old is not None and len(old):  # the computed BER and window replace older ones, unknown too
            for f in _DERIVED:  # ``rec``'s rows come first in ``merged``, in their order
                col = merged.data[f]
                if not col.flags.writeable:  # a column shared with ``old`` (read back as one row for all)
                    col = merged.data[f] = np.array(col, order="F" if col.ndim == 2 else "K")
                col[derived] = rec[f][derived]
        cache.set_many({_key(fabric_id, "health"): merged, _key(fabric_id, "health_v"): time.time_ns(),
                        **({_key(fabric_id, "health_base"): base} if derived.size else {})}, _TTL_S)
    return len(merged)


def put_log_downs(fabric_id: int, ev) -> int:
    """Add the port changes of ``ev`` (a :class:`~fabric_engine.health.opensm_log.LogEvidence`) to the fabric's
    log evidence (the newest :data:`MAX_LOG_DOWNS` kept); the changes kept."""
    with merge_lock(fabric_id):
        old = cache.get(_key(fabric_id, "log_downs")) or {f: np.zeros(0, dt) for f, dt in _LOG_FIELDS.items()}
        new = {f: np.concatenate([np.asarray(old[f], dt), np.asarray(getattr(ev, f), dt)])[-MAX_LOG_DOWNS:]
               for f, dt in _LOG_FIELDS.items()}
        cache.set_many({_key(fabric_id, "log_downs"): new, _key(fabric_id, "log_downs_v"): time.time_ns()}, _TTL_S)
    return int(new["t"].size)


def log_downs(fabric_id: int) -> tuple[int | None, dict[str, np.ndarray] | None]:
    """The fabric's log evidence: its version (changes with every :func:`put_log_downs`) and the arrays ``t``,
    ``guid``, ``port``, ``up``, ``exact`` (None: none). Fed whole to a down tracker
    (:func:`fabric_engine.health.opensm_log.feed`), what it already saw is left out."""
    v = cache.get(_key(fabric_id, "log_downs_v"))
    return v, (cache.get(_key(fabric_id, "log_downs")) if v is not None else None)


def version(fabric_id: int) -> int | None:
    """Changes whenever :func:`put` wrote (None: no readings)."""
    return cache.get(_key(fabric_id, "health_v"))


def read(fabric_id: int) -> HealthRecords | None:
    """The fabric's readings (None: none pushed or read yet)."""
    return cache.get(_key(fabric_id, "health"))


def forget(fabric_id: int) -> None:
    """Drop the fabric's readings (tests, fabric deletion)."""
    cache.delete_many([_key(fabric_id, p) for p in ("health", "health_v", "health_base", "log_downs", "log_downs_v")])


class LogDowns:
    """A down tracker's view of its fabric's log evidence (:func:`log_downs`): fed again only when it changed."""

    def __init__(self) -> None:
        self._seen: int | None = None

    def feed(self, fabric_id: int, tracker, tag_of=None) -> int:
        """Feed the fabric's log evidence to ``tracker`` (a :class:`~fabric_engine.health.downs.DownTracker`) if it
        changed since the last call; the port changes observed (what the tracker saw already is left out).
        ``tag_of``: as :func:`fabric_engine.health.opensm_log.feed` takes it."""
        v, ev = log_downs(fabric_id)
        if v is None or v == self._seen:
            return 0
        self._seen = v
        return feed(tracker, ev, tag_of)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Two columns hold the same values (floats bit for bit, NaN equal to NaN); broadcast ones by their one row."""
    if a is b:
        return True
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.ndim and a.shape[0] and a.strides[0] == 0 and b.strides[0] == 0:
        a, b = a[:1], b[:1]
    if a.dtype.kind == "f":
        bits = np.dtype(f"u{a.dtype.itemsize}")
        return bool(np.array_equal(np.ascontiguousarray(a).view(bits), np.ascontiguousarray(b).view(bits)))
    return bool(np.array_equal(a, b))


def _shared(new: HealthRecords | None, old: HealthRecords | None) -> HealthRecords | None:
    """``new`` with the columns (and port identities) equal to ``old``'s taken from ``old``: what did not change
    between two readings is one array, so the health publisher tells it by identity (``is``) instead of comparing
    200,000 values again at each grading (the cable inventory, the cable swaps)."""
    if new is None or old is None or len(new) != len(old):
        return new
    guid, name, port, source = (o if _same(n, o) else n for n, o in (
        (new.guid, old.guid), (new.name, old.name), (new.port, old.port), (new.source, old.source)))
    data = {f: old.data[f] if f in old.data and _same(col, old.data[f]) else col for f, col in new.data.items()}
    return HealthRecords(guid, name, port, data, source)


class Readings:
    """A source's view of its fabric's readings: re-read only when :func:`version` changed or the fabric did, and
    kept to the ports of that fabric (a node gone from the discovery drops out of the report). What is kept is
    compact (:func:`~fabric_engine.health.records.compact`: lanes no port has and columns alike for every port
    cost nothing) and shares the columns that did not change with the readings before (:func:`_shared`)."""

    def __init__(self) -> None:
        self._seen: tuple | None = None
        self._rec: HealthRecords | None = None

    def refresh(self, fabric_id: int, fabric) -> None:
        """Read the fabric's readings again if they or ``fabric`` changed since the last call (a thread's work)."""
        v = version(fabric_id)
        if self._seen is not None and self._seen[0] == v and self._seen[1] is fabric:
            return
        rec = read(fabric_id) if v is not None else None
        self._seen = (v, fabric)
        new = compact(match_ports(fabric, rec)[0]) if rec is not None and fabric is not None else None
        self._rec = _shared(new, self._rec)

    def records(self, now: float) -> HealthRecords | None:
        """The readings with every row timed ``now`` (None: none yet); the columns are those of the last read."""
        rec = self._rec
        if rec is None:
            return None
        t = np.broadcast_to(np.float64(now), (len(rec),))
        return HealthRecords(rec.guid, rec.name, rec.port, {**rec.data, "t": t}, rec.source)
