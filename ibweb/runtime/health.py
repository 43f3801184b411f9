"""Each fabric's link health in the shared cache: written by the fabric's leader
(:mod:`ibweb.live.engine.health_publisher`), read by any web process.

Four entries per fabric: ``ibweb:health:<fabric id>``, the newest report (:mod:`ibweb.live.health.report`), and
``ibweb:health-ports:<fabric id>``, every port's graded values for ``/metrics``: ``{"version", "t", "node"
(int32 node index on the fabric of record version ``version``), "port", "raw", "effective", "temp" (float64,
NaN: not read), "grade" (int8: -1 unknown, 0 normal, 1 warning, 2 error)}``; ``ibweb:health-trend:<fabric id>``,
the raw BER trend of the ports ever graded warning or error (:mod:`ibweb.live.health.trend`, keyed by GUID and
port); ``ibweb:health-cables:<fabric id>``, the inventory of every cable end read (:mod:`ibweb.live.health.cables`,
rewritten only when it or the record version changes).
"""

from __future__ import annotations

import numpy as np

from . import record
from .cache import shared_cache

__all__ = ["write", "read", "write_ports", "ports_for", "write_trend", "trend_of", "write_cables", "cables_for"]

_TTL_S = 24 * 3600


def _key(fabric_id: int, part: str = "health") -> str:
    return f"ibweb:{part}:{fabric_id}"


def write(fabric_id: int, version: str | None, report: dict) -> None:
    """Store ``report`` of ``fabric_id``, graded on the fabric of record version ``version``."""
    shared_cache().set(_key(fabric_id), {**report, "version": version}, timeout=_TTL_S)


def read(fabric_id: int) -> dict | None:
    """The newest report of ``fabric_id`` as :func:`write` stored it (None: none graded yet)."""
    return shared_cache().get(_key(fabric_id))


def write_ports(fabric_id: int, version: str | None, t: float, ports: dict[str, np.ndarray]) -> None:
    """Store every port's graded values (the module docstring's fields but ``version`` and ``t``)."""
    shared_cache().set(_key(fabric_id, "health-ports"), {**ports, "version": version, "t": t}, timeout=_TTL_S)


def _of_record(row, kind: str) -> dict | None:
    """The ``kind`` entry of a fabric row while it belongs to its record's fabric (None otherwise)."""
    h = record.head_of(row)
    entry = shared_cache().get(_key(row.pk, kind))
    if h is None or entry is None or entry.get("version") != record.fabric_version(h):
        return None
    return entry


def ports_for(row) -> dict | None:
    """The per-port entry of a fabric row while it belongs to its record's fabric (None otherwise)."""
    return _of_record(row, "health-ports")


def write_trend(fabric_id: int, trend: dict) -> None:
    """Store the raw BER trend of the ports a fabric's leader tracks (:meth:`ibweb.live.health.trend.BerTrend.
    snapshot`); keyed by port identity, so valid across record versions."""
    shared_cache().set(_key(fabric_id, "health-trend"), trend, timeout=_TTL_S)


def trend_of(fabric_id: int) -> dict | None:
    """The newest trend :func:`write_trend` stored for ``fabric_id`` (None: none yet)."""
    return shared_cache().get(_key(fabric_id, "health-trend"))


def write_cables(fabric_id: int, version: str | None, t: float, cables: dict) -> None:
    """Store the cable inventory (:func:`ibweb.live.health.cables.inventory`) read at ``t`` on the fabric of
    record version ``version``."""
    shared_cache().set(_key(fabric_id, "health-cables"), {**cables, "version": version, "t": t}, timeout=_TTL_S)


def cables_for(row) -> dict | None:
    """The cable inventory of a fabric row while it belongs to its record's fabric (None otherwise)."""
    return _of_record(row, "health-cables")
