"""The engine loop: steps a fabric's emulator once per tick and publishes each frame."""

from __future__ import annotations

import asyncio
import json
import logging
import time

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import Q

from fabric_engine.emulator import Emulator
from fabric_engine.formats.json_format import to_json
from fabric_engine.policy import Policy
from fabric_engine.scenario import build_emulator
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.engine import TelemetryEngine
from ibweb.telemetry.store import record_emulated_state
from ibweb.tenancy.engine_policy import policy_data, policy_version

from . import history
from .groups import broadcast_frame, broadcast_progress, broadcast_snapshot, last_seq, set_starting, store_topology
from .leader import LeaderLock, NoLock

log = logging.getLogger("ibweb.live")


class FabricEngine:
    """Runs one fabric: builds its emulator, then ticks until cancelled."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric_id = fabric.pk
        self.slug = fabric.slug
        self.name = fabric.name
        self.mode = fabric.mode
        self.scenario = fabric.scenario()
        self.tick_s = fabric.tick_s
        self.fabric = fabric
        self.emulator: Emulator | None = None
        self.policy_version: int | None = None

    def _totals(self) -> dict:
        f = self.emulator.fabric
        return {"hosts": f.num_hosts, "switches": f.num_switches, "links": f.num_links}

    async def _progress(self, fraction: float, message: str, status: str = "running") -> None:
        payload = {"task": "engine", "id": self.fabric_id, "fraction": fraction, "status": status, "message": message}
        await set_starting(self.fabric_id, payload if status == "running" else None)
        if status != "running":
            await broadcast_progress(self.fabric_id, payload)

    async def start(self) -> None:
        """Build the emulator (in a thread: routing takes a while on big fabrics) and publish the topology.

        Clients that connect meanwhile are sent ``progress`` messages, then the snapshot.
        """
        engine = self.scenario.get("routing", "minhop")
        await self._progress(0.05, f"building the fabric and routing it with {engine}")
        self.emulator = await asyncio.to_thread(build_emulator, self.scenario)
        await self._progress(0.8, "encoding the topology")
        header = json.dumps({"slug": self.slug, "name": self.name, "mode": self.mode, "tick_s": self.tick_s})
        topology = await asyncio.to_thread(lambda: json.dumps(to_json(self.emulator.fabric)))
        previous = await last_seq(self.fabric_id)
        self.emulator.seq = max(self.emulator.seq, previous)  # a restart continues the sequence
        await store_topology(self.fabric_id, header, topology)
        await self._progress(1.0, "running", status="done")
        await broadcast_snapshot(self.fabric_id)  # waiting and connected clients get the (new) topology

    async def apply_policy_changes(self) -> None:
        """Hand the fabric's partitions and QoS to the emulator when they changed since the last tick."""
        version = await sync_to_async(policy_version)(self.fabric_id)
        if version == self.policy_version:
            return
        data = await sync_to_async(policy_data)(self.fabric)  # the emulator's fabric is the one the GUIDs name
        await asyncio.to_thread(lambda: self.emulator.set_policy(Policy.from_dict(self.emulator.fabric, data)))
        self.policy_version = version
        log.info("fabric %s: policy version %d applied", self.slug, version)

    async def tick(self) -> int:
        """Apply policy changes, then compute and publish one frame; returns its sequence number."""
        await self.apply_policy_changes()
        totals = self._totals()

        def compute():
            state = self.emulator.step()
            record_emulated_state(self.fabric_id, self.emulator.fabric, state)
            return state, json.dumps(state.to_frame(totals), separators=(",", ":"))

        state, text = await asyncio.to_thread(compute)
        seq = state.seq
        await broadcast_frame(self.fabric_id, seq, text)
        await history.record(self.fabric_id, seq, state.t, state.rate_gbps, state.util)
        return seq

    async def run(self) -> None:
        """Tick on a fixed schedule until cancelled, while this process leads the fabric.

        A standby polls for leadership every tick; on taking over it continues the
        sequence numbers where the previous leader stopped. A failed tick (or a
        Redis outage) is logged and retried, never fatal.
        """
        await self.start()
        lock = LeaderLock(settings.REDIS_URL, self.fabric_id, ttl_s=max(3.0, 3 * self.tick_s)) if (
            settings.REDIS_URL) else NoLock()
        next_at = time.monotonic()
        try:
            while True:
                try:
                    was_leader = lock.held
                    if await lock.hold():
                        if not was_leader and isinstance(lock, LeaderLock):
                            self.emulator.seq = max(self.emulator.seq, await last_seq(self.fabric_id))
                            log.info("fabric %s: this process leads from seq %d", self.slug, self.emulator.seq)
                        await self.tick()
                except Exception:
                    log.exception("fabric %s: tick failed", self.slug)
                next_at = max(next_at + self.tick_s, time.monotonic() - self.tick_s)
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        finally:
            await asyncio.shield(lock.release())


class EngineSupervisor:
    """Keeps one engine task per fabric in step with the database.

    Every ``reconcile_s`` seconds it starts the engines of new fabrics, restarts those
    whose row changed (routing engine, scenario, tick) and stops those deleted, so a
    setting saved in the admin or the API takes effect within seconds in whichever
    process runs the engine. Emulated fabrics, and telemetry-fed ones with a collector.
    """

    def __init__(self, slugs: list[str] | None = None, reconcile_s: float = 2.0) -> None:
        self.slugs = slugs or None
        self.reconcile_s = reconcile_s
        self.tasks: dict[int, asyncio.Task] = {}
        self.engines: dict[int, FabricEngine | TelemetryEngine] = {}
        self.versions: dict[int, object] = {}
        self._loop: asyncio.Task | None = None

    async def start(self) -> None:
        """Start every fabric's engine now, then keep reconciling in the background."""
        await self.reconcile()
        self._loop = asyncio.create_task(self._reconcile_forever(), name="engine:supervisor")

    async def wait(self) -> None:
        """Run until cancelled."""
        await self._loop

    async def reconcile(self) -> None:
        rows = {f.pk: f for f in await sync_to_async(list)(self._fabrics(self.slugs))}
        for pk in list(self.tasks):
            if pk not in rows or rows[pk].updated != self.versions[pk]:
                await self._stop_one(pk)
        for pk, fabric in rows.items():
            if pk not in self.tasks:
                engine = TelemetryEngine(fabric) if fabric.mode == FabricMode.TELEMETRY else FabricEngine(fabric)
                self.tasks[pk] = asyncio.create_task(engine.run(), name=f"engine:{fabric.slug}")
                self.engines[pk] = engine
                self.versions[pk] = fabric.updated
                log.info("engine started for fabric %s (%s routing)", fabric.slug, fabric.routing_engine)

    async def _reconcile_forever(self) -> None:
        while True:
            await asyncio.sleep(self.reconcile_s)
            try:
                await self.reconcile()
            except Exception:  # the database may be away for a while; keep the running engines
                log.exception("engine supervisor: reconcile failed")

    async def _stop_one(self, pk: int) -> None:
        task = self.tasks.pop(pk)
        self.versions.pop(pk, None)
        self.engines.pop(pk, None)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    @staticmethod
    def _fabrics(slugs: list[str] | None):
        qs = Fabric.objects.filter(Q(mode=FabricMode.EMULATED) | Q(mode=FabricMode.TELEMETRY, collector__isnull=False))
        return qs.filter(slug__in=slugs) if slugs else qs

    async def stop(self) -> None:
        if self._loop is not None:
            self._loop.cancel()
            await asyncio.gather(self._loop, return_exceptions=True)
        for pk in list(self.tasks):
            await self._stop_one(pk)
