"""Per-port counters behind ``/metrics``: written by the fabric runner, read by any web process.

Emulated fabrics have no counters of their own: :class:`CounterRecorder` integrates the
engine's per-link rates into ever-growing counters (as a restarted exporter would, they
start from zero with a new fabric). Telemetry-fed fabrics hand their newest sweep's raw
counters. Either way one cache entry per fabric, ``ibweb:metrics:<fabric id>``:
``{"t", "version", "totals": float64 [2L, C], "down": [labels of the ports of cables down]}``,
written at most every ``min_interval_s`` seconds and at once when the record version changes.
The topology the rows belong to is the runtime record's (:mod:`ibweb.runtime.record`), stored
once: ``version`` names the record version whose fabric
(:func:`~ibweb.runtime.record.fabric_version`) the directed links of the rows follow, and
:func:`metrics_for` serves the totals only with that fabric (a record version that changed
the job catalog only keeps it).
"""

from __future__ import annotations

import threading
import time

import numpy as np
from cachetools import LRUCache
from django.core.cache import cache

from fabric_engine.state import FabricState
from fabric_engine.telemetry import CounterIntegrator
from fabric_engine.telemetry.prometheus import down_ports
from fabric_engine.topology import Fabric

from . import record

__all__ = ["CounterRecorder", "metrics_entry", "metrics_for", "down_for", "port_labels", "forget"]

_TTL_S = 24 * 3600


def _key(fabric_id: int) -> str:
    return f"ibweb:metrics:{fabric_id}"


class CounterRecorder:
    """Keeps one fabric's ``/metrics`` entry up to date; call :meth:`add` once per tick (cheap)."""

    def __init__(self, fabric_id: int, min_interval_s: float = 2.0) -> None:
        self.fabric_id = fabric_id
        self.min_interval_s = min_interval_s
        self._fabric: Fabric | None = None
        self._version: str | None = None
        self._acc: CounterIntegrator | None = None
        self._written = 0.0

    def add(self, fabric: Fabric, state: FabricState, measured: tuple[np.ndarray, float] | None = None,
            version: str | None = None, down: list[dict] | None = None) -> None:
        """Count one tick of ``state`` on ``fabric``, the fabric of record version ``version`` (its base).

        ``measured``: raw ``(totals, t)`` instead of integrating the rates; ``down``: the ``link_down``
        condition alerts of the cables down (None: those among the state's alerts).
        """
        if fabric is not self._fabric:  # a new fabric (a reload or a new discovery) starts from zero
            self._fabric, self._acc, self._written = fabric, None, 0.0
        if version != self._version:  # rows of another record version: written at once
            self._version, self._written = version, 0.0
        if measured is None:
            if self._acc is None:
                self._acc = CounterIntegrator(fabric)
            self._acc.add(state)
        now = time.monotonic()
        if self._written and now - self._written < self.min_interval_s:
            return
        totals, t = measured if measured is not None else (self._acc.totals.copy(), state.t)
        cache.set(_key(self.fabric_id), {"t": t, "version": version, "totals": totals,
                                         "down": down_ports((state.alerts or []) if down is None else down)}, _TTL_S)
        self._written = now


def metrics_entry(fabric_id: int) -> dict | None:
    """The ``/metrics`` entry of a fabric (``{"t", "version", "totals"}``), or None before its engine's first tick."""
    return cache.get(_key(fabric_id))


def metrics_for(row) -> tuple[Fabric, dict, np.ndarray, float] | None:
    """``(fabric, labels, totals float64 [2L, C], t)`` of a fabric row: its counters on its record's fabric.

    ``labels``: the fabric as :func:`~fabric_engine.telemetry.prometheus.render_metrics` reads it
    (:func:`port_labels`).

    None before its engine's first tick, without a record, or when the counters belong to
    another record version than the newest (a topology change not yet counted): rows of
    another topology are never served against this one.
    """
    h = record.head_of(row)
    entry = metrics_entry(row.pk)
    if h is None or entry is None or entry.get("version") != record.fabric_version(h):
        return None
    f = record.fabric(row.pk, h)
    if f is None or len(entry["totals"]) != 2 * f.num_links:
        return None
    return f, port_labels(row.pk, record.fabric_version(h), f), entry["totals"], entry["t"]


def down_for(row) -> list[dict]:
    """The ports of a fabric's cables that are down (:func:`~fabric_engine.telemetry.prometheus.down_ports`)."""
    entry = metrics_entry(row.pk)
    return list(entry.get("down") or []) if entry is not None else []


_labels: LRUCache[tuple, dict] = LRUCache(maxsize=8)  # the newest record versions' labels, behind a lock
_labels_lock = threading.Lock()


def port_labels(row_pk: int, version: str, f: Fabric) -> dict:
    """What :func:`~fabric_engine.telemetry.prometheus.render_metrics` reads of a fabric, once per record version.

    ``{"nodes": {"name", "guid"}, "links": {"a_node", "a_port", "b_node", "b_port"}}`` (arrays).
    """
    key = (row_pk, version)
    with _labels_lock:
        hit = _labels.get(key)  # a hit becomes the most recently used
    if hit is not None:
        return hit
    labels = {"nodes": {"name": np.array([str(n) for n in f.node_name], dtype=object),
                        "guid": np.array([f"0x{g:016x}" for g in f.guid.tolist()], dtype=object)},
              "links": {"a_node": f.a_node, "a_port": f.a_port, "b_node": f.b_node, "b_port": f.b_port}}
    with _labels_lock:
        _labels[key] = labels
    return labels


def forget(fabric_id: int) -> None:
    cache.delete(_key(fabric_id))
