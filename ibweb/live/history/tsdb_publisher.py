"""A fabric leader's per-port history: each sweep's port series into the time-series store (:mod:`ibweb.tsdb`).

At most every ``IBWEB_TSDB_INTERVAL_S`` seconds of the states' own time (a telemetry-fed fabric's state time moves
once per sweep, so at most once per sweep), :func:`port_sweep` turns the tick's per-directed-link arrays into one
row per cabled port, as ``fabric_engine.telemetry.prometheus`` rows are: directed link ``d``'s out port is the port
at its source, its transmit side ``d`` and its receive side the reverse link. Series: ``tx_bytes_per_s``,
``rx_bytes_per_s``, ``utilization``, ``xmit_wait_per_s`` (where the state estimates XmitWait), ``link_up`` (0 for
the ports of the tick's cables down) and, where the fabric's graded health of this record version is published
(:func:`ibweb.runtime.health.ports_for`), ``effective_ber`` and ``module_temperature_c``; where the source measures
counters (a telemetry-fed fabric's sweeps, ``Tick.measured``), every error counter's rate
``error_<counter>_per_s`` (:class:`ErrorRates`: the increase between two sweeps over their interval). Unmeasured
(stale) links are NaN, never zero; an emulated fabric has no error counters (not written). A port the writer wrote
before that the sweep's topology lacks (its cable cut) is written ``link_up`` 0 and nothing else (:class:`GonePorts`,
for :data:`GONE_KEEP_S` of sweep time): down, not unknown.

With each write the running jobs of the record's catalog are noted (:class:`JobNotes`, :mod:`.job_runs`): which
ports each job's traffic used, kept after it ended.

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

from fabric_engine.telemetry.counters import BASIC_BITS, COLUMN, DETAIL_BITS, ERROR_COUNTERS
from fabric_engine.topology import Fabric
from ibweb.live.engine.publishing import Tick, TopologyChange
from ibweb.tsdb.series import PORT_ID

__all__ = ["ErrorRates", "GONE_KEEP_S", "GonePorts", "JobNotes", "TsdbPublisher", "SweepWriter", "Sweep",
           "port_sweep"]

_ERROR_COLUMNS = np.array([COLUMN[c] for c in ERROR_COUNTERS])
#: The value each error counter stops at (all ones of its width): a latched counter's increase is unknown.
_LATCHED = np.array([float(2 ** {**BASIC_BITS, **DETAIL_BITS}[c] - 1) for c in ERROR_COUNTERS])
_ERROR_SERIES = [f"error_{c}_per_s" for c in ERROR_COUNTERS]

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
    measured: tuple[np.ndarray, float] | None = None

    @classmethod
    def of(cls, version: str | None, tick: Tick) -> Sweep:
        """The arrays of ``tick`` copied; its measured counters (``[2L, C]``, a new array per sweep that the source
        never changes) taken as they are."""
        s = tick.state
        copy = (lambda a: None if a is None else np.array(a, copy=True))
        return cls(float(s.t), float(s.tick_s), tick.fabric, version, copy(s.rate_gbps), copy(s.util),
                   copy(s.xmit_wait), copy(s.stale), list(tick.down or []), tick.measured)


class ErrorRates:
    """Every error counter's rate per out port from two successive measured sweeps (``Tick.measured``: counters
    ``[2L, C]`` of each directed link's out port, NaN where not read, and the sweep's time).

    A rate is the increase over the sweeps' interval; NaN where either sweep did not read the counter, where it
    went back (a reset) or stands at its width's maximum (latched: the increase is unknown), before a second sweep,
    and across a change of cabling (the rows are other ports). A sweep seen again gives the same rates."""

    def __init__(self) -> None:
        self._prev: tuple[np.ndarray, float, np.ndarray] | None = None  # counters, time, out-port identities
        self._last: tuple[float, dict[str, np.ndarray]] | None = None

    def rates(self, ports: np.ndarray, measured: tuple[np.ndarray, float] | None) -> dict[str, np.ndarray]:
        """``error_<counter>_per_s`` float64 ``[2L]`` each for out ports ``ports`` (none without counters)."""
        if measured is None:
            return {}
        totals, t = measured[0], float(measured[1])
        if self._last is not None and self._last[0] == t and self._prev is not None and \
                np.array_equal(self._prev[2], ports):
            return self._last[1]
        cur = np.asarray(totals, dtype=np.float64)[:, _ERROR_COLUMNS]
        out = {}
        prev, self._prev = self._prev, (cur, t, ports)
        if prev is not None and t > prev[1] and len(prev[2]) == len(ports) and np.array_equal(prev[2], ports):
            delta = cur - prev[0]
            bad = np.isnan(delta) | (delta < 0) | (cur >= _LATCHED) | (prev[0] >= _LATCHED)
            rate = np.where(bad, np.nan, delta / (t - prev[1]))
            out = {name: np.ascontiguousarray(rate[:, k]) for k, name in enumerate(_ERROR_SERIES)}
        self._last = (t, out)
        return out


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


def port_sweep(sweep: Sweep, health: dict | None = None,
               errors: ErrorRates | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """One row per directed link's out port: :data:`~ibweb.tsdb.series.PORT_ID` ``[2L]`` and the series
    (float64 ``[2L]`` each). ``health``: the fabric's graded ports (``ibweb.runtime.health`` ``health-ports``
    entry: ``node``, ``port``, ``effective``, ``temp``) on the same fabric, or None. ``errors``: the writer's
    error-rate state, fed the sweep's measured counters (None: no error series)."""
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
    if errors is not None:
        values.update(errors.rates(ports, sweep.measured))
    return ports, values


#: Seconds of sweep time a port absent from the topology is still written down (a cable cut for longer is forgotten).
GONE_KEEP_S = 86400.0


class GonePorts:
    """The ports a writer wrote and the sweep's topology lacks (a cable cut, a node gone), for :data:`GONE_KEEP_S`
    after they were last there: :meth:`add` appends them to a sweep with ``link_up`` 0 and every other series NaN.
    A sweep of the same ports as the last, with none gone, costs one comparison."""

    def __init__(self, keep_s: float = GONE_KEEP_S) -> None:
        self.keep_s = float(keep_s)
        self.keys = np.empty(0, dtype=PORT_ID)
        self.seen = np.empty(0)  # sweep time each port was last in a sweep
        self._steady: bytes | None = None  # the ports of the last sweep when none were gone

    def add(self, t: float, ports: np.ndarray,
            values: dict[str, np.ndarray]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``ports`` and ``values`` with the gone ports appended (the same arrays when none are)."""
        fingerprint = ports.tobytes()
        if fingerprint == self._steady:
            return ports, values
        every, inverse = np.unique(np.concatenate([self.keys, ports]), return_inverse=True)
        seen = np.full(len(every), -np.inf)
        seen[inverse[:len(self.keys)]] = self.seen
        seen[inverse[len(self.keys):]] = t
        present = np.zeros(len(every), dtype=bool)
        present[inverse[len(self.keys):]] = True
        kept = seen >= t - self.keep_s
        self.keys, self.seen = every[kept], seen[kept]
        gone = every[kept & ~present]
        self._steady = fingerprint if not len(gone) else None
        if not len(gone):
            return ports, values
        out = {name: np.concatenate([a, np.full(len(gone), np.nan)]) for name, a in values.items()}
        out["link_up"] = np.concatenate([values.get("link_up", np.ones(len(ports))), np.zeros(len(gone))])
        return np.concatenate([ports, gone]), out


def _ends(alert: dict) -> list[dict]:
    """Both ends of a ``link_down`` condition alert (``guids``, ``ports``), as ``{"guid", "port"}``."""
    if alert.get("kind") == "link_down" and "guids" in alert:
        return [{"guid": g, "port": p} for g, p in zip(alert["guids"], alert["ports"], strict=True)]
    return [alert] if "guid" in alert and "port" in alert else []


class SweepWriter:
    """Writes one fabric's sweeps to the store in a thread of its own, from a queue of at most ``capacity`` sweeps
    (full: the oldest is dropped, counted in ``dropped`` and logged)."""

    def __init__(self, fabric_id: int, slug: str, store: Callable[[], object], health: Callable[[Sweep], dict | None],
                 capacity: int, jobs: Callable[[Sweep], None] | None = None) -> None:
        self.fabric_id, self.slug = fabric_id, slug
        self._store, self._health, self._jobs = store, health, jobs
        self._queue: deque[Sweep] = deque()
        self.capacity = capacity
        self.dropped = self.written = self.failed = 0
        self.errors = ErrorRates()
        self.gone = GonePorts()
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
                ports, values = self.gone.add(sweep.t, *port_sweep(sweep, self._health(sweep), self.errors))
                self._store().write(self.fabric_id, sweep.t, ports, values)
                self.written += 1
            except Exception:
                self.failed += 1
                log.exception("fabric %s: per-port history of t=%.3f not written", self.slug, sweep.t)
            try:
                if self._jobs is not None:
                    self._jobs(sweep)
            except Exception:
                log.exception("fabric %s: job runs of t=%.3f not noted", self.slug, sweep.t)
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


#: Seconds of sweep time between two notes of the same job catalog's runs (a new catalog is noted at once).
JOB_NOTE_S = 60.0


class JobNotes:
    """Notes the running jobs of fabric ``row``'s record catalog in :mod:`.job_runs` (the out ports of the links each
    crosses), at most every :data:`JOB_NOTE_S` of sweep time and whenever the catalog's version changes."""

    def __init__(self, row, runs: Callable[[], object] | None = None) -> None:
        self.row = row
        self._runs = runs
        self._noted: tuple[str, float] | None = None  # catalog version, sweep time
        self._ports: tuple[str, list[tuple[str, str, np.ndarray]]] | None = None  # per catalog version

    def __call__(self, sweep: Sweep) -> None:
        from ibweb.runtime import record

        from .job_runs import catalog_ports, job_runs

        h = record.head_of(self.row)
        if h is None:
            return
        version = str(h["version"])
        if self._noted is not None and self._noted[0] == version and sweep.t < self._noted[1] + JOB_NOTE_S:
            return
        runs = (self._runs or job_runs)()
        if self._ports is None or self._ports[0] != version:
            catalog, f = record.jobs(self.row.pk, h) or [], record.fabric(self.row.pk, h)
            if f is None:
                return
            if self._ports is not None:  # the jobs of the catalog before ran until now (those ended too)
                runs.note(self.row.pk, sweep.t, self._ports[1])
            self._ports = (version, [(str(j["id"]), str(j.get("tenant") or ""), catalog_ports(f, j.get("links", ())))
                                     for j in catalog])  # one entry per running job
        runs.note(self.row.pk, sweep.t, self._ports[1], keep_s=settings.IBWEB_TSDB_RETENTION_DAYS * 86400.0)
        self._noted = (version, sweep.t)


class TsdbPublisher:
    """Writes a fabric's per-port series to the time-series store (a :class:`~ibweb.live.engine.publishing.
    Publisher`; the runner calls it only while it leads)."""

    def __init__(self, row, interval_s: float | None = None, store: Callable[[], object] | None = None,
                 job_runs: Callable[[], object] | None = None) -> None:
        from ibweb.tsdb.open import store as default_store

        self.interval_s = float(interval_s if interval_s is not None else settings.IBWEB_TSDB_INTERVAL_S)
        self.writer = SweepWriter(row.pk, row.slug, store or default_store, _health_of(row),
                                  int(getattr(settings, "IBWEB_TSDB_QUEUE", 6)), JobNotes(row, job_runs))
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
