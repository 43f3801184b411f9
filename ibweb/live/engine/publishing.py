"""What a fabric runner hands its publishers: the publisher protocol, one tick's frame and a topology change.

The runner (:class:`~ibweb.live.engine.runner.FabricRunner`) leads, steps its source and calls each of its
publishers in turn (``/metrics`` counters, the feed, the history ring, the signals): once per new runtime
record (:meth:`Publisher.topology_changed`) and once per published state (:meth:`Publisher.publish`). They
run one after the other in that order: an error in one fails the tick for the ones after it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from fabric_engine.state import FabricState
    from fabric_engine.topology import Fabric

__all__ = ["Publisher", "Tick", "TopologyChange"]


@dataclass(eq=False)
class Tick:
    """One published state and what its publishers share.

    ``fabric``: the source's fabric; ``totals``: the frame's totals (hosts, switches, links, the source's
    totals, ``step_ms``); ``measured``: the source's raw counters for ``/metrics`` (None: integrate the
    rates); ``policy``: the policy version applied (views are computed again when it changes); ``down``: the
    source's cables down (``link_down`` condition alerts, plan or not; None: the state's condition alerts).
    """

    state: FabricState
    fabric: Fabric
    totals: dict
    measured: Any = None
    policy: tuple | None = None
    down: list[dict] | None = None

    @cached_property
    def header(self) -> dict:
        """The frame's header as the ``ALL`` view sees it (computed once, by its first reader)."""
        return self.state.frame_header(self.totals)


@dataclass(frozen=True, eq=False)
class TopologyChange:
    """A runtime record published for the source's (new) fabric.

    ``announce``: send connected clients a new snapshot: True always, False never, None only when the
    topology or header differs from what they were sent, or ``rerouted`` (the record before was routed by
    another engine).
    """

    version: str
    fabric: Fabric
    announce: bool | None = True
    rerouted: bool = False


@runtime_checkable
class Publisher(Protocol):
    """One kind of output of a fabric's leader."""

    async def topology_changed(self, change: TopologyChange) -> None:
        """A new runtime record (and topology) was published."""

    async def publish(self, version: str | None, tick: Tick) -> None:
        """Publish ``tick.state``, a state on the fabric of record version ``version``."""

    def reset(self) -> None:
        """Forget what earlier ticks left (a cold standby after the hand-over)."""

    def pending(self) -> list[asyncio.Task]:
        """Tasks this publisher started that may still run (signals being sent, rollups)."""
