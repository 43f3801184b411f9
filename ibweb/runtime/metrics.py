"""Per-port counters behind ``/metrics``: written by the fabric runner, read by any web process.

Emulated fabrics have no counters of their own: :class:`CounterRecorder` integrates the
engine's per-link rates into ever-growing counters (as a restarted exporter would, they
start from zero with a new fabric). Telemetry-fed fabrics hand their newest sweep's raw
counters. Either way the cache holds, per fabric, ``ibweb:metrics:<fabric id>``:
``{"t", "version", "rows", "down": [labels of the ports of cables down]}``, and the counters
(float64 ``[2L, C]``, one row per directed link's out port) in blocks of :data:`BLOCK_ROWS` rows
ordered by the port's node (``ibweb:metrics:<fabric id>:<block>``, each with its ``version``), so a
scrape of a part of the fabric (``/metrics?fabric=&part=``: a range of nodes) reads only the blocks
holding its ports, not the whole fabric's counters. An emulated fabric's blocks hold only the columns its
integration moves (``columns``, :data:`INTEGRATED`) and one row of the others' values (``fill``): 7.9 MB
written for 196,608 ports instead of 50 MB (:func:`read_totals` gives every column either way).
Written at most every ``min_interval_s``
seconds and at once when the record version changes. The topology the rows belong to is the
runtime record's (:mod:`ibweb.runtime.record`), stored once: ``version`` names the record version
whose fabric (:func:`~ibweb.runtime.record.fabric_version`) the directed links of the rows follow,
and :func:`metrics_for` serves the totals only with that fabric (a record version that changed
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
from fabric_engine.telemetry.counters import COLUMN, COLUMNS
from fabric_engine.telemetry.prometheus import down_ports
from fabric_engine.topology import Fabric

from . import record

__all__ = ["CounterRecorder", "metrics_entry", "metrics_for", "counters_layout", "down_for", "port_labels", "forget",
           "BLOCK_ROWS", "INTEGRATED"]

_TTL_S = 24 * 3600
#: Counter rows per cache entry: 4,096 ports, 0.75 MB (a 2,048-port scrape target reads one or two).
BLOCK_ROWS = 4096
#: The columns :meth:`CounterIntegrator.add <fabric_engine.telemetry.CounterIntegrator.add>` moves (a contiguous
#: range); every other column of an integrated fabric keeps its first value (zero or NaN) on every port.
INTEGRATED = slice(COLUMN["PortXmitData"], COLUMN["PortXmitWait"] + 1)


def _key(fabric_id: int) -> str:
    return f"ibweb:metrics:{fabric_id}"


def _block_key(fabric_id: int, block: int) -> str:
    return f"ibweb:metrics:{fabric_id}:{block}"


def node_order(f: Fabric) -> np.ndarray:
    """The counter rows (directed links) ordered by the node of their port, stably: how the blocks hold them."""
    return np.argsort(np.r_[np.asarray(f.a_node, np.int64), np.asarray(f.b_node, np.int64)], kind="stable")


class CounterRecorder:
    """Keeps one fabric's ``/metrics`` entry up to date; call :meth:`add` once per tick (cheap)."""

    def __init__(self, fabric_id: int, min_interval_s: float = 2.0) -> None:
        self.fabric_id = fabric_id
        self.min_interval_s = min_interval_s
        self._fabric: Fabric | None = None
        self._version: str | None = None
        self._acc: CounterIntegrator | None = None
        self._fill = np.zeros(len(COLUMNS))  # the integrator's first row: the columns it never moves
        self._written = 0.0

    def add(self, fabric: Fabric, state: FabricState, measured: tuple[np.ndarray, float] | None = None,
            version: str | None = None, down: list[dict] | None = None) -> None:
        """Count one tick of ``state`` on ``fabric``, the fabric of record version ``version`` (its base).

        ``measured``: raw ``(totals, t)`` instead of integrating the rates; ``down``: the ``link_down``
        condition alerts of the cables down (None: those among the state's alerts).
        """
        if fabric is not self._fabric:  # a new fabric (a reload or a new discovery) starts from zero
            self._fabric, self._acc, self._written = fabric, None, 0.0
            self._order = node_order(fabric)
        if version != self._version:  # rows of another record version: written at once
            self._version, self._written = version, 0.0
        if measured is None:
            if self._acc is None:
                self._acc = CounterIntegrator(fabric)
                self._fill = self._acc.totals[0].copy() if len(self._acc.totals) else np.zeros(len(COLUMNS))
            self._acc.add(state)
        now = time.monotonic()
        if self._written and now - self._written < self.min_interval_s:
            return
        if measured is not None:  # a source's counters: every column, ordered by node (a copy)
            totals, t = measured
            rows, compact = totals[self._order], {}
        else:  # integrated: only the columns that move (the others are ``fill`` everywhere)
            rows, t = np.take(self._acc.totals[:, INTEGRATED], self._order, axis=0), state.t
            compact = {"columns": INTEGRATED, "fill": self._fill}
        parts: dict[str, object] = {_block_key(self.fabric_id, k): {"version": version, "rows": rows[i:i + BLOCK_ROWS],
                                                                    **compact}
                                    for k, i in enumerate(range(0, len(rows), BLOCK_ROWS))}  # loop over blocks
        parts[_key(self.fabric_id)] = {"t": t, "version": version, "rows": len(rows),
                                       "down": down_ports((state.alerts or []) if down is None else down)}
        cache.set_many(parts, _TTL_S)
        self._written = now


def metrics_entry(fabric_id: int) -> dict | None:
    """The ``/metrics`` entry of a fabric (``{"t", "version", "rows", "down"}``), or None before its engine's first
    tick."""
    return cache.get(_key(fabric_id))


def counters_layout(row) -> tuple[Fabric, dict] | None:
    """``(fabric, labels)`` of a fabric row whose counters are published for its record's fabric, read without
    the counters (``labels``: :func:`port_labels` with the entry's ``version`` and ``t``); None otherwise."""
    h = record.head_of(row)
    entry = metrics_entry(row.pk)
    version = record.fabric_version(h) if h is not None else None
    if h is None or entry is None or entry.get("version") != version:
        return None
    f = record.fabric(row.pk, h)
    if f is None or entry.get("rows") != 2 * f.num_links:
        return None
    return f, {**port_labels(row.pk, version, f), "version": version, "t": entry["t"]}


def metrics_for(row) -> tuple[Fabric, dict, np.ndarray, float] | None:
    """``(fabric, labels, totals float64 [2L, C], t)`` of a fabric row: its counters on its record's fabric
    (:func:`counters_layout`, then :func:`read_totals` of every node).

    None before its engine's first tick, without a record, or when the counters belong to
    another record version than the newest (a topology change not yet counted): rows of
    another topology are never served against this one (a block of another version stays NaN).
    """
    layout = counters_layout(row)
    if layout is None:
        return None
    f, labels = layout
    return f, labels, read_totals(row, labels), labels["t"]


def read_totals(row, labels: dict, nodes: tuple[int, int] | None = None) -> np.ndarray:
    """The counter totals (float64 ``[2L, C]``) of a fabric row laid out as ``labels`` (:func:`counters_layout`).

    ``nodes``: ``(first, end)``; only the counters of the ports of nodes ``first <= n < end`` are read (the
    others NaN), from the blocks that hold them; None: every node. A block of another record version than
    ``labels``' stays NaN.
    """
    version, order, by_node = labels["version"], labels["order"], labels["order_node"]
    first, end = (0, len(order)) if nodes is None else tuple(int(np.searchsorted(by_node, n)) for n in nodes)
    blocks = range(first // BLOCK_ROWS, -(-end // BLOCK_ROWS))
    got = cache.get_many([_block_key(row.pk, k) for k in blocks])
    totals = np.full((len(order), len(COLUMNS)), np.nan)
    for k in blocks:  # loop over blocks
        block = got.get(_block_key(row.pk, k))
        if block is None or block.get("version") != version:
            continue
        at = k * BLOCK_ROWS
        lo, hi = max(first, at), min(end, at + len(block["rows"]))
        totals[order[lo:hi]] = _block_rows(block, lo - at, hi - at)
    return totals


def _block_rows(block: dict, lo: int, hi: int) -> np.ndarray:
    """Rows ``lo:hi`` of a counter block with every column (a compact block's other columns are its ``fill``)."""
    rows = block["rows"][lo:hi]
    if "columns" not in block:
        return rows
    full = np.empty((len(rows), len(COLUMNS)))
    full[:] = block["fill"]
    full[:, block["columns"]] = rows
    return full


def down_for(row) -> list[dict]:
    """The ports of a fabric's cables that are down (:func:`~fabric_engine.telemetry.prometheus.down_ports`)."""
    entry = metrics_entry(row.pk)
    return list(entry.get("down") or []) if entry is not None else []


_labels: LRUCache[tuple, dict] = LRUCache(maxsize=8)  # the newest record versions' labels, behind a lock
_labels_lock = threading.Lock()


def port_labels(row_pk: int, version: str, f: Fabric) -> dict:
    """What :func:`~fabric_engine.telemetry.prometheus.render_metrics` reads of a fabric, once per record version.

    ``{"nodes": {"name", "guid"}, "links": {"a_node", "a_port", "b_node", "b_port"}, "order", "order_node"}``
    (arrays; ``order``: :func:`node_order`, ``order_node``: the node of each row in that order).
    """
    key = (row_pk, version)
    with _labels_lock:
        hit = _labels.get(key)  # a hit becomes the most recently used
    if hit is not None:
        return hit
    labels = {"nodes": {"name": np.array([str(n) for n in f.node_name], dtype=object),
                        "guid": np.array([f"0x{g:016x}" for g in f.guid.tolist()], dtype=object)},
              "links": {"a_node": f.a_node, "a_port": f.a_port, "b_node": f.b_node, "b_port": f.b_port}}
    order = node_order(f)
    labels.update(order=order, order_node=np.r_[np.asarray(f.a_node, np.int64), np.asarray(f.b_node, np.int64)][order])
    with _labels_lock:
        _labels[key] = labels
    return labels


def forget(fabric_id: int) -> None:
    entry = metrics_entry(fabric_id)
    blocks = range(-(-int(entry.get("rows", 0)) // BLOCK_ROWS)) if entry else range(0)
    cache.delete_many([_key(fabric_id), *(_block_key(fabric_id, k) for k in blocks)])
