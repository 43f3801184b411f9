"""What a fabric runner drives: the source protocol, and which source serves which kind of fabric.

A *source* turns one fabric row into engine data: it builds (or discovers) the
:class:`~fabric_engine.topology.Fabric` and its :class:`~fabric_engine.routing.Routing`,
then hands the runner one :class:`~fabric_engine.state.FabricState` per tick. The
runner (:mod:`ibweb.live.engine.runner`) does everything else the same way for every kind:
leader lock, sequence numbers, publishing, history, metrics, policy and views.

Apps register their sources in their ``ready()`` (:mod:`ibweb.runtime.source_registry`, each kind once),
so that ``ibweb.live`` imports none of them. :func:`source_for` finds the factory (a class, or a function
returning one) for a fabric's ``mode``. The telemetry kind is registered by the twin app, whose factory builds
the telemetry source with the fabric's twin injected (telemetry never imports the twin).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ibweb.runtime import source_registry

if TYPE_CHECKING:
    import numpy as np

    from fabric_engine.backpressure.cc_params import CongestionControl
    from fabric_engine.policy import Policy
    from fabric_engine.routing import Routing
    from fabric_engine.state import FabricState
    from fabric_engine.topology import Fabric
    from fabric_engine.workload import Job

__all__ = ["FabricSource", "Progress", "source_for", "source_kinds", "NoSource"]

#: ``await progress(fraction, message)`` while a source starts (shown to waiting clients).
Progress = Callable[[float, str], Awaitable[None]]

@runtime_checkable
class FabricSource(Protocol):
    """One fabric's engine data, as the runner asks for it.

    Attributes
    ----------
    fabric, routing
        What the source runs on now; ``None`` until :meth:`start` (or, for a source that
        waits for a discovery, until the first one arrived).
    topology_version : int
        Changes whenever ``fabric`` or ``routing`` changed; the runner then publishes the
        topology and the runtime record again and sends every client a new snapshot.
    catalog_version : Hashable
        Changes whenever the job catalog (:meth:`catalog`) does; the runner then publishes a
        record version with the new catalog on the same fabric (no new snapshot).

    The runner owns the sequence numbers: a source numbers a state with the ``seq`` it is given.
    """

    fabric: Fabric | None
    routing: Routing | None
    topology_version: int
    catalog_version: Hashable

    async def start(self, progress: Progress) -> None:
        """Build or discover the fabric and route it (long work runs in threads)."""

    async def step(self, seq: int, now: float) -> FabricState | None:
        """The state of tick ``seq`` at ``now`` (``state.seq == seq``), or None when there is nothing to show."""

    def totals(self) -> dict:
        """Source-specific fields of the frame's ``totals`` (e.g. ``sweep_age_s``, ``routing``)."""

    def jobs(self) -> list[Job]:
        """Every job the source knows of, with its hosts (node indices)."""

    def catalog(self, routing: Routing | None) -> list[dict]:
        """The runtime record's job catalog on ``routing`` (:func:`ibweb.runtime.catalog.job_catalog` entries)."""

    def apply_policy(self, policy: Policy | None) -> None:
        """Use ``policy`` (partitions and QoS on ``fabric``) from the next tick."""

    def apply_congestion_control(self, cc: CongestionControl) -> None:
        """Use the fabric's InfiniBand congestion control settings (its policy's ``cc_*``) from the next tick."""

    def counters(self) -> tuple[np.ndarray, float] | None:
        """Measured per-port counters for ``/metrics`` (``[2L, C]`` float64, time), or None to integrate rates."""

    def cables_down(self) -> list[dict]:
        """The cables down now, as ``link_down`` condition alerts, cabling plan or not (``/metrics`` keeps both
        ports of each at 1; with a plan the state's alerts name them as the plan's instead)."""

    async def stop(self) -> None:
        """Release what the source started (threads, files)."""


class NoSource(LookupError):
    """No app registered a source for a fabric's mode."""


def source_kinds() -> dict[str, Callable[[Any], FabricSource]]:
    """``{mode: its source factory}`` as the apps registered them (:mod:`ibweb.runtime.source_registry`)."""
    return source_registry.factories()


def source_for(mode: str) -> Callable[[Any], FabricSource]:
    """The source factory of fabrics of ``mode`` (called with the fabric row); raises :class:`NoSource` naming
    the known modes."""
    kinds = source_kinds()
    try:
        return kinds[mode]
    except KeyError:
        raise NoSource(f"no source for fabrics of mode {mode!r}; known: {', '.join(sorted(kinds))}") from None
