"""The source of a telemetry-fed fabric: discovered by its collector, counters from its sweeps.

:class:`TelemetrySource` is what the fabric runner (:mod:`ibweb.live.engine.runner`) drives for
fabrics of mode ``telemetry`` (declared in :class:`~ibweb.telemetry.apps.TelemetryConfig`);
the runner does the rest as for any fabric: leader lock, sequence numbers, publishing,
history, ``/metrics``, policy and per-view frames.

``start()`` makes sure a discovery exists (running one sweep if none has) and builds the
:class:`~fabric_engine.topology.Fabric` from it; ``step()`` turns the two newest sweeps into a
state. Sweeps come from Celery (beat + workers), from the push API, or, in the embedded default
(Celery eager), from a background thread this source starts when one is due. A sweep that
hangs never blocks a tick: states keep coming, and data older than the collector's
``stale_after_s`` is shown as stale (rate 0, one alert). Counters are checked before they
become rates (:func:`~fabric_engine.telemetry.observe`, against this tick's clock): a read out
of order, from the future, too close to the previous one or beyond its link's capacity gives
no rate and a ``counter_suspect`` alert. A discovery that cannot be parsed
marks its sweep failed, raises one alert, and is not parsed again (the previous topology stays).

Routing (:mod:`.routing`): each discovery is routed with OpenSM's LFT dump when the
collector has one and its content agrees with the discovery, else with the fabric's
``routing_engine``; a changed dump is judged and loaded on the next tick. When dump and
discovery disagree both are read again (the discovery through :meth:`_rediscover`, the
collector asked once more) before the dump gives way (issue 35).
Each change is an alert of kind ``routing`` (for the rest of that sweep), an event
appended to that :class:`Sweep` record, and the frame's ``totals.routing`` names
the routing in use.

Conditions (:mod:`fabric_engine.telemetry.conditions`): each discovery is compared with the
fabric's reference cabling (:mod:`.reference`: its last good discovery, or what an operator
accepted); a cable down, a node missing or a cable trained down is an alert of every tick
(``"condition": True``, with ``since``) until a discovery shows it fixed, so its event stays
open meanwhile. Where a cabling plan exists, missing cables and nodes are the plan's alerts.
What a discovery changed otherwise (cables or nodes added, restored) is an alert for the rest
of its sweep. Counter conditions (:mod:`fabric_engine.telemetry.counter_conditions`: ``error_rate``,
``port_flapping``, ``symbol_errors_rising``) are advanced by each new pair of sweeps and kept by
port GUID and number; they replace the per-sweep ``errors`` alerts. When the source starts, the
``since`` of every condition still open as an event is that event's ``first_seen`` (a restart
does not restart the clock).

Link health (issue 37): captures pushed to ``/api/telemetry/fabrics/<slug>/health/`` are kept per port
(:mod:`ibweb.runtime.health_readings`); :meth:`TelemetrySource.health` gives them, matched to the discovery in use,
to the health publisher each tick.

Jobs come from the fabric's job source through its digital twin, given by whoever builds the
source (:class:`SourceTwin`: the twin app builds on telemetry, so telemetry never imports it):
every state passes through the twin's ``step``, which names the running jobs, their bandwidth
and the links they share, compares each link with what the jobs should drive, and checks the
cabling against the plan; the twin's catalog is the record's job catalog. Built without a twin
(:class:`NoTwin`), the source shows the counters alone.

The runner owns the sequence numbers: a state is numbered with the ``seq`` :meth:`step` is given.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Hashable
from typing import Protocol

import numpy as np
from asgiref.sync import sync_to_async
from django.conf import settings

from fabric_engine.errors import FabricEngineError
from fabric_engine.health.records import HealthRecords
from fabric_engine.policy import Policy
from fabric_engine.routing import Routing
from fabric_engine.state import FabricState
from fabric_engine.telemetry import (
    CONDITION_KINDS,
    cabling_conditions,
    diff_topology,
    fabric_from_linkinfo,
    is_good,
    link_port_keys,
    observe,
    parse_iblinkinfo,
    totals_from_samples,
)
from fabric_engine.telemetry.counter_conditions import COUNTER_CONDITION_KINDS, CounterConditions, port_sweep
from fabric_engine.topology import Fabric
from fabric_engine.workload import Job
from ibweb.runtime import health_readings
from ibweb.runtime.catalog import job_catalog

from . import store
from .cadence import Cadence
from .choices import CollectorSource, SweepStatus
from .lft_tracker import RoutingTracker, publish_status
from .message_parts import held
from .models import CollectorConfig, Sweep
from .reference import set_reference
from .sweeps import discover, run_sweep

__all__ = ["TelemetrySource", "SourceTwin", "NoTwin"]

log = logging.getLogger("ibweb.telemetry")


def _condition_key(condition: dict) -> tuple:
    """What identifies a condition across discoveries: its kind and the GUIDs and ports it is about."""
    return condition["kind"], condition.get("guid"), *condition.get("guids", ()), *condition.get("ports", ())


def _named_port(condition: dict) -> dict:
    """A port's condition whose node is gone (named by its GUID) named by the node's name its ``gone`` object holds."""
    gone = [g for g in condition.get("gone") or [] if g.get("slot") == 0]
    guid, ports = condition.get("guid"), condition.get("ports") or []
    if not gone or not gone[0]["name"] or gone[0]["name"] == guid or len(ports) != 1 or \
            condition.get("port") != f"{guid} port {ports[0]}":
        return condition
    name = gone[0]["name"]
    return {**condition, "port": f"{name} port {ports[0]}", "message": condition["text"].format(name)}


class SourceTwin(Protocol):
    """What the source asks of its fabric's digital twin (the twin app's ``FabricTwin``)."""

    #: The fabric's cabling plan, None without one (with one, missing cables and nodes are the plan's alerts).
    plan: object | None

    @property
    def catalog_version(self) -> Hashable:
        """Changes when the running jobs or their placement change."""

    def step(self, routing: Routing, state: FabricState, now: float, *, stale: np.ndarray | None = None,
             compared: bool = True) -> FabricState:
        """``state`` with the twin's jobs, hotspots, alerts and overlay."""

    def catalog(self, routing: Routing | None, now: float) -> list[dict]:
        """The runtime record's job catalog: the running jobs placed on ``routing``."""

    def catalog_jobs(self, routing: Routing | None, now: float) -> list[Job]:
        """The running jobs as emulator jobs (what-if analyses run these)."""


class NoTwin:
    """No twin: states pass unchanged and there are no jobs."""

    plan = None
    catalog_version: Hashable = None

    def step(self, routing: Routing, state: FabricState, now: float, *, stale: np.ndarray | None = None,
             compared: bool = True) -> FabricState:
        return state

    def catalog(self, routing: Routing | None, now: float) -> list[dict]:
        return []

    def catalog_jobs(self, routing: Routing | None, now: float) -> list[Job]:
        return []


class TelemetrySource:
    """One telemetry-fed fabric's engine data: its newest discovery, routing and counter states.

    ``twin``: the fabric's digital twin every state passes through (none: :class:`NoTwin`).
    """

    fabric: Fabric | None
    topology_version: int

    def __init__(self, row, twin: SourceTwin | None = None) -> None:
        self.fabric_id = row.pk
        self.slug = row.slug
        self.tick_s = row.tick_s
        self.routing_engine = row.routing_engine
        self.routing_options = row.routing_options
        self.config: CollectorConfig | None = None
        self.router: RoutingTracker | None = None
        self.fabric: Fabric | None = None
        self.topology_version = 0
        self.policy: Policy | None = None
        self._jobs: list[Job] = []
        self._linkinfo: str | None = None
        self._refused: int | None = None  # sweep whose discovery could not be used (never parsed again)
        self._refused_text: str | None = None
        self._refused_error = ""
        self._used: tuple | None = None
        self._state: FabricState | None = None
        self._counters: tuple[np.ndarray, float] | None = None
        self._newest_t: float | None = None
        self._sweep_thread: asyncio.Task | None = None
        self._cadence = Cadence()  # the next sweep's slot (embedded default)
        self._sweep_id: int | None = None  # newest sweep seen (the collector config is re-read when it changes)
        self._routing_events: list[tuple[int | None, dict]] = []
        self._routing_poll: asyncio.Future | None = None
        self._stale: np.ndarray | None = None
        self._entries: tuple[dict | None, dict | None] = (None, None)  # the two sweeps last read from the cache
        self._reference: tuple[object, Fabric] | None = None  # (reference_at, its fabric)
        self._conditions: list[dict] = []
        self._since: dict[tuple, float] = {}  # when each condition was first seen by this source
        self._seed: dict[tuple, float] = {}  # first_seen of the conditions open as events when this source started
        self._counter = CounterConditions()
        self._counter_conditions: list[dict] = []
        self._config_read = 0.0
        self._health = health_readings.Readings()
        self._log_downs = health_readings.LogDowns()
        self.twin: SourceTwin = twin if twin is not None else NoTwin()

    @property
    def routing(self) -> Routing | None:
        return self.router.routing if self.router is not None else None

    # ------------------------------------------------------------- lifecycle
    async def start(self, progress=None) -> None:
        """Load the collector config, get a discovery (one sweep if there is none yet), and route it."""
        self.config = await sync_to_async(CollectorConfig.objects.select_related("fabric").get)(
            fabric_id=self.fabric_id)
        self.router = RoutingTracker(self.config.lfts_file(), self.routing_engine, self.routing_options,
                                     rediscover=self._rediscover,
                                     objects=lambda changes, holder: held(changes, holder, self.config.fabric))
        await asyncio.to_thread(self._seed_since)
        _, newest = await asyncio.to_thread(store.sweeps, self.fabric_id)
        if newest is None and self.config.source != CollectorSource.PUSH:
            if progress is not None:
                await progress(0.05, "running the first sweep (iblinkinfo, perfquery)")
            self._cadence.begin(time.time(), self.config.interval_s)
            await asyncio.to_thread(run_sweep, self.config)
            _, newest = await asyncio.to_thread(store.sweeps, self.fabric_id)
        if newest is not None:
            self._sweep_id = newest["id"]
            if progress is not None:
                await progress(0.5, "building the discovered fabric and routing it")
            await self._load_topology(newest["linkinfo"], newest["id"])

    async def stop(self) -> None:
        await self._routing_idle()

    async def _load_topology(self, linkinfo: str, sweep_id: int | None = None) -> bool:
        """Use the discovery ``linkinfo``; False (and the sweep marked failed, once) when it cannot be used."""
        try:
            fabric = await asyncio.to_thread(lambda: fabric_from_linkinfo(parse_iblinkinfo(linkinfo), self.slug))
        except FabricEngineError as exc:
            await self._refuse(sweep_id, linkinfo, str(exc))
            return False
        await asyncio.to_thread(self._route, fabric, self.fabric, linkinfo, sweep_id)
        self.fabric, self._linkinfo, self._state, self._used = fabric, linkinfo, None, None
        self.topology_version += 1
        await asyncio.to_thread(self._check_reference)
        return True

    # ------------------------------------------------------------ conditions
    def _seed_since(self) -> None:
        """Take the ``since`` of the conditions still open as events (read only) for when they show again."""
        from ibweb.events.models import Event

        rows = Event.objects.filter(fabric_id=self.fabric_id, active=True).values_list("details", "first_seen")
        for details, first_seen in rows:
            if not isinstance(details, dict) or details.get("condition") is not True or "kind" not in details:
                continue
            t = first_seen.timestamp()
            self._seed[_condition_key(details)] = t
            ports = details.get("ports") or []
            if details["kind"] in COUNTER_CONDITION_KINDS and details.get("guid") and len(ports) == 1:
                try:
                    self._counter.seed(details["kind"], int(details["guid"], 16), int(ports[0]), t)
                except (TypeError, ValueError):
                    continue

    def _check_reference(self) -> None:
        """Compare the discovery in use with the reference cabling (taking it as the reference when it is good)."""
        c, fabric, linkinfo = self.config, self.fabric, self._linkinfo
        if c is None or fabric is None:
            return
        if not c.reference:
            c.reference_at = set_reference(c.pk, linkinfo)
            c.reference, c.reference_by = linkinfo, ""
        if self._reference is None or self._reference[0] != (c.reference_at, len(c.reference)):
            try:
                ref = fabric_from_linkinfo(parse_iblinkinfo(c.reference), self.slug)
            except FabricEngineError as exc:  # a reference that no longer reads: the current cabling replaces it
                log.warning("fabric %s: reference cabling unreadable (%s); taking the current discovery", self.slug,
                            exc)
                ref = fabric
                c.reference, c.reference_at = linkinfo, set_reference(c.pk, linkinfo)
            self._reference = ((c.reference_at, len(c.reference)), ref)
        ref = self._reference[1]
        if c.reference != linkinfo and is_good(ref, fabric):  # nothing lost: the last good discovery moves on
            c.reference, c.reference_at, c.reference_by = linkinfo, set_reference(c.pk, linkinfo), ""
            self._reference = ((c.reference_at, len(linkinfo)), fabric)
            ref = fabric
        conditions = cabling_conditions(ref, fabric)
        now = time.time()
        keys = [_condition_key(x) for x in conditions]
        self._since = {k: self._since.get(k) or self._seed.pop(k, now) for k in keys}
        self._conditions = self._named_gone(
            [{**x, "since": round(self._since[k], 3)} for x, k in zip(conditions, keys, strict=True)])

    def _named_gone(self, conditions: list[dict]) -> list[dict]:
        """``conditions`` with each node the discovery in use lacks (``nodes`` -1) as the reference cabling held it,
        with its tenants then (``gone``, :func:`~.message_parts.held`): its tenants' views name it, the others read
        ``hidden node``; a port's condition of such a node says its name, not its GUID. Once per discovery or
        sweep, and only when a condition names such a node."""
        if self._reference is None or not any(-1 in (c.get("nodes") or []) for c in conditions):
            return conditions
        return [_named_port(c) for c in held(conditions, self._reference[1], self.config.fabric)]

    async def _reread_reference(self, now: float) -> None:
        """A reference accepted in another process takes effect: the row is re-read every few seconds (and with
        each new sweep, :meth:`_refresh_config`); the conditions are judged again whenever the reference the
        config holds is not the one they were judged against."""
        if self.config is None:
            return
        if now - self._config_read >= 5.0:
            self._config_read = now
            row = await CollectorConfig.objects.filter(pk=self.config.pk).values("reference_at").afirst()
            if row is not None and row["reference_at"] != self.config.reference_at:
                await self._refresh_config()
        if self._reference is not None and self._reference[0][0] != self.config.reference_at:
            await asyncio.to_thread(self._check_reference)

    def conditions(self) -> list[dict]:
        """The fabric's conditions now; missing cables and nodes are left to the cabling plan where there is one."""
        counter = list(self._counter_conditions)
        if self.twin.plan is None:
            return list(self._conditions) + counter
        return [c for c in self._conditions if c["kind"] not in ("link_down", "node_missing")] + counter

    async def _refuse(self, sweep_id: int | None, linkinfo: str, error: str) -> None:
        """Remember a discovery that cannot be used, so that it is not parsed again every tick."""
        self._refused, self._refused_text, self._refused_error = sweep_id, linkinfo, error
        log.warning("fabric %s: discovery of sweep %s refused: %s", self.slug, sweep_id, error)
        event = {"kind": "discovery", "severity": "critical", "message": f"discovery refused: {error}",
                 "t": round(time.time(), 3)}
        self._routing_events = [(s, e) for s, e in self._routing_events if s == sweep_id][-4:] + [(sweep_id, event)]
        if sweep_id is not None:
            await Sweep.objects.filter(pk=sweep_id).aupdate(
                status=SweepStatus.FAILED, failures=[{"shard": "discovery", "target": None, "error": error}])

    # --------------------------------------------------------------- routing
    def _route(self, fabric: Fabric, old: Fabric | None, linkinfo: str, sweep_id: int | None) -> None:
        """Route a new discovery (the dump, or computed; see :class:`RoutingTracker`) and publish it."""
        # the nodes a change names that the new discovery lacks, as the old one held them (with their tenants)
        changes = held(diff_topology(old, fabric), old, self.config.fabric) if old is not None else []
        self._publish_routing(self.router.on_topology(fabric, changes), linkinfo, sweep_id)

    def _rediscover(self) -> Fabric:
        """A fresh discovery, nothing stored (the routing tracker's second look when dump and discovery disagree)."""
        return fabric_from_linkinfo(parse_iblinkinfo(discover(self.config)), self.slug)

    def _poll_routing(self, sweep_id: int | None) -> None:
        """Load the LFT dump again when it changed since it was last read (in an executor thread)."""
        try:
            event = self.router.poll(self.fabric)
            if event is not None:
                self._publish_routing(event, self._linkinfo, sweep_id)
                self.topology_version += 1
        except Exception:
            log.exception("fabric %s: reading the LFT dump failed", self.slug)

    async def _routing_idle(self) -> None:
        """Wait for a dump read still running (the tracker is used by one thread at a time)."""
        if self._routing_poll is not None and not self._routing_poll.done():
            await asyncio.shield(self._routing_poll)

    def _publish_routing(self, event: dict | None, linkinfo: str, sweep_id: int | None) -> None:
        publish_status(self.fabric_id, self.router.status())
        if event is None:
            return
        log.info("fabric %s: %s", self.slug, event["message"])
        self._routing_events = [(s, e) for s, e in self._routing_events if s == sweep_id][-4:] + [(sweep_id, event)]
        if sweep_id is not None:  # the sweep record keeps what the engine did with its discovery
            record = Sweep.objects.filter(pk=sweep_id).only("events").first()
            if record is not None:
                record.events = [*record.events, event]
                record.save(update_fields=["events"])

    async def _refresh_config(self) -> None:
        """Re-read the collector row (a new LFT dump path takes effect without a restart)."""
        config = await sync_to_async(CollectorConfig.objects.select_related("fabric").filter(
            fabric_id=self.fabric_id).first)()
        if config is not None:
            self.config = config
            self.router.path = config.lfts_file()

    # ------------------------------------------------------------- sweeping
    def _due(self, newest: dict | None) -> bool:
        """Embedded default only: whether this source should start a sweep now."""
        c = self.config
        if c is None or not c.enabled or c.source == CollectorSource.PUSH or not settings.CELERY_TASK_ALWAYS_EAGER:
            return False
        if self._sweep_thread is not None and not self._sweep_thread.done():
            return False
        if self._cadence.next_at is None and newest is not None:  # swept before this source started
            self._cadence.next_at = newest["t"] + c.interval_s
        return self._cadence.due(time.time())

    def _start_sweep(self) -> None:
        """Embedded default: no beat or workers, so the source starts a due sweep in a thread, on a fixed cadence
        (:class:`~.cadence.Cadence`: the previous slot plus the interval)."""
        skipped = self._cadence.begin(time.time(), self.config.interval_s)
        if skipped:
            log.warning("fabric %s: %d sweep slot(s) of %g s skipped: the previous sweep overran", self.slug, skipped,
                        self.config.interval_s)
        self._sweep_thread = asyncio.create_task(asyncio.to_thread(run_sweep, self.config),
                                                 name=f"telemetry-sweep:{self.slug}")

    # ------------------------------------------------------------------ tick
    def _sweeps(self) -> tuple[dict | None, dict | None]:
        """``(previous, newest)`` sweep entries: read from the cache only when its small ``sweep_ids`` key changed.

        Sweeps arrive every ``interval_s`` seconds while ticks come every second, and the two entries
        are 15-30 MB at 32,768 GPUs; an unchanged sweep costs one read of a few bytes. The ids compared
        are those of the entries read, so a reader that raced a writer reads them again on the next tick.
        """
        ids = store.sweep_ids(self.fabric_id)
        prev, newest = self._entries
        if ids is None or ids != (prev and prev["id"], newest and newest["id"]):
            self._entries = prev, newest = store.sweeps(self.fabric_id)
        return prev, newest

    async def step(self, seq: int, now: float) -> FabricState | None:
        """The state of tick ``seq`` from the newest sweeps (None before the first usable discovery)."""
        prev, newest = await asyncio.to_thread(self._sweeps)
        if self._due(newest):
            self._start_sweep()
        if newest is None:
            return None
        if newest["id"] != self._sweep_id:
            self._sweep_id = newest["id"]
            await self._refresh_config()
        if newest["linkinfo"] == self._refused_text and newest["id"] != self._refused:
            # the same bad discovery again: refused without parsing it again
            await self._refuse(newest["id"], newest["linkinfo"], self._refused_error)
        elif newest["linkinfo"] != self._linkinfo and newest["id"] != self._refused:
            await self._routing_idle()
            await self._load_topology(newest["linkinfo"], newest["id"])
        elif self.fabric is not None and (self._routing_poll is None or self._routing_poll.done()):
            # submitted now, not awaited: a large dump takes seconds to parse and the states go on meanwhile
            self._routing_poll = asyncio.get_running_loop().run_in_executor(None, self._poll_routing, newest["id"])
        if self.fabric is None:
            return None
        await self._reread_reference(now)
        await asyncio.to_thread(self._health.refresh, self.fabric_id, self.fabric)
        if newest["id"] == self._refused:  # the counters of a refused discovery do not fit the fabric in use
            prev = newest = None
        return await asyncio.to_thread(self.state, prev, newest, now, seq)

    def state(self, prev: dict | None, newest: dict | None, now: float, seq: int) -> FabricState:
        """The state of tick ``seq`` at ``now`` from sweeps ``prev`` and ``newest`` (None: nothing usable)."""
        f, c = self.fabric, self.config
        n = 2 * f.num_links
        pair = (prev and prev["id"], newest and newest["id"], self._linkinfo)
        if prev is not None and newest is not None and pair != self._used:
            obs = observe(f, prev["samples"], newest["samples"], seq=seq, tick_s=self.tick_s,
                          wrap=c.wrap_counters, tick_code=c.tick_code, thresholds=c.alert_thresholds(), now=now)
            # per-sweep error alerts give way to the lasting counter conditions
            errors_gone = [a for a in obs.state.alerts if a.get("kind") != "errors"]
            self._state = dataclasses.replace(obs.state, alerts=errors_gone)
            self._used, self._stale = pair, obs.stale
            rows = obs.deltas.lookup(link_port_keys(f)[0])
            self._counter_conditions = self._named_gone(self._counter.update(
                port_sweep(f, obs.deltas, rows, c.alert_thresholds()), float(newest["t"])))
            self._counters = (totals_from_samples(f, newest["samples"]), newest["t"])
        # the newest routing event of this sweep (the sweep record keeps all of them)
        sweep_id = newest["id"] if newest is not None else self._refused
        # what a discovery changed, for the rest of its sweep; what it broke is a condition (until fixed)
        changes = [e for e in newest["events"] if e.get("kind") not in CONDITION_KINDS] if newest is not None else []
        alerts = changes + [e for s, e in self._routing_events if s == sweep_id][-1:] + self.conditions()
        failures = newest["failures"] if newest is not None else []
        if failures:
            alerts.append({"kind": "sweep_failures", "severity": "warning", "count": len(failures),
                           "message": f"{len(failures)} sweep reads failed: {failures[0]['error']}"})
        self._newest_t = newest["t"] if newest is not None else None
        age = now - newest["t"] if newest is not None else float("inf")
        if self._state is None or newest is None or age > c.stale_after_s:
            zero = np.zeros(n, np.float32)
            why = ("the newest discovery was refused" if newest is None else
                   "waiting for a second sweep" if self._state is None else f"newest sweep is {age:.0f} s old")
            alerts.append({"kind": "stale", "severity": "warning", "count": n, "links": [],
                           "message": f"all links stale: {why}"})
            blank = FabricState(seq, now, self.tick_s, zero, zero.copy(), alerts=alerts,
                                capacity_gbps=f.capacity_gbps, stale=np.ones(n, dtype=bool))
            return self._twin_step(blank, now, compared=False)
        state = dataclasses.replace(self._state, seq=seq, t=now, alerts=self._state.alerts + alerts)
        return self._twin_step(state, now, compared=True)

    def _twin_step(self, state: FabricState, now: float, *, compared: bool) -> FabricState:
        """``state`` with the twin's jobs, hotspots, alerts and overlay (the state as it was if the twin fails)."""
        if self.routing is None:
            return state
        try:
            return self.twin.step(self.routing, state, now, stale=self._stale, compared=compared)
        except Exception:  # the twin is an addition: a failure of it never stops the fabric's frames
            log.exception("fabric %s: twin step failed", self.slug)
            return state

    def totals(self) -> dict:
        age = round(time.time() - self._newest_t, 3) if self._newest_t is not None else None
        return {"sweep_age_s": age, "routing": self.routing.engine_used if self.routing is not None else None}

    # ------------------------------------------------------------- catalog and policy
    def jobs(self) -> list[Job]:
        return list(self._jobs) or self.twin.catalog_jobs(self.routing, time.time())

    def catalog(self, routing: Routing | None) -> list[dict]:
        """The record's job catalog: the jobs set (:meth:`set_jobs`), else the twin's running jobs."""
        return job_catalog(self._jobs, routing) if self._jobs else self.twin.catalog(routing, time.time())

    @property
    def catalog_version(self) -> Hashable:
        """Changes when the catalog does (the runner then publishes the record again)."""
        return self.twin.catalog_version

    def set_jobs(self, jobs: list[Job]) -> None:
        """Carry ``jobs`` (hosts as node indices of :attr:`fabric`) as this fabric's job catalog."""
        self._jobs = list(jobs)

    def apply_policy(self, policy: Policy | None) -> None:
        self.policy = policy  # nothing is emulated: the runner derives the tenants' hosts from it

    def apply_congestion_control(self, cc) -> None:
        return None  # the rates are measured; the twin reads the settings for its expected values itself

    def counters(self) -> tuple[np.ndarray, float] | None:
        return self._counters

    def feed_downs(self, tracker, tag_of=None) -> int:
        """Feed the port changes OpenSM's log showed (:class:`~ibweb.runtime.health_readings.LogDowns`, stored by
        the sweeps) to the health publisher's down tracker ``tracker``, once per change of that evidence; the changes
        observed."""
        return self._log_downs.feed(self.fabric_id, tracker, tag_of)

    def health(self) -> HealthRecords | None:
        """The link health readings pushed or swept for the discovery's ports (:mod:`ibweb.runtime.health_readings`),
        timed now (None before any); the health publisher grades them as it does an emulator's."""
        return self._health.records(time.time())

    def cables_down(self) -> list[dict]:
        """The ``link_down`` conditions against the reference cabling, kept here even where the plan's alerts
        stand for them in the state (:meth:`conditions`)."""
        return [c for c in self._conditions if c["kind"] == "link_down"]
