"""What-if: the same workload under two routings, or with links failed, side by side.

Each side routes the fabric (after removing failed cables, rerouting with the
same or another engine), runs every job's collective at once (the worst overlap)
and reports per job the collective time, its slowdown against the job alone on
the healthy baseline, the achieved bandwidth and the links that limit it, plus
the fabric's link load and optionally its eBB. Per-link arrays are returned in
the baseline's directed-link order (failed links read 0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..errors import FabricEngineError
from ..flows import group_max, max_min_fair, solve_paced
from ..routing import Routing, route
from ..topology import Fabric
from ..workload import Job, expand_jobs
from .ebb import effective_bisection_bandwidth

__all__ = ["Side", "WhatIf", "workload_impact", "what_if", "link_map", "whatif_report", "whatif_summary", "cable_label"]


@dataclass(frozen=True)
class Side:
    """One side of a what-if: its label, routing engine, failed cables, per-job and per-link results."""

    label: str
    engine: str
    failed_cables: tuple[int, ...]
    jobs: list[dict]
    rate_gbps: np.ndarray
    util: np.ndarray
    unrouted_flows: int
    ebb: float | None = None

    def as_dict(self) -> dict:
        return {"label": self.label, "engine": self.engine, "failed_cables": list(self.failed_cables),
                "jobs": self.jobs, "max_util": round(float(self.util.max(initial=0.0)), 4),
                "unrouted_flows": self.unrouted_flows, "ebb": None if self.ebb is None else round(self.ebb, 6)}


@dataclass(frozen=True)
class WhatIf:
    """Baseline and alternative side by side; ``delta`` per job: change of collective time (ratio)."""

    baseline: Side
    alternative: Side
    delta: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"baseline": self.baseline.as_dict(), "alternative": self.alternative.as_dict(), "delta": self.delta}


def link_map(fabric: Fabric, failed_cables: Sequence[int]) -> np.ndarray:
    """For every directed link of ``fabric.without_links(failed_cables)``, its index in ``fabric``, int64."""
    keep = np.ones(fabric.num_links, dtype=bool)
    keep[np.asarray(list(failed_cables), dtype=np.int64)] = False
    kept = np.flatnonzero(keep)
    return np.concatenate([kept, kept + fabric.num_links])


def workload_impact(routing: Routing, jobs: Sequence[Job], alone_s: np.ndarray | None = None,
                    paths: Callable | None = None) -> tuple[list[dict], np.ndarray, np.ndarray, int]:
    """All jobs' collectives at once on ``routing``.

    Returns per-job dicts (``id``, ``comm_s``, ``comm_alone_s``, ``slowdown``,
    ``achieved_gbps``, ``limiting_links``), per-link rate, the collective times
    alone on this routing, and the number of flows without a route.
    """
    f = routing.fabric
    jf = expand_jobs(list(jobs), f, paths or routing.paths)
    fl, inc = jf.flows, jf.incidence
    n, e = len(jobs), 2 * f.num_links
    dem = np.where(jf.broken, 0.0, fl.demand_gbps)
    gbits = fl.nbytes * 8e-9
    owner = fl.job.astype(np.int64)
    row_job = np.repeat(owner, np.diff(inc.indptr))
    block = sp.csr_matrix((inc.data, inc.indices + row_job * e, inc.indptr), shape=(len(fl), n * e))
    alone_rate = max_min_fair(block, np.tile(f.capacity_gbps, n), dem, fl.weight)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_alone = np.where(gbits > 0, gbits / alone_rate, 0.0)
    own_alone = group_max(t_alone, owner, n)
    ref = own_alone if alone_s is None else alone_s
    rate, bott, comm = solve_paced(inc, f.capacity_gbps, dem, fl.weight, gbits, owner, n)
    link_rate = np.asarray(inc.T @ rate).ravel()
    util = link_rate / f.capacity_gbps
    achieved = np.bincount(owner, weights=rate, minlength=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_flow = np.where(gbits > 0, gbits / rate, 0.0)
    out = []
    for k, job in enumerate(jobs):  # one entry per job
        rows = slice(jf.offsets[k], jf.offsets[k + 1])
        slow = (t_flow[rows] >= comm[k] * (1 - 1e-3)) & (bott[rows] >= 0)
        links = np.unique(bott[rows][slow])
        links = links[np.argsort(-util[links], kind="stable")][:3]
        out.append({"id": job.name, "tenant": job.tenant, "comm_s": _num(comm[k]), "comm_alone_s": _num(ref[k]),
                    "slowdown": _num(comm[k] / ref[k]) if ref[k] > 0 else 1.0,
                    "achieved_gbps": round(float(achieved[k]), 3), "limiting_links": [int(x) for x in links]})
    return out, link_rate, own_alone, int(jf.broken.sum())


def _num(x: float) -> float | None:
    return round(float(x), 6) if np.isfinite(x) else None


def what_if(fabric: Fabric, jobs: Sequence[Job], *, engine: str = "minhop", other_engine: str | None = None,
            failed_cables: Sequence[int] = (), baseline_routing: Routing | None = None, ebb_patterns: int = 0,
            seed: int = 1) -> WhatIf:
    """Compare the workload on ``fabric`` routed by ``engine`` with the alternative.

    The alternative removes ``failed_cables`` (cable indices ``0..L-1``) and routes
    again with ``other_engine`` (default: the same engine). Slowdowns on both sides
    are against each job alone on the baseline. With ``ebb_patterns`` > 0 each
    side also gets its eBB over that many random bisections.
    """
    failed = tuple(int(c) for c in failed_cables)
    if any(c < 0 or c >= fabric.num_links for c in failed):
        raise FabricEngineError(f"failed cable outside 0..{fabric.num_links - 1}")
    base = baseline_routing or route(fabric, engine)
    alt_fabric = fabric.without_links(failed) if failed else fabric
    alt = route(alt_fabric, other_engine or engine) if (failed or other_engine) else base
    jobs_b, rate_b, alone, broken_b = workload_impact(base, jobs)
    jobs_a, rate_a_local, _, broken_a = workload_impact(alt, jobs, alone_s=alone)
    rate_a = np.zeros(2 * fabric.num_links)
    rate_a[link_map(fabric, failed)] = rate_a_local
    cap = fabric.capacity_gbps
    ebb_b = ebb_a = None
    if ebb_patterns:
        ebb_b = effective_bisection_bandwidth(base, ebb_patterns, seed).ebb
        ebb_a = effective_bisection_bandwidth(alt, ebb_patterns, seed).ebb
    side_b = Side("baseline", base.engine, (), jobs_b, rate_b, rate_b / cap, broken_b, ebb_b)
    side_a = Side("alternative", alt.engine, failed, jobs_a, rate_a, rate_a / cap, broken_a, ebb_a)
    delta = []
    for jb, ja in zip(jobs_b, jobs_a, strict=True):
        ratio = None if (jb["comm_s"] in (None, 0) or ja["comm_s"] is None) else round(ja["comm_s"] / jb["comm_s"], 6)
        delta.append({"id": jb["id"], "tenant": jb.get("tenant"), "comm_ratio": ratio})
    return WhatIf(side_b, side_a, delta)


def cable_label(fabric: Fabric, c: int) -> dict:
    """``{"cable", "a": "node/port", "b": "node/port"}`` of cable ``c``."""
    a, b = int(fabric.a_node[c]), int(fabric.b_node[c])
    return {"cable": int(c), "a": f"{fabric.node_name[a]}/{int(fabric.a_port[c])}",
            "b": f"{fabric.node_name[b]}/{int(fabric.b_port[c])}"}


def whatif_summary(out: dict) -> dict:
    """Counts of a what-if result (``delta``, ``baseline``, ``alternative``): jobs slower, faster and broken,
    the worst job, the eBB change and the unrouted flows of each side."""
    ratios = [d["comm_ratio"] for d in out["delta"]]
    known = [(r, d["id"]) for r, d in zip(ratios, out["delta"], strict=True) if r is not None]
    worst = max(known, default=None)
    worst = worst if worst is not None and worst[0] > 1 + 1e-6 else None
    b, a = out["baseline"], out["alternative"]
    ebb_b, ebb_a = b.get("ebb"), a.get("ebb")
    return {"jobs": len(ratios), "jobs_slower": sum(r is not None and r > 1 + 1e-6 for r in ratios),
            "jobs_faster": sum(r is not None and r < 1 - 1e-6 for r in ratios),
            "jobs_broken": sum(r is None for r in ratios),
            "worst_job": None if worst is None else {"id": worst[1], "comm_ratio": worst[0]},
            "ebb_delta": None if ebb_b is None or ebb_a is None else round(ebb_a - ebb_b, 6),
            "unrouted_flows": [b.get("unrouted_flows", 0), a.get("unrouted_flows", 0)]}


def whatif_report(baseline: Routing, jobs: Sequence[Job], *, failed_cables: Sequence[int] = (),
                  other_engine: str | None = None, ebb_patterns: int = 0, seed: int = 1, paths: Callable | None = None,
                  progress: Callable[[float, str], None] | None = None) -> dict:
    """A what-if as an analysis result: the jobs under ``baseline`` against ``failed_cables`` removed and/or
    ``other_engine``, the ten links whose load changes most, the failed cables named, an eBB per side
    (``ebb_patterns`` > 0) and :func:`whatif_summary`.

    Raises :class:`FabricEngineError` when there are neither jobs nor eBB patterns to compare.
    """
    report = progress or (lambda f, m: None)
    fabric = baseline.fabric
    failed = list(failed_cables)
    if not jobs and not ebb_patterns:
        raise FabricEngineError("ebb_patterns: the fabric has no jobs to compare: ask for an eBB per side (> 0)")
    report(0.1, f"rerouting with {other_engine or baseline.engine}"
           + (f" without {len(failed)} cable(s)" if failed else ""))
    if jobs:
        w = what_if(fabric, jobs, engine=baseline.engine, other_engine=other_engine, failed_cables=failed,
                    baseline_routing=baseline)
        out = w.as_dict()
        change = w.alternative.util - w.baseline.util
        top = np.argsort(-np.abs(change), kind="stable")[:10]
        top = top[np.abs(change[top]) > 1e-9]
        out["links_changed"] = [{"link": int(d), "baseline_util": round(float(w.baseline.util[d]), 4),
                                 "alternative_util": round(float(w.alternative.util[d]), 4)} for d in top]
    else:  # only the eBB of each side
        out = {"baseline": {"label": "baseline", "engine": baseline.engine, "failed_cables": [], "jobs": []},
               "alternative": {"label": "alternative", "engine": other_engine or baseline.engine,
                               "failed_cables": failed, "jobs": []}, "delta": [], "links_changed": []}
    out["failed"] = [cable_label(fabric, c) for c in failed]
    if ebb_patterns:
        # what_if keeps its alternative routing to itself: route it again for its eBB (cheap next to the eBB)
        alt = route(fabric.without_links(failed) if failed else fabric, other_engine or baseline.engine)
        for k, (label, routing) in enumerate((("baseline", baseline), ("alternative", alt))):  # two sides
            lo = 0.4 + 0.3 * k
            res = effective_bisection_bandwidth(
                routing, ebb_patterns, seed, paths=paths,
                progress=lambda f, lo=lo, label=label: report(lo + 0.3 * f, f"eBB of the {label}: "
                                                                            f"{round(f * ebb_patterns)} of "
                                                                            f"{ebb_patterns} patterns"))
            out[label]["ebb"] = round(res.ebb, 6)
    out["summary"] = whatif_summary(out)
    return out
