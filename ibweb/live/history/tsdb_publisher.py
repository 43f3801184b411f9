"""A fabric leader's per-port history: each sweep's port series into the time-series store (:mod:`ibweb.tsdb`).

At most every ``IBWEB_TSDB_INTERVAL_S`` seconds of the states' own time (a telemetry-fed fabric's state time moves
once per sweep, so at most once per sweep), :func:`port_sweep` turns the tick's per-directed-link arrays into one
row per cabled port, as ``fabric_engine.telemetry.prometheus`` rows are: directed link ``d``'s out port is the port
at its source, its transmit side ``d`` and its receive side the reverse link. Series: ``tx_bytes_per_s``,
``rx_bytes_per_s``, ``utilization``, ``xmit_wait_per_s`` (where the state estimates XmitWait), ``link_up`` (0 for
the ports of the tick's cables down) and, where the fabric's graded health of this record version is published
(:func:`ibweb.runtime.health.ports_for`), ``effective_ber`` and ``module_temperature_c``. Unmeasured (stale) links
are NaN, never zero.

The tick thread only copies the arrays it needs and queues them; :class:`SweepWriter`, one thread per fabric,
composes and writes (the store's write costs tens to hundreds of ms at 32,768 GPUs). Its queue is bounded: when the
store falls behind the oldest queued sweep is dropped, counted (``dropped``) and logged.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from fabric_engine.topology import Fabric
from ibweb.live.engine.publishing import Tick, TopologyChange
from ibweb.tsdb.series import PORT_ID

__all__ = ["TsdbPublisher", "SweepWriter", "Sweep", "port_sweep"]

log = logging.getLogger("ibweb.live")


@dataclass(frozen=True, eq=False)
class Sweep:
    """What one write needs of a tick (arrays copied on the tick's thread)."""

    t: float
    tick_s: float
    fabric: Fabric
    version: str | None
    rate_gbps: np.ndarray
    util: np.ndarray
    xmit_wait: np.ndarray | None
    stale: np.ndarray | None
    down: list[dict]

    @classmethod
    def of(cls, version: str | None, tick: Tick) -> Sweep:
        s = tick.state
        copy = (lambda a: None if a is None else np.array(a, copy=True))
        return cls(float(s.t), float(s.tick_s), tick.fabric, version, copy(s.rate_gbps), copy(s.util),
                   copy(s.xmit_wait), copy(s.stale), list(tick.down or []))


def _out_links(f: Fabric, nodes: np.ndarray, ports: np.ndarray) -> np.ndarray:
    """Directed link leaving port ``ports[k]`` of node ``nodes[k]``, -1 where there is none (uncabled, out of range)."""
    nodes, ports = np.asarray(nodes, dtype=np.int64), np.asarray(ports, dtype=np.int64)
    ok = (nodes >= 0) & (nodes < f.num_nodes)
    ok[ok] = (ports[ok] >= 1) & (ports[ok] <= f.nports[nodes[ok]])
    out = np.full(len(nodes), -1, dtype=np.int64)
    out[ok] = f.port_out_link[f.slot(nodes[ok], ports[ok])]
    return out


def _node_of(f: Fabric, guid) -> int:
    """Node index of a GUID (``0x`` text or int), -1 when not in ``f``."""
    try:
        return int(f.node(int(guid, 16) if isinstance(guid, str) else int(guid)))
    except (KeyError, ValueError, OverflowError):
        return -1


def port_sweep(sweep: Sweep, health: dict | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """One row per directed link's out port: :data:`~ibweb.tsdb.series.PORT_ID` ``[2L]`` and the series
    (float64 ``[2L]`` each). ``health``: the fabric's graded ports (``ibweb.runtime.health`` ``health-ports``
    entry: ``node``, ``port``, ``effective``, ``temp``) on the same fabric, or None."""
    f = sweep.fabric
    n = 2 * f.num_links
    ports = np.empty(n, dtype=PORT_ID)
    ports["guid"], ports["port"] = f.guid[f.dl_src], f.dl_src_port
    rev = f.reverse(np.arange(n))
    tx = sweep.rate_gbps.astype(np.float64) * (1e9 / 8)
    util = sweep.util.astype(np.float64)
    if sweep.stale is not None:
        tx[sweep.stale], util[sweep.stale] = np.nan, np.nan
    values = {"tx_bytes_per_s": tx, "rx_bytes_per_s": tx[rev], "utilization": util}
    if sweep.xmit_wait is not None:
        wait = sweep.xmit_wait.astype(np.float64) / max(sweep.tick_s, 1e-9)
        if sweep.stale is not None:
            wait[sweep.stale] = np.nan
        values["xmit_wait_per_s"] = wait
    up = np.ones(n)
    if sweep.down:
        ends = [p for a in sweep.down for p in _ends(a)]  # the few cables down
        rows = _out_links(f, np.array([_node_of(f, p["guid"]) for p in ends], dtype=np.int64),
                          np.array([int(p["port"]) for p in ends], dtype=np.int64))
        up[rows[rows >= 0]] = 0.0
    values["link_up"] = up
    if health is not None and len(health.get("node", ())):
        rows = _out_links(f, health["node"], health["port"])
        hit = rows >= 0
        for key, name in (("effective", "effective_ber"), ("temp", "module_temperature_c")):
            column = np.full(n, np.nan)
            column[rows[hit]] = np.asarray(health[key], dtype=np.float64)[hit]
            values[name] = column
    return ports, values


def _ends(alert: dict) -> list[dict]:
    """Both ends of a ``link_down`` condition alert (``guids``, ``ports``), as ``{"guid", "port"}``."""
    if alert.get("kind") == "link_down" and "guids" in alert:
        return [{"guid": g, "port": p} for g, p in zip(alert["guids"], alert["ports"], strict=True)]
    return [alert] if "guid" in alert and "port" in alert else []


class SweepWriter:
    """Writes one fabric's sweeps to the store in a thread of its own, from a queue of at most ``capacity`` sweeps
    (full: the oldest is dropped, counted in ``dropped`` and logged)."""

    def __init__(self, fabric_id: int, slug: str, store: Callable[[], object], health: Callable[[Sweep], dict | None],
                 capacity: int) -> None:
        self.fabric_id, self.slug = fabric_id, slug
        self._store, self._health = store, health
        self._queue: deque[Sweep] = deque()
        self.capacity = capacity
        self.dropped = self.written = self.failed = 0
        self._cond = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None

    def put(self, sweep: Sweep) -> None:
        """Queue ``sweep`` (never blocks)."""
        with self._cond:
            if len(self._queue) >= self.capacity:
                self._queue.popleft()
                self.dropped += 1
                log.warning("fabric %s: per-port history behind, oldest queued sweep dropped (%d so far)",
                            self.slug, self.dropped)
            self._queue.append(sweep)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=f"tsdb-{self.slug}", daemon=True)
                self._thread.start()
            self._cond.notify()

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until every queued sweep is written (True) or ``timeout`` s passed (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._cond.wait_for(lambda: self._queue, timeout=60):
                    self._thread = None
                    return
                sweep, self._busy = self._queue.popleft(), True
            try:
                ports, values = port_sweep(sweep, self._health(sweep))
                self._store().write(self.fabric_id, sweep.t, ports, values)
                self.written += 1
            except Exception:
                self.failed += 1
                log.exception("fabric %s: per-port history of t=%.3f not written", self.slug, sweep.t)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()


def _health_of(row) -> Callable[[Sweep], dict | None]:
    def read(sweep: Sweep) -> dict | None:
        from ibweb.runtime import health

        entry = health.ports_for(row)
        return entry if entry is not None and entry.get("version") == sweep.version else None
    return read


class TsdbPublisher:
    """Writes a fabric's per-port series to the time-series store (a :class:`~ibweb.live.engine.publishing.
    Publisher`; the runner calls it only while it leads)."""

    def __init__(self, row, interval_s: float | None = None, store: Callable[[], object] | None = None) -> None:
        from ibweb.tsdb.open import store as default_store

        self.interval_s = float(interval_s if interval_s is not None else settings.IBWEB_TSDB_INTERVAL_S)
        self.writer = SweepWriter(row.pk, row.slug, store or default_store, _health_of(row),
                                  int(getattr(settings, "IBWEB_TSDB_QUEUE", 6)))
        self._last = -math.inf

    async def topology_changed(self, change: TopologyChange) -> None:
        """Nothing: each sweep is written by port identity."""

    async def publish(self, version: str | None, tick: Tick) -> None:
        """Queue the tick's port series when ``interval_s`` has passed since the last one written."""
        t = float(tick.state.t)
        if not math.isfinite(t) or t < self._last + self.interval_s - 1e-6:
            return
        self._last = t
        self.writer.put(Sweep.of(version, tick))

    def reset(self) -> None:
        """Write the next tick (a new leader)."""
        self._last = -math.inf

    def pending(self) -> list[asyncio.Task]:
        return []
