"""A cluster's validation: each plane's report (:func:`ibweb.live.validation.answer.validation_for`, as the viewer
may read it) side by side with its KPIs and counts, the KPIs summed over the planes, and the findings of every
plane ranked together (worst first), each with its plane, a link to the plane's Health page and its map.
``GET /api/clusters/<slug>/validation/`` (``?problems=1``: only what failed)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from fabric_engine.validation import SEVERITIES
from ibweb.access import View, view_of
from ibweb.fabrics.models import Cluster
from ibweb.live.api.base import query_flag
from ibweb.live.validation.answer import NotReady, validation_for

from .cluster import _fabrics, visible_clusters
from .views import MayView

__all__ = ["cluster_validation", "ClusterValidationView", "MOST_FINDINGS"]

#: Findings a cluster's answer lists at most (the worst); each plane's own report has them all.
MOST_FINDINGS = 500


def _share(n: int, d: int) -> float | None:
    return None if d == 0 else round(n / d, 6)


def _summed(planes: list[dict]) -> dict:
    """The KPIs of the planes with a report, summed: connected endpoints, healthy links, planned cables as found."""
    kp = [p["kpis"] for p in planes if p.get("kpis")]
    conn = [k["connected_endpoints"] for k in kp]
    links = [k["healthy_links"] for k in kp]
    topo = [k["topology_correctness"] for k in kp if k.get("topology_correctness")]
    c, e = sum(x["connected"] for x in conn), sum(x["expected"] for x in conn)
    h, n = sum(x["healthy"] for x in links), sum(x["links"] for x in links)
    planned = sum(x["planned_cables"] for x in topo)
    right = sum(round((x["share"] or 0) * x["planned_cables"]) for x in topo)
    return {"connected_endpoints": {"connected": c, "expected": e, "share": _share(c, e)},
            "healthy_links": {"healthy": h, "links": n, "share": _share(h, n)},
            "topology_correctness": {"share": _share(right, planned), "planned_cables": planned} if topo else None}


def cluster_validation(view: View, user, cluster: Cluster, problems_only: bool = False,
                       most: int = MOST_FINDINGS) -> dict:
    """``{"planes": [{slug, name, role, rail, t, kpis, counts, checks, health_url, problem}], "kpis", "counts",
    "findings": [... with plane, plane_name, health_url, map_url], "listed", "total"}``."""
    planes, ranked = [], []
    counts = dict.fromkeys(SEVERITIES, 0)
    for order, row in enumerate(_fabrics(view, cluster)):  # a cluster's few planes
        plane = {"slug": row.slug, "name": row.name, "role": row.cluster_role, "rail": row.rail,
                 "health_url": f"/fabrics/{row.slug}/health/#validation", "t": None, "kpis": None, "counts": None,
                 "checks": None, "problem": None}
        try:
            answer = validation_for(user, row, problems_only=problems_only)
        except NotReady as e:
            plane["problem"] = str(e)
            planes.append(plane)
            continue
        report = answer["report"]
        plane.update(t=answer["t"], kpis=report["kpis"], counts=report["counts"], checks=report["checks"])
        planes.append(plane)
        for s, n in report["counts"].items():
            counts[s] += n
        for rank, f in enumerate(report["findings"]):  # each plane's findings, worst first already
            ranked.append(((SEVERITIES.index(f["severity"]), order, rank),
                           {**f, "plane": row.slug, "plane_name": row.name,
                            "health_url": f"/fabrics/{row.slug}/health/#validation"}))
    ranked.sort(key=lambda r: r[0])
    return {"cluster": cluster.slug, "planes": planes, "kpis": _summed(planes), "counts": counts,
            "findings": [f for _, f in ranked[:most]], "listed": min(len(ranked), most), "total": len(ranked),
            "problems_only": problems_only}


@extend_schema(responses=OpenApiTypes.OBJECT)
class ClusterValidationView(APIView):
    """``GET /api/clusters/<slug>/validation/``: the cluster's validation (:func:`cluster_validation`)."""

    permission_classes = [MayView]
    http_method_names = ["get", "head", "options"]

    def get(self, request, slug: str):
        view = view_of(request.user)
        cluster = get_object_or_404(visible_clusters(view), slug=slug)
        problems = query_flag(request, "problems")
        return Response(cluster_validation(view, request.user, cluster, problems_only=problems))
