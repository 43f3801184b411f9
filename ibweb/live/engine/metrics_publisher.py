"""A fabric leader's ``/metrics`` counters: each tick counted by a :class:`~ibweb.runtime.metrics.CounterRecorder`."""

from __future__ import annotations

import asyncio

from ibweb.live.engine.publishing import Tick, TopologyChange
from ibweb.runtime.metrics import CounterRecorder

__all__ = ["MetricsPublisher"]


class MetricsPublisher:
    """Counts one fabric's ticks for ``/metrics`` (a :class:`~ibweb.live.engine.publishing.Publisher`)."""

    def __init__(self, fabric_id: int) -> None:
        self.fabric_id = fabric_id
        self.counters = CounterRecorder(fabric_id)

    async def topology_changed(self, change: TopologyChange) -> None:
        """Nothing: the recorder starts again on the first tick of another fabric or record version."""

    async def publish(self, version: str | None, tick: Tick) -> None:
        """Count the tick (in a worker thread: the entry is written to the cache every few seconds).

        The ports down are those of the source's cables down (:meth:`FabricSource.cables_down`): with a cabling
        plan the state's alerts name a cut cable as the plan's difference, without its ports.
        """
        await asyncio.to_thread(self.counters.add, tick.fabric, tick.state, tick.measured, version, tick.down)

    def reset(self) -> None:
        """Count from zero (a cold standby, should it lead again)."""
        self.counters = CounterRecorder(self.fabric_id)

    def pending(self) -> list[asyncio.Task]:
        return []
