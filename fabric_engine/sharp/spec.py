"""The ``sharp`` key of a scenario spec."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import FabricEngineError
from ..routing import Routing
from ..workload import Job
from .manager import AggregationManager
from .resources import SharpConfig, generation_for

__all__ = ["manager_from_spec"]

_KEYS = {"generation", "sat_trees", "sat_per_switch", "sat_per_port", "flows_per_switch", "efficiency",
         "allowed_tenants", "enabled"}


def manager_from_spec(routing: Routing, data: dict | None, jobs: Sequence[Job],
                      allowed_tenants: Iterable[str] | None = None) -> AggregationManager | None:
    """An aggregation manager for ``{"generation", "efficiency", "allowed_tenants", ...}`` (see :class:`SharpConfig`).

    Built when the spec has a ``sharp`` key (``"enabled": false`` turns it off) or a job asks
    for SHARP; ``generation`` defaults to the one the link speed suggests. ``allowed_tenants``,
    when given, overrides the spec's list (the web app hands in its tenancy policy as a set).
    """
    if data is None and not any(j.sharp for j in jobs):
        return None
    data = dict(data or {})
    unknown = set(data) - _KEYS
    if unknown:
        raise FabricEngineError(f"sharp: unknown key(s) {', '.join(sorted(unknown))}; "
                                f"known: {', '.join(sorted(_KEYS))}")
    if not data.pop("enabled", True):
        return None
    if allowed_tenants is not None:
        data["allowed_tenants"] = frozenset(allowed_tenants)
    elif data.get("allowed_tenants") is not None:
        data["allowed_tenants"] = frozenset(data["allowed_tenants"])
    data.setdefault("generation", generation_for(routing.fabric))
    return AggregationManager(routing, SharpConfig(**data))
