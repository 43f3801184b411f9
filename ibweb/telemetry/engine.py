"""The engine of a telemetry-fed fabric: same interface as :class:`ibweb.live.engine.FabricEngine`.

``start()`` makes sure a discovery exists (running one sweep if none has), builds
the :class:`~fabric_engine.topology.Fabric` from it and stores the snapshot's
topology; ``tick()`` publishes one frame from the two newest sweeps. Sweeps come
from Celery (beat + workers), from the push API, or, in the embedded default
(Celery eager), from a background thread this engine starts when one is due.
A sweep that hangs never blocks a tick: frames keep coming, and data older than
the collector's ``stale_after_s`` is published as stale (rate 0, one alert).

Routing (:mod:`.routing`): each discovery is routed with OpenSM's LFT dump when the
collector has one, else with the fabric's ``routing_engine``; a changed dump is
loaded again on the next tick; a cabling change with an unchanged dump re-routes.
Each change is an alert of kind ``routing`` (for the rest of that sweep), an event
appended to that :class:`Sweep` record, and the frame's ``totals.routing`` names
the routing in use. The routing is stored for the web processes' path queries.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time

import numpy as np
from asgiref.sync import sync_to_async
from django.conf import settings

from fabric_engine.formats.json_format import to_json
from fabric_engine.state import FabricState
from fabric_engine.telemetry import (
    diff_topology,
    fabric_from_linkinfo,
    observe,
    parse_iblinkinfo,
    totals_from_samples,
)
from fabric_engine.topology import Fabric
from ibweb.fabrics.models import Fabric as FabricModel
from ibweb.live.groups import broadcast_frame, broadcast_snapshot, last_seq, store_topology

from . import store
from .choices import CollectorSource
from .models import CollectorConfig, Sweep
from .routing import RoutingTracker, publish
from .sweeps import run_sweep

__all__ = ["TelemetryEngine"]

log = logging.getLogger("ibweb.telemetry")


class TelemetryEngine:
    """Runs one telemetry-fed fabric: turns its newest sweeps into frames, once per tick."""

    def __init__(self, fabric: FabricModel) -> None:
        self.fabric_id = fabric.pk
        self.slug = fabric.slug
        self.name = fabric.name
        self.mode = fabric.mode
        self.tick_s = fabric.tick_s
        self.routing_engine = fabric.routing_engine
        self.config: CollectorConfig | None = None
        self.router: RoutingTracker | None = None
        self.fabric: Fabric | None = None
        self.topology: dict | None = None
        self.seq = 0
        self._linkinfo: str | None = None
        self._used: tuple | None = None
        self._state: FabricState | None = None
        self._sweep_thread: asyncio.Task | None = None
        self._last_sweep_start = 0.0
        self._sweep_id: int | None = None  # newest sweep seen (the collector config is re-read when it changes)
        self._routing_events: list[tuple[int | None, dict]] = []
        self._routing_poll: asyncio.Future | None = None

    # ------------------------------------------------------------- lifecycle
    async def start(self) -> None:
        """Load the collector config, get a discovery, and publish the topology."""
        self.config = await sync_to_async(CollectorConfig.objects.select_related("fabric").get)(
            fabric_id=self.fabric_id)
        self.seq = max(self.seq, await last_seq(self.fabric_id))  # a restart continues the sequence
        self.router = RoutingTracker(self.config.lfts_file(), self.routing_engine)
        _, newest = await asyncio.to_thread(store.sweeps, self.fabric_id)
        if newest is None and self.config.source != CollectorSource.PUSH:
            self._last_sweep_start = time.time()
            await asyncio.to_thread(run_sweep, self.config)
            _, newest = await asyncio.to_thread(store.sweeps, self.fabric_id)
        if newest is not None:
            self._sweep_id = newest["id"]
            await self._load_topology(newest["linkinfo"], newest["id"])

    async def _load_topology(self, linkinfo: str, sweep_id: int | None = None) -> None:
        fabric = await asyncio.to_thread(lambda: fabric_from_linkinfo(parse_iblinkinfo(linkinfo), self.slug))
        await asyncio.to_thread(self._route, fabric, self.fabric, linkinfo, sweep_id)
        self.fabric, self._linkinfo, self._state = fabric, linkinfo, None
        self.topology = to_json(fabric)
        header = json.dumps({"slug": self.slug, "name": self.name, "mode": self.mode, "tick_s": self.tick_s})
        await store_topology(self.fabric_id, header, json.dumps(self.topology))
        await broadcast_snapshot(self.fabric_id)  # connected clients switch to the discovered topology

    # --------------------------------------------------------------- routing
    def _route(self, fabric: Fabric, old: Fabric | None, linkinfo: str, sweep_id: int | None) -> None:
        """Route a new discovery (the dump, or computed; see :class:`RoutingTracker`) and publish it."""
        changes = diff_topology(old, fabric) if old is not None else []
        self._publish_routing(self.router.on_topology(fabric, changes), linkinfo, sweep_id)

    def _poll_routing(self, sweep_id: int | None) -> None:
        """Load the LFT dump again when it changed since it was last read (in an executor thread)."""
        try:
            event = self.router.poll(self.fabric)
            if event is not None:
                self._publish_routing(event, self._linkinfo, sweep_id)
        except Exception:
            log.exception("fabric %s: reading the LFT dump failed", self.slug)

    async def _routing_idle(self) -> None:
        """Wait for a dump read still running (the tracker is used by one thread at a time)."""
        if self._routing_poll is not None and not self._routing_poll.done():
            await asyncio.shield(self._routing_poll)

    def _publish_routing(self, event: dict | None, linkinfo: str, sweep_id: int | None) -> None:
        publish(self.fabric_id, self.router.routing, linkinfo, self.router.status())
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
        """Embedded default only: whether this engine should start a sweep now."""
        c = self.config
        if c is None or not c.enabled or c.source == CollectorSource.PUSH or not settings.CELERY_TASK_ALWAYS_EAGER:
            return False
        if self._sweep_thread is not None and not self._sweep_thread.done():
            return False
        last = max(newest["t"] if newest else 0.0, self._last_sweep_start)
        return time.time() - last >= c.interval_s

    def _start_sweep(self) -> None:
        """Embedded default: no beat or workers, so the engine starts a due sweep in a thread."""
        self._last_sweep_start = time.time()
        self._sweep_thread = asyncio.create_task(asyncio.to_thread(run_sweep, self.config),
                                                 name=f"telemetry-sweep:{self.slug}")

    # ------------------------------------------------------------------ tick
    async def tick(self) -> int:
        """Publish one frame from the newest sweeps; returns its sequence number (0 when nothing to show)."""
        prev, newest = await asyncio.to_thread(store.sweeps, self.fabric_id)
        if self._due(newest):
            self._start_sweep()
        if newest is None:
            return 0
        if newest["id"] != self._sweep_id:
            self._sweep_id = newest["id"]
            await self._refresh_config()
        if newest["linkinfo"] != self._linkinfo:
            await self._routing_idle()
            await self._load_topology(newest["linkinfo"], newest["id"])
        elif self._routing_poll is None or self._routing_poll.done():
            # submitted now, not awaited: a large dump takes seconds to parse and the frames go on meanwhile
            self._routing_poll = asyncio.get_running_loop().run_in_executor(None, self._poll_routing, newest["id"])
        self.seq += 1
        text = await asyncio.to_thread(self._frame, prev, newest, time.time())
        await broadcast_frame(self.fabric_id, self.seq, text)
        return self.seq

    def state(self, prev: dict | None, newest: dict, now: float) -> FabricState:
        """The state to publish at ``now`` from sweeps ``prev`` and ``newest``."""
        f, c = self.fabric, self.config
        n = 2 * f.num_links
        pair = (prev and prev["id"], newest["id"], self._linkinfo)
        if prev is not None and pair != self._used:
            obs = observe(f, prev["samples"], newest["samples"], seq=self.seq, tick_s=self.tick_s,
                          wrap=c.wrap_counters, tick_code=c.tick_code, thresholds=c.alert_thresholds())
            self._state, self._used = obs.state, pair
            store.record_telemetry_totals(self.fabric_id, self.topology, totals_from_samples(f, newest["samples"]),
                                          newest["t"])
        # the newest routing event of this sweep (the sweep record keeps all of them)
        alerts = list(newest["events"]) + [e for s, e in self._routing_events if s == newest["id"]][-1:]
        failures = newest["failures"]
        if failures:
            alerts.append({"kind": "sweep_failures", "severity": "warning", "count": len(failures),
                           "message": f"{len(failures)} sweep reads failed: {failures[0]['error']}"})
        age = now - newest["t"]
        if self._state is None or age > c.stale_after_s:
            zero = np.zeros(n, np.float32)
            why = "waiting for a second sweep" if self._state is None else f"newest sweep is {age:.0f} s old"
            alerts.append({"kind": "stale", "severity": "warning", "count": n, "links": [],
                           "message": f"all links stale: {why}"})
            return FabricState(self.seq, now, self.tick_s, zero, zero.copy(), alerts=alerts,
                               capacity_gbps=f.capacity_gbps)
        return dataclasses.replace(self._state, seq=self.seq, t=now, alerts=self._state.alerts + alerts)

    def _frame(self, prev: dict | None, newest: dict, now: float) -> str:
        f = self.fabric
        totals = {"hosts": f.num_hosts, "switches": f.num_switches, "links": f.num_links,
                  "sweep_age_s": round(now - newest["t"], 3),
                  "routing": self.router.routing.engine if self.router.routing is not None else None}
        return json.dumps(self.state(prev, newest, now).to_frame(totals), separators=(",", ":"))

    async def run(self) -> None:
        """Tick on a fixed schedule until cancelled; a failed tick is logged, not fatal."""
        await self.start()
        next_at = time.monotonic()
        while True:
            try:
                await self.tick()
            except Exception:
                log.exception("fabric %s: telemetry tick failed", self.slug)
            next_at += self.tick_s
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
