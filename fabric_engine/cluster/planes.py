"""A cluster's compute planes compared from their newest frame headers (whichever process leads each).

A job that spans the planes runs one ring or tree per rail and each iteration waits for all of them:
its collective runs at the pace of its slowest rail. So a job's cluster slowdown is the largest of its
planes' slowdowns, its communication time the longest, its rate the sum; one degraded plane slows every
job on it. The planes' imbalance is the most loaded plane's throughput over the mean (1.0: even).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["compare_planes", "cluster_whatif", "twin_across_planes"]


def _totals(header: dict | None) -> dict:
    return (header or {}).get("totals") or {}


def _jobs(keys: Sequence[str], headers: Sequence[dict | None]) -> list[dict]:
    ids: dict[str, dict] = {}
    for header in headers:
        for job in (header or {}).get("jobs") or []:
            ids.setdefault(str(job.get("id")), {"tenant": job.get("tenant"), "pattern": job.get("pattern"),
                                               "hosts": job.get("hosts")})
    order = list(ids)
    at = {j: i for i, j in enumerate(order)}
    shape = (len(order), len(keys))
    slow, comm, rate = np.full(shape, np.nan), np.full(shape, np.nan), np.zeros(shape)
    active = np.zeros(shape, dtype=bool)
    for p, header in enumerate(headers):
        for job in (header or {}).get("jobs") or []:
            i = at[str(job.get("id"))]
            slow[i, p] = job.get("slowdown") if job.get("slowdown") is not None else np.nan
            comm[i, p] = job.get("comm_s") if job.get("comm_s") is not None else np.nan
            rate[i, p] = float(job.get("achieved_gbps") or 0.0)
            active[i, p] = bool(job.get("active"))
    rows = []
    for i, job_id in enumerate(order):
        seen = ~np.isnan(slow[i])
        worst = int(np.nanargmax(np.where(seen, slow[i], -np.inf))) if seen.any() else None
        rows.append({"id": job_id, **ids[job_id], "active": bool(active[i].any()),
                     "slowdown": _round(np.nanmax(slow[i]) if seen.any() else None),
                     "comm_s": _round(np.nanmax(comm[i]) if (~np.isnan(comm[i])).any() else None),
                     "achieved_gbps": _round(rate[i].sum()),
                     "slowest_plane": keys[worst] if worst is not None else None,
                     "planes": {k: {"slowdown": _round(slow[i, p]), "comm_s": _round(comm[i, p]),
                                    "achieved_gbps": _round(rate[i, p])} for p, k in enumerate(keys)}})
    return rows


def _round(x, digits: int = 4):
    return None if x is None or not np.isfinite(x) else round(float(x), digits)


def compare_planes(keys: Sequence[str], headers: Sequence[dict | None]) -> dict:
    """Load per plane, the imbalance between planes and each job at its slowest rail.

    ``keys``: the planes (fabric slugs, rail order); ``headers``: each plane's newest frame header (None: no
    frame yet). Returns ``{"planes": [{key, throughput_gbps, congested_links, hottest_util, load}],
    "imbalance": {...}, "jobs": [...]}`` (JSON-ready; see the module docstring).

    >>> h = lambda gbps, slow: {"totals": {"throughput_gbps": gbps, "hottest": {"util": 0.5}},
    ...                         "jobs": [{"id": "llm", "slowdown": slow, "comm_s": slow, "achieved_gbps": gbps}]}
    >>> out = compare_planes(["p1", "p2"], [h(300.0, 1.0), h(100.0, 2.5)])
    >>> out["imbalance"]["max_over_mean"], out["jobs"][0]["slowdown"], out["jobs"][0]["slowest_plane"]
    (1.5, 2.5, 'p2')
    """
    gbps = np.array([float(_totals(h).get("throughput_gbps") or 0.0) for h in headers])
    live = np.array([h is not None for h in headers])
    mean = float(gbps[live].mean()) if live.any() else 0.0
    planes = []
    for k, h, g in zip(keys, headers, gbps.tolist(), strict=True):
        t = _totals(h)
        planes.append({"key": k, "live": h is not None, "throughput_gbps": _round(g) if h is not None else None,
                       "congested_links": t.get("congested_links"), "step_ms": t.get("step_ms"),
                       "t": (h or {}).get("t"),
                       "hottest_util": (t.get("hottest") or {}).get("util"),
                       "load": _round(g / mean) if h is not None and mean > 0 else None})
    imbalance = {"max_over_mean": _round(float(gbps[live].max()) / mean) if mean > 0 else None,
                 "max_over_min": (_round(float(gbps[live].max() / gbps[live].min()))
                                  if live.any() and gbps[live].min() > 0 else None),
                 "least_loaded": keys[int(np.flatnonzero(live)[np.argmin(gbps[live])])] if live.any() else None,
                 "most_loaded": keys[int(np.flatnonzero(live)[np.argmax(gbps[live])])] if live.any() else None}
    jobs = _jobs(keys, headers)
    slowed = [j for j in jobs if j["slowest_plane"] is not None]
    counts = {k: sum(1 for j in slowed if j["slowest_plane"] == k and (j["slowdown"] or 1.0) > 1.0 + 1e-6)
              for k in keys}
    imbalance["jobs_slowest_on"] = counts
    return {"planes": planes, "imbalance": imbalance, "jobs": jobs}


def cluster_whatif(jobs: Sequence[dict], plane: str, delta: Sequence[dict]) -> list[dict]:
    """What a what-if on one plane does to each job on the whole cluster.

    ``jobs``: :func:`compare_planes`' job rows; ``delta``: the what-if's per-job ``{"id", "comm_ratio"}`` on
    ``plane`` (None: the job cannot run there). The job's communication time on that plane is scaled by the
    ratio, the other planes' stay: the cluster-wide ratio is the new slowest rail over the current one. A job
    with no measured time on the other planes counts as even over them (the plane's ratio is the cluster's).

    >>> rows = [{"id": "a", "planes": {"p1": {"comm_s": 1.0}, "p2": {"comm_s": 1.5}}}]
    >>> cluster_whatif(rows, "p1", [{"id": "a", "comm_ratio": 2.0}])[0]["cluster_ratio"]
    1.3333
    """
    ratios = {str(d.get("id")): d.get("comm_ratio") for d in delta}
    out = []
    for job in jobs:
        if job["id"] not in ratios or plane not in job["planes"]:
            continue
        ratio = ratios[job["id"]]
        times_ = {k: v.get("comm_s") for k, v in job["planes"].items()}
        here = times_[plane]
        others = [t for k, t in times_.items() if k != plane and t is not None]
        if ratio is None:
            cluster = None
        elif here is None or not others:
            cluster = ratio
        else:
            now = max([here, *others])
            cluster = max(here * ratio, *others) / now if now > 0 else ratio
        out.append({"id": job["id"], "tenant": job.get("tenant"), "plane_ratio": _round(ratio),
                    "cluster_ratio": _round(cluster)})
    return out


def twin_across_planes(keys: Sequence[str], reports: Sequence[Sequence[dict] | None]) -> dict[str, dict]:
    """Each job's expected against observed traffic over the telemetry-fed planes, at its slowest rail.

    ``reports``: per plane, the twin's job entries (``{"id", "emulated_gbps", "observed_gbps"}``: what the
    model of the job's collective expects it to send there and what the counters show), None where the
    plane has no twin report. A job's ratio on a plane is observed over expected; its ratio on the cluster is
    the smallest over the planes where something is expected (each iteration waits for the slowest rail), and
    its slowest plane is where that is. Returns ``{job id: {"expected_gbps", "observed_gbps", "ratio",
    "slowest_plane", "planes": {key: {"expected_gbps", "observed_gbps", "ratio"}}}}``.

    >>> twin_across_planes(["p1", "p2"], [[{"id": "a", "emulated_gbps": 100.0, "observed_gbps": 95.0}],
    ...                                   [{"id": "a", "emulated_gbps": 100.0, "observed_gbps": 40.0}]])["a"]["ratio"]
    0.4
    """
    ids: dict[str, int] = {}
    for jobs in reports:
        for job in jobs or []:
            ids.setdefault(str(job.get("id")), len(ids))
    shape = (len(ids), len(keys))
    expected, observed = np.full(shape, np.nan), np.full(shape, np.nan)
    for p, jobs in enumerate(reports):
        for job in jobs or []:
            i = ids[str(job.get("id"))]
            expected[i, p] = float(job.get("emulated_gbps") or 0.0)
            observed[i, p] = float(job.get("observed_gbps") or 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(expected > 0, observed / expected, np.nan)
    out = {}
    for job_id, i in ids.items():
        seen = ~np.isnan(ratio[i])
        worst = int(np.flatnonzero(seen)[np.argmin(ratio[i][seen])]) if seen.any() else None
        out[job_id] = {"expected_gbps": _round(np.nansum(expected[i])), "observed_gbps": _round(np.nansum(observed[i])),
                       "ratio": _round(ratio[i, worst]) if worst is not None else None,
                       "slowest_plane": keys[worst] if worst is not None else None,
                       "planes": {k: {"expected_gbps": _round(expected[i, p]), "observed_gbps": _round(observed[i, p]),
                                      "ratio": _round(ratio[i, p])}
                                  for p, k in enumerate(keys) if not np.isnan(expected[i, p])}}
    return out
