"""What-if from the live state of a telemetry-fed fabric: today's jobs, a failure or another routing engine.

The baseline is the fabric as discovered with the routing in force (OpenSM's LFTs);
the alternative removes the failed cables (a switch fails with all its cables) and
routes again with ``engine`` (the engine the subnet manager would run; a different
one to compare engines). Both sides run the known jobs' collectives
(:func:`fabric_engine.analysis.whatif.what_if`); per job the predicted slowdown is
the ratio of collective times, slowest rail, shown beside what the job is observed
to do now.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..analysis.whatif import what_if
from ..errors import FabricEngineError
from ..routing import Routing
from ..topology import KIND_SWITCH, Fabric
from .catalog import KnownJob, workload_jobs

__all__ = ["switch_cables", "live_what_if"]


def switch_cables(fabric: Fabric, switches: Sequence[int | str]) -> np.ndarray:
    """Cable indices (``0..L-1``) of every cable of the named switches (names or node indices), int64."""
    nodes = []
    for s in switches:  # a handful of switches
        try:
            node = fabric.node(s) if isinstance(s, str) else int(s)
        except KeyError:
            raise FabricEngineError(f"no switch {s!r} in the fabric") from None
        if not 0 <= node < fabric.num_nodes or fabric.kind[node] != KIND_SWITCH:
            raise FabricEngineError(f"{s!r} is not a switch of the fabric")
        nodes.append(node)
    hit = np.isin(fabric.a_node, nodes) | np.isin(fabric.b_node, nodes)
    return np.flatnonzero(hit)


def live_what_if(routing: Routing, jobs: Sequence[KnownJob], *, engine: str, failed_cables: Sequence[int] = (),
                 failed_switches: Sequence[int | str] = (), other_engine: str | None = None,
                 observed: dict[str, dict] | None = None, ebb_patterns: int = 0) -> dict:
    """Predicted per-job slowdown of today's jobs under a failure or another engine, beside what is observed.

    Parameters
    ----------
    routing : Routing
        The routing in force on the discovered fabric (the baseline).
    jobs : sequence of KnownJob
        The running jobs, placed on that fabric.
    engine : str
        Routing engine that re-routes after a failure (the subnet manager's).
    observed : dict, optional
        Job ID -> the twin's job dict (``observed_gbps``, ``activity``, ``observed`` figures).

    Returns
    -------
    dict
        ``{"baseline", "alternative"}`` (:meth:`WhatIf.as_dict`) plus ``jobs``: per known job
        ``{"id", "tenant", "comm_s", "comm_s_after", "slowdown", "unrouted_after", "observed_gbps",
        "observed_busbw_GBps"}`` and ``failed_cables``.
    """
    f = routing.fabric
    failed = set(int(c) for c in failed_cables) | set(switch_cables(f, failed_switches).tolist())
    if not failed and not other_engine:
        raise FabricEngineError("what-if: fail a cable or a switch, or choose another routing engine")
    wl, owner = workload_jobs(list(jobs))
    result = what_if(f, wl, engine=engine, other_engine=other_engine, failed_cables=sorted(failed),
                     baseline_routing=routing, ebb_patterns=ebb_patterns)
    base = {j["id"]: j for j in result.baseline.jobs}
    alt = {j["id"]: j for j in result.alternative.jobs}
    observed = observed or {}
    out = []
    for k, kj in enumerate(jobs):  # one entry per job (its rails folded into the slowest)
        names = [wl[i].name for i in np.flatnonzero(owner == k)]
        before = [base[n]["comm_s"] for n in names]
        after = [alt[n]["comm_s"] for n in names]
        t0 = max((x for x in before if x is not None), default=None)
        t1 = None if any(x is None for x in after) else max(after, default=None)
        seen = observed.get(kj.job_id, {})
        out.append({"id": kj.job_id, "tenant": kj.tenant, "comm_s": t0, "comm_s_after": t1,
                    "slowdown": None if (t0 in (None, 0) or t1 is None) else round(t1 / t0, 4),
                    "unrouted_after": t1 is None and bool(names),
                    "observed_gbps": seen.get("observed_gbps"),
                    "observed_busbw_GBps": (seen.get("observed") or {}).get("busbw_GBps")})
    return {**result.as_dict(), "jobs": out, "failed_cables": sorted(failed)}
