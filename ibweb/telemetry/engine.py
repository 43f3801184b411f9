"""The engine of a telemetry-fed fabric: same interface as :class:`ibweb.live.engine.FabricEngine`.

``start()`` makes sure a discovery exists (running one sweep if none has), builds
the :class:`~fabric_engine.topology.Fabric` from it and stores the snapshot's
topology; ``tick()`` publishes one frame from the two newest sweeps. Sweeps come
from Celery (beat + workers), from the push API, or, in the embedded default
(Celery eager), from a background thread this engine starts when one is due.
A sweep that hangs never blocks a tick: frames keep coming, and data older than
the collector's ``stale_after_s`` is published as stale (rate 0, one alert).
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
from fabric_engine.telemetry import fabric_from_linkinfo, observe, parse_iblinkinfo, totals_from_samples
from fabric_engine.topology import Fabric
from ibweb.fabrics.models import Fabric as FabricModel
from ibweb.live.groups import broadcast_frame, broadcast_snapshot, last_seq, store_topology

from . import store
from .choices import CollectorSource
from .models import CollectorConfig
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
        self.config: CollectorConfig | None = None
        self.fabric: Fabric | None = None
        self.topology: dict | None = None
        self.seq = 0
        self._linkinfo: str | None = None
        self._used: tuple | None = None
        self._state: FabricState | None = None
        self._sweep_thread: asyncio.Task | None = None
        self._last_sweep_start = 0.0

    # ------------------------------------------------------------- lifecycle
    async def start(self) -> None:
        """Load the collector config, get a discovery, and publish the topology."""
        self.config = await sync_to_async(CollectorConfig.objects.select_related("fabric").get)(
            fabric_id=self.fabric_id)
        self.seq = max(self.seq, await last_seq(self.fabric_id))  # a restart continues the sequence
        _, newest = await asyncio.to_thread(store.sweeps, self.fabric_id)
        if newest is None and self.config.source != CollectorSource.PUSH:
            self._last_sweep_start = time.time()
            await asyncio.to_thread(run_sweep, self.config)
            _, newest = await asyncio.to_thread(store.sweeps, self.fabric_id)
        if newest is not None:
            await self._load_topology(newest["linkinfo"])

    async def _load_topology(self, linkinfo: str) -> None:
        fabric = await asyncio.to_thread(lambda: fabric_from_linkinfo(parse_iblinkinfo(linkinfo), self.slug))
        self.fabric, self._linkinfo, self._state = fabric, linkinfo, None
        self.topology = to_json(fabric)
        header = json.dumps({"slug": self.slug, "name": self.name, "mode": self.mode, "tick_s": self.tick_s})
        await store_topology(self.fabric_id, header, json.dumps(self.topology))
        await broadcast_snapshot(self.fabric_id)  # connected clients switch to the discovered topology

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
        if newest["linkinfo"] != self._linkinfo:
            await self._load_topology(newest["linkinfo"])
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
        alerts = list(newest["events"])
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
                  "sweep_age_s": round(now - newest["t"], 3)}
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
