"""A fabric leader's link health: its source's readings each tick, graded into a report every few seconds.

Sources that read link health have a ``health()`` method (optional on
:class:`~ibweb.live.engine.sources.FabricSource`): the newest :class:`~fabric_engine.health.records.HealthRecords`
or None. Every tick the ports' state and ``LinkDownedCounter`` go to a
:class:`~fabric_engine.health.downs.DownTracker` (only the rows that changed, seen at the tick before with their
old values and at this one with the new, so a down's interval is one tick wide) and a changed module serial is a
cable swap. A telemetry-fed source's sweeps feed it too (:mod:`ibweb.live.health.swept`: the discovery's cabled
ports up, the ends of its cables down down, at the sweep's time, ``totals["sweep_age_s"]`` before the tick's), for
the ports whose readings do not give their state: a cut cable is a down whose interval is one sweep wide.
Each new down keeps the jobs on its port at that moment (:mod:`fabric_engine.health.down_jobs`, from the runtime
record's job catalog of the fabric before this tick: the twin's attribution on a telemetry-fed fabric, the
emulator's paths on an emulated one). At most once per ``IBWEB_HEALTH_INTERVAL_S`` of the readings' time (grading
196,608 ports: about 45 ms CPU emulated, 85 ms telemetry-fed with 6,000 conditions open, ``tests/bench/
bench_health_sweep.py`` on 2 shared cores) the readings are graded into a report (:mod:`ibweb.live.health.report`) and
per-port series for ``/metrics``, stored for the fabric (:mod:`ibweb.runtime.health`), and the ports' health
conditions are judged (:mod:`fabric_engine.health.conditions`: high BER, module temperature and power, repeated
downs, downs longer than the job-killing time ``IBWEB_HEALTH_JOB_KILLING_S``, default 7 s; and one ``cable_swap``
per swap since the last grading). Their alerts join every tick's ``state.alerts`` until the next grading, so the
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

from fabric_engine.health.conditions import HealthConditions, PortHealth, cable_swap_alerts
from fabric_engine.health.down_jobs import DownJobs
from fabric_engine.health.downs import DownsConfig, DownTracker
from fabric_engine.health.grade import module_limits
from fabric_engine.health.records import HealthRecords
from fabric_engine.health.thresholds import load
from fabric_engine.topology import Fabric
from ibweb.live.engine.publishing import Tick, TopologyChange
from ibweb.live.health.keep import keep as keep_trend_and_cables
from ibweb.live.health.report import build_report, grade_ports, node_indices, port_end, port_series
from ibweb.live.health.swept import SweptPorts, read_by, swept_ports, with_swept
from ibweb.runtime import health as store
from ibweb.runtime import record

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
    """One fabric's downs (with the jobs on each port as it went down) and cable swaps over successive readings and
    sweeps, and its report when asked. ``critical_s``: the job-killing time (default 7 s)."""

    def __init__(self, critical_s: float | None = None) -> None:
        self.downs = DownTracker(DownsConfig() if critical_s is None else DownsConfig(critical_s=float(critical_s)))
        self.swaps: list[dict] = []
        self.conditions = HealthConditions()
        self.jobs = DownJobs()
        self._last: HealthRecords | None = None
        self._new_swaps: list[dict] = []  # swaps since the last grading: each one cable_swap alert
        self.swept: SweptPorts | None = None  # the port state of the newest sweep (telemetry-fed fabrics)
        self._swept_key: tuple | None = None
        self._sweep_t: float | None = None

    def set_catalog(self, fabric: Fabric, catalog: list[dict] | None) -> None:
        """The job catalog of ``fabric`` (the runtime record's): the jobs later downs are attributed to."""
        self.jobs.set_catalog(fabric, catalog)

    def _observe(self, t: float, guid: np.ndarray, port: np.ndarray, up: np.ndarray, ldc: np.ndarray) -> None:
        """Observe rows at ``t``, each new down tagged with the jobs on its port now; rows already observed later
        than ``t`` (by the other feed) are left out."""
        if not guid.size:
            return
        late = self.downs.seen(guid, port)[1] > t
        if late.any():
            keep = ~late
            guid, port, up, ldc = guid[keep], port[keep], up[keep], ldc[keep]
        self.downs.observe(t, guid, port, up, ldc, tag=lambda i: self.jobs.tag(guid[i], port[i]))

    def _feed(self, old: tuple | None, new: tuple, t0: float | None, t: float) -> None:
        """Rows ``new`` (guid, port, up, LinkDownedCounter) at ``t`` after ``old`` at ``t0``: only the rows that
        changed when they are the same ports, each seen as it was at ``t0`` and then as it is, so a down's interval
        is ``t0`` .. ``t`` wide."""
        if old is None or t0 is None:
            self._observe(t, *new)
            return
        same = old[0] is new[0] or (old[0].size == new[0].size and np.array_equal(old[0], new[0])
                                    and np.array_equal(old[1], new[1]))
        if same:
            rows = np.flatnonzero(_changed(new[2], old[2]) | _changed(new[3], old[3]))
            old, new = tuple(c[rows] for c in old), tuple(c[rows] for c in new)
        if t0 < t:  # seen as they were at the time before, then as they are
            self._observe(t0, *old)
        self._observe(max(t, t0), *new)

    def observe(self, rec: HealthRecords, t: float, fabric: Fabric) -> None:
        """Readings ``rec`` of the ports of ``fabric`` at ``t``."""
        last = self._last
        self._last = rec
        new = (rec.guid.astype(np.uint64, copy=False), rec.port.astype(np.int64), rec["up"],
               rec["link_down"].astype(np.float64))
        if last is None:
            self._feed(None, new, None, t)
        elif last.guid is rec.guid and last["up"] is rec["up"] and last["link_down"] is rec["link_down"]:
            pass  # the same readings again (a source re-times them every tick): nothing to diff
        else:
            t0 = float(last["t"][0]) if len(last) else t
            self._feed((last.guid.astype(np.uint64, copy=False), last.port.astype(np.int64), last["up"],
                        last["link_down"].astype(np.float64)), new, t0, t)
        same = last is not None and len(last) == len(rec) and (last.guid is rec.guid or np.array_equal(
            last.guid, rec.guid)) and (last.port is rec.port or np.array_equal(last.port, rec.port))
        if same and last["sn"] is not rec["sn"]:
            self._swapped(rec, last, t, fabric)

    def observe_sweep(self, fabric: Fabric, down: list[dict], t: float, rec: HealthRecords | None) -> None:
        """A telemetry sweep's port state (:func:`~ibweb.live.health.swept.swept_ports` of the discovery ``fabric``
        and the cables ``down``, the sweep at ``t``), for the ports the readings ``rec`` do not give the state of.
        Called every tick (``t`` is remembered as when the state was last seen); when the state changed, the ports
        whose state differs from what the tracker holds are seen as they were at the sweep before and then as they
        are, so a down's interval is one sweep wide."""
        key = tuple((a.get("a"), a.get("b")) for a in down)  # the few cables down
        t0, self._sweep_t = self._sweep_t, t
        if self._swept_key is not None and self._swept_key[0] is fabric and self._swept_key[1] == key:
            return
        self._swept_key = (fabric, key)
        sw = self.swept = swept_ports(fabric, down, t)
        up = np.where(read_by(rec, sw), -1, sw.up)
        state, _ = self.downs.seen(sw.guid, sw.port)
        rows = np.flatnonzero((up >= 0) & (up != state))
        before = rows[state[rows] >= 0]
        nan = np.full(rows.size, np.nan)
        if t0 is not None and t0 < t and before.size:
            self._observe(t0, sw.guid[before], sw.port[before], state[before], nan[:before.size])
        self._observe(max(t, t0 if t0 is not None else t), sw.guid[rows], sw.port[rows], up[rows], nan)

    def swept_with_downs(self) -> np.ndarray | None:
        """Which ports of the newest sweep are down or have downs kept (None: no sweep)."""
        sw = self.swept
        if sw is None:
            return None
        slots = self.downs.slots.find(sw.guid, sw.port)
        had = np.zeros(len(self.downs.slots) + 1, bool)
        had[self.downs.episodes()["slot"]] = True
        return (sw.up == 0) | had[slots]  # slot -1: the extra entry, False

    def _swapped(self, rec: HealthRecords, last: HealthRecords, t: float, fabric: Fabric) -> None:
        new, old = rec["sn"], last["sn"]
        rows = np.flatnonzero((new != old) & (new != "") & (old != ""))
        if not rows.size:
            return
        nodes = node_indices(fabric, rec.guid[rows])
        for k, i in enumerate(rows[:MAX_SWAPS].tolist()):  # the swapped cable ends only
            end = port_end(fabric, int(nodes[k]), int(rec.port[i]))
            if end["node"] is None:  # a port of no node of the fabric: named by its GUID
                end.update(node=f"0x{int(rec.guid[i]):016x}", guid=f"0x{int(rec.guid[i]):016x}")
            swap = {**end, "t": t, "from": str(old[i]), "to": str(new[i])}
            self.swaps.append(swap)
            self._new_swaps.append(swap)
        del self.swaps[:-MAX_SWAPS]
        del self._new_swaps[:-MAX_SWAPS]

    def report(self, rec: HealthRecords, fabric: Fabric, th, t: float) -> tuple[dict, dict, list[dict]]:
        """The report of ``rec`` graded by ``th`` (:func:`~ibweb.live.health.report.build_report`), its ports'
        series for ``/metrics`` (:func:`~ibweb.live.health.report.port_series`) and the health conditions' alerts
        (the open conditions, the downs newly proven longer than the job-killing time, the cable swaps since the
        last grading)."""
        self._compact()
        graded = grade_ports(rec, th, self.downs)
        alerts = self.conditions.update(port_health(rec, fabric, th, graded), t)
        alerts += self.conditions.downs_long(self.downs, self.jobs.jobs)
        alerts += cable_swap_alerts(self._new_swaps, fabric.node_name)
        self._new_swaps = []
        return (build_report(rec, fabric, th, self.downs, self.swaps, t, graded=graded, jobs_of=self.jobs.jobs),
                port_series(rec, fabric, graded), alerts)

    def _compact(self) -> None:
        """Drop the job sets no kept episode names (once they are many)."""
        tags = self.downs.episodes()["tag"]
        if len(self.jobs) > 2 * int((tags >= 0).sum()) + 1024:
            self.downs.retag(*self.jobs.compact(tags))


def site_thresholds():
    """The grading table: the site's (``IBWEB_HEALTH_THRESHOLDS``) rows before the repository's."""
    return load(settings.IBWEB_HEALTH_THRESHOLDS)


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
                      module_limits(rec, th, "temp"), rec["rx_power"], module_limits(rec, th, "rx_power"),
                      rec["tx_power"], module_limits(rec, th, "tx_power"), downs,
                      tuple(graded["module"]["ranges"].get(q) for q in ("rx_power", "tx_power")))


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
        """Observe the source's readings of this tick (and a telemetry source's sweep: its discovery and cables
        down); grade and store a report when one is due; add the health conditions' alerts of the newest grading
        to the tick's (its state is replaced: a source's own is kept)."""
        try:
            health = getattr(self._source(), "health", None)
            rec = health() if health is not None else None
            age = tick.totals.get("sweep_age_s") if isinstance(tick.totals, dict) else None
            sweep_t = float(tick.state.t) - float(age) if isinstance(age, int | float) and np.isfinite(age) else None
            if rec is not None or sweep_t is not None:
                await asyncio.to_thread(self._step, version, tick, rec, sweep_t)
        except Exception:  # the feed and the signals come after this publisher: they still get the tick
            log.exception("fabric %s: link health failed", self.fabric_id)
        if self.alerts:
            tick.state = replace(tick.state, alerts=[*tick.state.alerts, *self.alerts])

    def _step(self, version: str | None, tick: Tick, rec: HealthRecords | None, sweep_t: float | None) -> None:
        fabric = tick.fabric
        t = float(rec["t"][0]) if rec is not None and len(rec) and not np.isnan(rec["t"][0]) else (
            float(tick.state.t) if np.isfinite(tick.state.t) else time.time())
        feed_downs = getattr(self._source(), "feed_downs", None)  # a telemetry source: OpenSM's log
        if feed_downs is not None:
            feed_downs(self.keeper.downs, self.keeper.jobs.tag)
        if rec is not None:
            self.keeper.observe(rec, t, fabric)
        if sweep_t is not None:
            self.keeper.observe_sweep(fabric, list(tick.down or []), sweep_t, rec)
        self._catalog(version, fabric)  # after the downs of this tick: they were on the jobs of the fabric before
        if t - self._graded_at < self.interval_s:
            return
        graded = with_swept(rec, self.keeper.swept, self.keeper.swept_with_downs())
        if graded is None:  # neither readings nor downs yet: no report
            return
        self._graded_at = t
        if self._thresholds is None:
            self._thresholds = site_thresholds()
        report, ports, self.alerts = self.keeper.report(graded, fabric, self._thresholds, t)
        store.write(self.fabric_id, version, report)
        store.write_ports(self.fabric_id, version, t, ports)
        keep_trend_and_cables(self.fabric_id, version, t, graded, fabric, ports)

    def _catalog(self, version: str | None, fabric: Fabric) -> None:
        """Take the job catalog of the newest record of ``fabric`` (record version ``version``, or a version of its
        jobs since) for the downs to come; read once per version (a tick reads the record's small head only)."""
        if version is None:
            return
        h = record.head(self.fabric_id)
        if h is None or record.fabric_version(h) != version:  # a record of another fabric: the one before stands
            h = {"version": version}
        if h["version"] == self._catalog_of:
            return
        catalog = record.jobs(self.fabric_id, h)
        if catalog is None:  # not readable now: the jobs of the version before stand, tried again next tick
            return
        self._catalog_of = h["version"]
        self.keeper.set_catalog(fabric, catalog)

    def reset(self) -> None:
        """Forget the downs and swaps seen (a cold standby, should it lead again)."""
        self.keeper = HealthKeeper(settings.IBWEB_HEALTH_JOB_KILLING_S)
        self.alerts: list[dict] = []  # the newest grading's, added to every tick's until the next
        self._graded_at = -np.inf
        self._catalog_of: str | None = None

    def pending(self) -> list[asyncio.Task]:
        return []
