"""Keeps one fabric runner per fabric in step with the database (``run_engine`` and the embedded engine)."""

from __future__ import annotations

import asyncio
import logging

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import Q

from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.engine.share import FabricShare
from ibweb.live.engine.sources import NoSource

__all__ = ["EngineSupervisor"]

log = logging.getLogger("ibweb.live")


class EngineSupervisor:
    """Keeps one engine task per fabric in step with the database.

    Every ``reconcile_s`` seconds it starts the engines of new fabrics, restarts those
    whose row changed (routing engine, scenario, tick) and stops those deleted, so a
    setting saved in the admin or the API takes effect within seconds in whichever
    process runs the engine. Emulated fabrics, and telemetry-fed ones with a collector; each
    gets a :class:`~ibweb.live.engine.runner.FabricRunner` with the source of its mode.

    With Redis, the process beats as one of the engine processes (:class:`~ibweb.live.engine.share.FabricShare`)
    and its runners lead only the fabrics assigned to it, so processes share the fabrics evenly.
    """

    def __init__(self, slugs: list[str] | None = None, reconcile_s: float = 2.0) -> None:
        self.slugs = slugs or None
        self.reconcile_s = reconcile_s
        self.tasks: dict[int, asyncio.Task] = {}
        self.engines: dict[int, FabricRunner] = {}
        self.versions: dict[int, object] = {}
        self._loop: asyncio.Task | None = None
        self.share = FabricShare(settings.REDIS_URL, beat_s=settings.IBWEB_ENGINE_BEAT_S,
                                 ttl_s=3 * settings.IBWEB_ENGINE_BEAT_S, namespace=settings.REDIS_NAMESPACE,
                                 ) if settings.REDIS_URL else None
        self._beats: asyncio.Task | None = None

    async def start(self) -> None:
        """Start every fabric's engine now, then keep reconciling in the background."""
        await self.reconcile()
        self._loop = asyncio.create_task(self._reconcile_forever(), name="engine:supervisor")
        if self.share is not None:
            self._beats = asyncio.create_task(self._beat_forever(), name="engine:share")

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
                try:
                    engine = FabricRunner(fabric, share=self.share)
                except NoSource as exc:
                    log.error("fabric %s: %s", fabric.slug, exc)
                    continue
                self.tasks[pk] = asyncio.create_task(engine.run(), name=f"engine:{fabric.slug}")
                self.engines[pk] = engine
                self.versions[pk] = fabric.updated
                log.info("engine started for fabric %s (routing engine configured: %s)", fabric.slug,
                         fabric.routing_engine)

    async def _reconcile_forever(self) -> None:
        while True:
            await asyncio.sleep(self.reconcile_s)
            try:
                await self.reconcile()
            except Exception:  # the database may be away for a while; keep the running engines
                log.exception("engine supervisor: reconcile failed")

    async def _beat_forever(self) -> None:
        while True:
            try:
                await self.share.beat(self.tasks)
            except Exception:  # Redis away: the leader locks lapse too; beat again when it is back
                log.exception("engine supervisor: beat failed")
            await asyncio.sleep(self.share.beat_s)

    async def _stop_one(self, pk: int) -> None:
        task = self.tasks.pop(pk)
        self.versions.pop(pk, None)
        engine = self.engines.pop(pk, None)
        if engine is not None:
            engine.request_stop()  # the loop ends at its next tick if the cancellation is lost
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
        if self._beats is not None:
            self._beats.cancel()
            await asyncio.gather(self._beats, return_exceptions=True)
        if self.share is not None:  # the others take this process's fabrics as their locks come free
            try:
                await self.share.leave()
            except Exception:
                log.exception("engine supervisor: could not leave the engine processes' set")
        for pk in list(self.tasks):
            await self._stop_one(pk)
