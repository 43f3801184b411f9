"""A fabric leader's history: each tick's per-link rates into the ring (:mod:`ibweb.live.history.ring`), and the
rollup of finished minutes started when a tick enters a new minute (:func:`ibweb.live.tasks.rollup_history`)."""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings

from ibweb.db.retry import retry_locked
from ibweb.live.engine.publishing import Tick, TopologyChange
from ibweb.live.history import ring

__all__ = ["HistoryPublisher", "AUTO_ROLLUP"]

log = logging.getLogger("ibweb.live")

#: Start the rollup of finished minutes when a tick enters a new minute (off where a Celery beat runs it).
AUTO_ROLLUP = bool(getattr(settings, "IBWEB_HISTORY_AUTO_ROLLUP", True))


class HistoryPublisher:
    """Records one fabric's ticks in its history ring (a :class:`~ibweb.live.engine.publishing.Publisher`)."""

    def __init__(self, fabric_id: int, slug: str) -> None:
        self.fabric_id = fabric_id
        self.slug = slug
        self._background: set[asyncio.Task] = set()

    async def topology_changed(self, change: TopologyChange) -> None:
        """Nothing: each tick names the record version of its fabric."""

    async def publish(self, version: str | None, tick: Tick) -> None:
        """Record the tick's rates and utilization, of the links of record version ``version``'s fabric."""
        state = tick.state
        if await ring.record(self.fabric_id, state.seq, state.t, state.rate_gbps, state.util,
                             topology=version, fabric=tick.fabric, tick_s=state.tick_s,
                             missing=state.stale) and AUTO_ROLLUP:
            self._start_rollup()

    def reset(self) -> None:
        """Nothing: the ring continues (a new leader continues the sequence)."""

    def pending(self) -> list[asyncio.Task]:
        return list(self._background)

    def _start_rollup(self) -> None:
        """Roll up the finished minutes of the history ring (in a thread; with Celery workers only queued)."""
        from ibweb.live.tasks import rollup_history

        def run() -> None:
            try:  # eager (embedded default): rolled up here, waiting out a locked database
                retry_locked(rollup_history.delay, self.fabric_id, what=f"rollups of fabric {self.slug}")
            except Exception:
                log.exception("fabric %s: history rollup failed", self.slug)

        task = asyncio.get_running_loop().create_task(asyncio.to_thread(run))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
