"""A cluster's fabrics side by side: cards per fabric, the planes compared, storage beside compute, hosts joined.

Each fabric's numbers come from what its engine keeps in the cache (the newest frame header, the
runtime record's fabric), whichever process leads it: a cluster's planes may run in different engine
processes. Only the fabrics the viewer may open are shown (:func:`ibweb.access.visible_fabrics`), and of
each only the jobs of the tenants the viewer may see (:func:`ibweb.access.redaction`); a viewer who does not
see every tenant gets host counts, never host names.
"""

from __future__ import annotations

import threading

import numpy as np

from fabric_engine.cluster import cluster_whatif, compare_planes, join_hosts, twin_across_planes
from ibweb.access import View, redaction, visible_fabrics
from ibweb.fabrics.analyses import AnalysisKind, AnalysisStatus
from ibweb.fabrics.choices import FabricMode, FabricRole
from ibweb.fabrics.models import Analysis, Cluster
from ibweb.live.feed.frame_store import newest_frame
from ibweb.runtime import record
from ibweb.twin.report_cache import report as twin_report

from .overview import fabric_cards

__all__ = ["visible_clusters", "cluster_cards", "cluster_detail"]

_ROLE_ORDER = {FabricRole.COMPUTE: 0, FabricRole.STORAGE: 1, FabricRole.MANAGEMENT: 2}
#: Hosts joined per cluster, for the record versions they were joined from (one entry per cluster).
_joined: dict[int, tuple[tuple, object]] = {}
_joined_lock = threading.Lock()


def visible_clusters(view: View):
    """The clusters with at least one fabric ``view`` may open."""
    return Cluster.objects.filter(fabrics__in=visible_fabrics(view)).distinct().order_by("name")


def _fabrics(view: View, cluster: Cluster) -> list:
    rows = list(visible_fabrics(view).filter(cluster=cluster))
    return sorted(rows, key=lambda f: (_ROLE_ORDER.get(f.cluster_role, 3), f.rail or 0, f.slug))


def _card(fabric, card: dict) -> dict:
    return {**card, "role": fabric.cluster_role, "rail": fabric.rail}


def cluster_cards(view: View, clusters=None, cards: dict[str, dict] | None = None) -> list[dict]:
    """Each visible cluster with its fabrics' cards side by side (the overview's cluster rows).

    ``cards``: fabric cards already made for this view, by slug (the overview makes them once).
    """
    out = []
    for cluster in visible_clusters(view) if clusters is None else clusters:
        fabrics = _fabrics(view, cluster)
        missing = [f for f in fabrics if cards is None or f.slug not in cards]
        made = {c["slug"]: c for c in fabric_cards(view, missing)} if missing else {}
        out.append({"slug": cluster.slug, "name": cluster.name, "url": f"/clusters/{cluster.slug}/",
                    "fabrics": [_card(f, (cards or {}).get(f.slug) or made[f.slug]) for f in fabrics]})
    return out


def _hosts(view: View, cluster: Cluster, fabrics: list) -> dict:
    """How the cluster's hosts join across its fabrics: counts, and for who sees all the names of the hosts that
    have an HCA on some compute plane but not on every one."""
    heads = [(f, record.head_of(f)) for f in fabrics]
    known = [(f, h) for f, h in heads if h is not None]
    if not known:
        return {"hosts": None, "fabrics": {}, "on_every_plane": None, "on_planes": None, "by_sysimg": 0,
                "partial": []}
    versions = tuple((f.pk, record.fabric_version(h)) for f, h in known) + (tuple(cluster.host_patterns or ()),)
    with _joined_lock:
        cached = _joined.get(cluster.pk)
    if cached is not None and cached[0] == versions:
        joined = cached[1]
    else:
        topologies = {f.slug: record.fabric(f.pk, h) for f, h in known}
        joined = join_hosts({k: t for k, t in topologies.items() if t is not None}, cluster.host_patterns)
        with _joined_lock:
            _joined[cluster.pk] = (versions, joined)
    planes = [f.slug for f in fabrics if f.cluster_role == FabricRole.COMPUTE and f.slug in joined.hcas]
    on = {k: (joined.hcas[k] >= 0).any(axis=1) for k in joined.hcas}
    on_planes = np.logical_or.reduce([on[k] for k in planes]) if planes else np.zeros(len(joined.names), bool)
    every = joined.on_every(planes) & on_planes
    partial = np.flatnonzero(on_planes & ~every)[:20].tolist() if view.sees_all else []
    return {"hosts": len(joined.names), "fabrics": {k: int(v.sum()) for k, v in on.items()},
            "on_planes": int(on_planes.sum()), "on_every_plane": int(every.sum()), "by_sysimg": joined.by_sysimg,
            "partial": [joined.names[i] for i in partial]}


def _whatifs(view: View, planes: list, jobs: list[dict]) -> list[dict]:
    """The newest finished cable what-if of each plane, applied to the jobs on the whole cluster."""
    out = []
    for f in planes:
        a = (Analysis.objects.filter(fabric=f, status=AnalysisStatus.DONE,
                                     kind__in=[AnalysisKind.WHATIF_LINKS, AnalysisKind.WHATIF_LIVE])
             .order_by("-finished", "-pk").only("pk", "kind", "finished", "result").first())
        if a is None or not isinstance(a.result, dict):
            continue
        failed = [f"{c.get('a')} – {c.get('b')}" for c in a.result.get("failed") or []] if view.sees_all else []
        rows = cluster_whatif(jobs, f.slug, a.result.get("delta") or [])
        out.append({"plane": f.slug, "analysis": a.pk, "kind": a.kind, "finished": a.finished,
                    "failed_cables": len(a.result.get("failed") or []), "failed": failed,
                    "url": f"/api/fabrics/fabrics/{f.slug}/analyses/{a.pk}/",
                    "jobs": sorted(rows, key=lambda r: -(r["cluster_ratio"] or float("inf")))})
    return out


def _twins(view: View, planes: list) -> dict[str, dict]:
    """Each shown job's expected against observed over the telemetry-fed planes (their twins' newest reports)."""
    reports = []
    for f in planes:
        rep = twin_report(f.pk) if f.mode == FabricMode.TELEMETRY else None
        reports.append(redaction(view, f).jobs(rep.get("jobs") or []) if rep else None)
    return twin_across_planes([f.slug for f in planes], reports) if any(reports) else {}


def cluster_detail(view: View, cluster: Cluster) -> dict:
    """The cluster page's data: the fabrics' cards, the planes compared, the storage fabrics' traffic, the hosts."""
    fabrics = _fabrics(view, cluster)
    cards = {c["slug"]: _card(f, c) for f, c in zip(fabrics, fabric_cards(view, fabrics), strict=True)}
    planes = [f for f in fabrics if f.cluster_role == FabricRole.COMPUTE]
    headers = []
    for f in planes:
        header = newest_frame(f.pk)
        if header is not None:
            header = {**header, "jobs": redaction(view, f).jobs(header.get("jobs") or [])}
        headers.append(header)
    compared = compare_planes([f.slug for f in planes], headers)
    twins = _twins(view, planes)
    for job in compared["jobs"]:
        job["twin"] = twins.get(job["id"])
        job["links"] = {f.slug: f"/fabrics/{f.slug}/?focus=job:{job['id']}" for f in planes
                        if job["planes"][f.slug]["slowdown"] is not None}
    storage = []
    for f in fabrics:
        if f.cluster_role != FabricRole.STORAGE:
            continue
        totals = ((newest_frame(f.pk) or {}).get("storage") or {}).get("totals") or {}
        storage.append({"slug": f.slug, "throughput_gbps": cards[f.slug].get("throughput_gbps"),
                        "read_gbps": totals.get("read_gbps"), "write_gbps": totals.get("write_gbps")})
    compute_gbps = sum(p["throughput_gbps"] or 0.0 for p in compared["planes"])
    return {"slug": cluster.slug, "name": cluster.name, "description": cluster.description,
            "fabrics": [cards[f.slug] for f in fabrics], "planes": compared["planes"],
            "imbalance": compared["imbalance"], "jobs": compared["jobs"],
            "compute_gbps": round(compute_gbps, 3), "storage": storage, "hosts": _hosts(view, cluster, fabrics),
            "whatifs": _whatifs(view, planes, compared["jobs"])}
