"""A fabric leader's link health: its source's readings each tick, graded into a report every few seconds.

Sources that read link health have a ``health()`` method (optional on
:class:`~ibweb.live.engine.sources.FabricSource`): the newest :class:`~fabric_engine.health.records.HealthRecords`
or None. Every tick the ports' state and ``LinkDownedCounter`` go to a
:class:`~fabric_engine.health.downs.DownTracker` (only the rows that changed, seen at the tick before with their
old values and at this one with the new, so a down's interval is one tick wide) and a changed module serial is a
cable swap. At most once per ``IBWEB_HEALTH_INTERVAL_S`` of the readings' time (grading 200,000 ports costs
about 40 ms) the readings are graded into a report (:mod:`ibweb.live.health.report`) and per-port series for
``/metrics``, stored for the fabric (:mod:`ibweb.runtime.health`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import numpy as np
from django.conf import settings

from fabric_engine.health.downs import DownTracker
from fabric_engine.health.records import HealthRecords
from fabric_engine.health.thresholds import load
from fabric_engine.topology import Fabric
from ibweb.live.engine.publishing import Tick, TopologyChange
from ibweb.live.health.report import build_report, grade_ports, node_indices, port_end, port_series
from ibweb.runtime import health as store

__all__ = ["HealthPublisher", "HealthKeeper", "MAX_SWAPS"]

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

    def report(self, rec: HealthRecords, fabric: Fabric, th, t: float) -> tuple[dict, dict]:
        """The report of ``rec`` graded by ``th`` (:func:`~ibweb.live.health.report.build_report`) and its ports'
        series for ``/metrics`` (:func:`~ibweb.live.health.report.port_series`)."""
        graded = grade_ports(rec, th, self.downs)
        return build_report(rec, fabric, th, self.downs, self.swaps, t, graded=graded), port_series(rec, fabric, graded)


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
        """Grade on the next tick: the report names nodes of the new fabric (downs are kept, by port identity)."""
        self._graded_at = -np.inf

    async def publish(self, version: str | None, tick: Tick) -> None:
        """Observe the source's readings of this tick; grade and store a report when one is due."""
        health = getattr(self._source(), "health", None)
        rec = health() if health is not None else None
        if rec is not None:
            await asyncio.to_thread(self._step, version, tick.fabric, rec)

    def _step(self, version: str | None, fabric: Fabric, rec: HealthRecords) -> None:
        t = float(rec["t"][0]) if len(rec) and not np.isnan(rec["t"][0]) else time.time()
        self.keeper.observe(rec, t, fabric)
        if t - self._graded_at < self.interval_s:
            return
        self._graded_at = t
        if self._thresholds is None:
            self._thresholds = load()
        report, ports = self.keeper.report(rec, fabric, self._thresholds, t)
        store.write(self.fabric_id, version, report)
        store.write_ports(self.fabric_id, version, t, ports)

    def reset(self) -> None:
        """Forget the downs and swaps seen (a cold standby, should it lead again)."""
        self.keeper = HealthKeeper()
        self._graded_at = -np.inf

    def pending(self) -> list[asyncio.Task]:
        return []
