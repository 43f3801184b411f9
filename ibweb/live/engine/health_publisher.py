"""A fabric leader's link health: its source's readings each tick, graded into a report every few seconds.

Sources that read link health have a ``health()`` method (optional on
:class:`~ibweb.live.engine.sources.FabricSource`): the newest :class:`~fabric_engine.health.records.HealthRecords`
or None. Every tick the ports' state and ``LinkDownedCounter`` go to a
:class:`~fabric_engine.health.downs.DownTracker` (only the rows that changed, seen at the tick before with their
old values and at this one with the new, so a down's interval is one tick wide) and a changed module serial is a
cable swap. At most once per ``IBWEB_HEALTH_INTERVAL_S`` of the readings' time (grading 200,000 ports costs
about 40 ms) the readings are graded into a report (:mod:`ibweb.live.health.report`) and per-port series for
``/metrics``, stored for the fabric (:mod:`ibweb.runtime.health`), and the ports' health conditions are
judged (:mod:`fabric_engine.health.conditions`: high BER, module temperature and power, repeated downs, downs
longer than the job-killing time). Their alerts join every tick's ``state.alerts`` until the next grading, so the
feed, the history and :data:`~ibweb.live.signals.fabric_alerts` (the events) see them: the runner calls this
publisher before those. A failure here is logged and leaves the tick to the publishers after it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from django.conf import settings

from fabric_engine.health.conditions import HealthConditions, PortHealth
from fabric_engine.health.downs import DownTracker
from fabric_engine.health.records import HealthRecords
from fabric_engine.health.thresholds import load
from fabric_engine.topology import Fabric
from ibweb.live.engine.publishing import Tick, TopologyChange
from ibweb.live.health.report import build_report, grade_ports, node_indices, port_end, port_series
from ibweb.runtime import health as store

__all__ = ["HealthPublisher", "HealthKeeper", "MAX_SWAPS", "port_health"]

log = logging.getLogger("ibweb.live")

#: Most cable swaps a fabric's report keeps (the newest).
MAX_SWAPS = 100


def _changed(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """Rows whose value differs (NaN equal to NaN)."""
    diff = new != old
    if new.dtype.kind == "f":
        diff &= ~(np.isnan(new) & np.isnan(old))
    return diff


class HealthKeeper:
    """One fabric's downs and cable swaps over successive readings, and its report when asked."""

    def __init__(self) -> None:
        self.downs = DownTracker()
        self.swaps: list[dict] = []
        self.conditions = HealthConditions()
        self._last: HealthRecords | None = None

    def observe(self, rec: HealthRecords, t: float, fabric: Fabric) -> None:
        """Readings ``rec`` of the ports of ``fabric`` at ``t``."""
        last = self._last
        self._last = rec
        guid, port = rec.guid.astype(np.uint64), rec.port.astype(np.int64)
        up, ldc = rec["up"], rec["link_down"].astype(np.float64)
        same_rows = last is not None and len(last) == len(rec) and (
            last.guid is rec.guid or np.array_equal(last.guid, rec.guid)) and (
            last.port is rec.port or np.array_equal(last.port, rec.port))
        if not same_rows:
            self.downs.observe(t, guid, port, up, ldc)
            return
        t0 = float(last["t"][0]) if len(last) else t
        if last["up"] is not up or last["link_down"] is not rec["link_down"]:
            rows = np.flatnonzero(_changed(up, last["up"]) | _changed(rec["link_down"], last["link_down"]))
            if rows.size and t0 < t:  # seen as they were at the tick before, then as they are
                self.downs.observe(t0, guid[rows], port[rows], last["up"][rows],
                                   last["link_down"][rows].astype(np.float64))
            if rows.size:
                self.downs.observe(t, guid[rows], port[rows], up[rows], ldc[rows])
        if last["sn"] is not rec["sn"]:
            self._swapped(rec, last, t, fabric)

    def _swapped(self, rec: HealthRecords, last: HealthRecords, t: float, fabric: Fabric) -> None:
        new, old = rec["sn"], last["sn"]
        rows = np.flatnonzero((new != old) & (new != "") & (old != ""))
        if not rows.size:
            return
        nodes = node_indices(fabric, rec.guid[rows])
        for k, i in enumerate(rows[:MAX_SWAPS].tolist()):  # the swapped cable ends only
            self.swaps.append({**port_end(fabric, int(nodes[k]), int(rec.port[i])), "t": t,
                               "from": str(old[i]), "to": str(new[i])})
        del self.swaps[:-MAX_SWAPS]

    def report(self, rec: HealthRecords, fabric: Fabric, th, t: float) -> tuple[dict, dict, list[dict]]:
        """The report of ``rec`` graded by ``th`` (:func:`~ibweb.live.health.report.build_report`), its ports'
        series for ``/metrics`` (:func:`~ibweb.live.health.report.port_series`) and the health conditions' alerts
        (the open conditions and the downs newly proven longer than the job-killing time)."""
        graded = grade_ports(rec, th, self.downs)
        alerts = self.conditions.update(port_health(rec, fabric, th, graded), t)
        alerts += self.conditions.downs_long(self.downs)
        return (build_report(rec, fabric, th, self.downs, self.swaps, t, graded=graded),
                port_series(rec, fabric, graded), alerts)


def _limits(rec: HealthRecords, th, quantity: str) -> np.ndarray:
    """A module quantity's thresholds per port (the module's own, else the table's fallback), ``[n, 4]``."""
    return np.where(np.isnan(rec[f"{quantity}_th"]), th.module_fallback(quantity)[None, :], rec[f"{quantity}_th"])


def port_health(rec: HealthRecords, fabric: Fabric, th, graded: dict) -> PortHealth:
    """What :class:`~fabric_engine.health.conditions.HealthConditions` judges of ``rec`` graded (``graded``:
    :func:`~ibweb.live.health.report.grade_ports`), its ports named by the nodes of ``fabric``."""
    status, slots = graded["status"], graded["slot"]
    downs = np.full(len(rec), -1, np.int64)
    if status is not None:
        known = slots >= 0
        downs[known] = status["downs_24h"][slots[known]]
    return PortHealth(rec.guid.astype(np.uint64), rec.port.astype(np.int64), node_indices(fabric, rec.guid),
                      fabric.node_name, graded["ber"]["grade"], graded["raw"], rec["eff_ber"], rec["temp"],
                      _limits(rec, th, "temp"), rec["rx_power"], _limits(rec, th, "rx_power"), rec["tx_power"],
                      _limits(rec, th, "tx_power"), downs)


class HealthPublisher:
    """Grades one fabric's link health readings (a :class:`~ibweb.live.engine.publishing.Publisher`).

    ``source``: returns the runner's source now (the runner builds a new one after a hand-over).
    """

    def __init__(self, fabric_id: int, source: Callable[[], object], interval_s: float | None = None) -> None:
        self.fabric_id = fabric_id
        self._source = source
        self.interval_s = settings.IBWEB_HEALTH_INTERVAL_S if interval_s is None else float(interval_s)
        self._thresholds = None
        self.reset()

    async def topology_changed(self, change: TopologyChange) -> None:
        """Grade on the next tick: the report and the conditions' alerts name nodes of the new fabric (downs and
        conditions are kept, by port identity; alerts naming nodes by the old fabric's indices are dropped)."""
        self._graded_at = -np.inf
        self.alerts = []

    async def publish(self, version: str | None, tick: Tick) -> None:
        """Observe the source's readings of this tick; grade and store a report when one is due; add the health
        conditions' alerts of the newest grading to the tick's (its state is replaced: a source's own is kept)."""
        try:
            health = getattr(self._source(), "health", None)
            rec = health() if health is not None else None
            if rec is not None:
                await asyncio.to_thread(self._step, version, tick.fabric, rec)
        except Exception:  # the feed and the signals come after this publisher: they still get the tick
            log.exception("fabric %s: link health failed", self.fabric_id)
        if self.alerts:
            tick.state = replace(tick.state, alerts=[*tick.state.alerts, *self.alerts])

    def _step(self, version: str | None, fabric: Fabric, rec: HealthRecords) -> None:
        t = float(rec["t"][0]) if len(rec) and not np.isnan(rec["t"][0]) else time.time()
        self.keeper.observe(rec, t, fabric)
        if t - self._graded_at < self.interval_s:
            return
        self._graded_at = t
        if self._thresholds is None:
            self._thresholds = load()
        report, ports, self.alerts = self.keeper.report(rec, fabric, self._thresholds, t)
        store.write(self.fabric_id, version, report)
        store.write_ports(self.fabric_id, version, t, ports)

    def reset(self) -> None:
        """Forget the downs and swaps seen (a cold standby, should it lead again)."""
        self.keeper = HealthKeeper()
        self.alerts: list[dict] = []  # the newest grading's, added to every tick's until the next
        self._graded_at = -np.inf

    def pending(self) -> list[asyncio.Task]:
        return []
