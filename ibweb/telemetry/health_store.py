"""The newest link health readings of a telemetry-fed fabric, per port, in the cache (issue 37).

Pushed captures and the collector's ``perfquery -T`` add rows (already matched to the fabric's ports,
:mod:`.health_ports`); rows of the same port identity merge field by field, the newest given value winning
(:func:`~fabric_engine.health.records.merge`: a port's BER from ``mlxlink`` and its module from
``ibdiagnet2.cables`` meet). At most one row per port of the fabric is kept, for :data:`_TTL_S` after the last
write. Keys (under ``ibweb:telemetry:<fabric id>:``): ``health`` (the :class:`HealthRecords`) and
``health_v`` (a number written with it, so a reader polls a few bytes each tick).
"""

from __future__ import annotations

import threading
import time

import numpy as np
from django.core.cache import cache

from fabric_engine.health.records import HealthRecords, merge

from .health_ports import match_ports

__all__ = ["combine", "put", "read", "version", "forget", "Readings"]

_TTL_S = 24 * 3600
_lock = threading.Lock()


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:telemetry:{fabric_id}:{part}"


def _take(rec: HealthRecords, rows: np.ndarray) -> HealthRecords:
    return HealthRecords(rec.guid[rows], rec.name[rows], rec.port[rows], {f: v[rows] for f, v in rec.data.items()},
                         rec.source[rows])


def combine(new: HealthRecords, old: HealthRecords | None) -> HealthRecords:
    """``old`` updated by ``new`` (one row per port each): ``new``'s given values win, ``old``'s fill the rest."""
    if old is None or not len(old):
        return new
    if not len(new):
        return old
    overlap = np.isin(old.keys(), new.keys())
    both = merge([new, _take(old, np.flatnonzero(overlap))])
    return merge([both, _take(old, np.flatnonzero(~overlap))])  # disjoint keys: only concatenated


def put(fabric_id: int, rec: HealthRecords) -> int:
    """Merge ``rec`` (one row per port, see :func:`combine`) into the fabric's readings; the ports kept."""
    with _lock:
        merged = combine(rec, cache.get(_key(fabric_id, "health")))
        cache.set_many({_key(fabric_id, "health"): merged, _key(fabric_id, "health_v"): time.time_ns()}, _TTL_S)
    return len(merged)


def version(fabric_id: int) -> int | None:
    """Changes whenever :func:`put` wrote (None: no readings)."""
    return cache.get(_key(fabric_id, "health_v"))


def read(fabric_id: int) -> HealthRecords | None:
    """The fabric's readings (None: none pushed or read yet)."""
    return cache.get(_key(fabric_id, "health"))


def forget(fabric_id: int) -> None:
    """Drop the fabric's readings (tests, fabric deletion)."""
    cache.delete_many([_key(fabric_id, "health"), _key(fabric_id, "health_v")])


class Readings:
    """A source's view of its fabric's readings: re-read only when :func:`version` changed or the fabric did, and
    kept to the ports of that fabric (a node gone from the discovery drops out of the report)."""

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
        self._rec = match_ports(fabric, rec)[0] if rec is not None and fabric is not None else None

    def records(self, now: float) -> HealthRecords | None:
        """The readings with every row timed ``now`` (None: none yet); the columns are those of the last read."""
        rec = self._rec
        if rec is None:
            return None
        t = np.broadcast_to(np.float64(now), (len(rec),))
        return HealthRecords(rec.guid, rec.name, rec.port, {**rec.data, "t": t}, rec.source)
