"""A fabric leader's recent history: each tick's per-link rates into the ring (:mod:`ibweb.live.history.ring`), for
the live charts; what lasts is the per-port history of :mod:`ibweb.live.history.tsdb_publisher`."""

from __future__ import annotations

import asyncio

from ibweb.live.engine.publishing import Tick, TopologyChange
from ibweb.live.history import ring

__all__ = ["HistoryPublisher"]


class HistoryPublisher:
    """Records one fabric's ticks in its history ring (a :class:`~ibweb.live.engine.publishing.Publisher`)."""

    def __init__(self, fabric_id: int, slug: str) -> None:
        self.fabric_id = fabric_id
        self.slug = slug

    async def topology_changed(self, change: TopologyChange) -> None:
        """Nothing: each tick names the record version of its fabric."""

    async def publish(self, version: str | None, tick: Tick) -> None:
        """Record the tick's rates and utilization, of the links of record version ``version``'s fabric."""
        state = tick.state
        await ring.record(self.fabric_id, state.seq, state.t, state.rate_gbps, state.util, topology=version,
                          fabric=tick.fabric, tick_s=state.tick_s, missing=state.stale)

    def reset(self) -> None:
        """Nothing: the ring continues (a new leader continues the sequence)."""

    def pending(self) -> list[asyncio.Task]:
        """None: the ring is written on the tick."""
        return []
