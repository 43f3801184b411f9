"""Each fabric's link health in the shared cache: written by the fabric's leader
(:mod:`ibweb.live.engine.health_publisher`), read by any web process.

Two entries per fabric: ``ibweb:health:<fabric id>``, the newest report (:mod:`ibweb.live.health.report`), and
``ibweb:health-ports:<fabric id>``, every port's graded values for ``/metrics``: ``{"version", "t", "node"
(int32 node index on the fabric of record version ``version``), "port", "raw", "effective", "temp" (float64,
NaN: not read), "grade" (int8: -1 unknown, 0 normal, 1 warning, 2 error)}``.
"""

from __future__ import annotations

import numpy as np

from . import record
from .cache import shared_cache

__all__ = ["write", "read", "write_ports", "ports_for"]

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


def ports_for(row) -> dict | None:
    """The per-port entry of a fabric row while it belongs to its record's fabric (None otherwise)."""
    h = record.head_of(row)
    entry = shared_cache().get(_key(row.pk, "health-ports"))
    if h is None or entry is None or entry.get("version") != record.fabric_version(h):
        return None
    return entry
