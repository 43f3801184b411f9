"""The Health pages: of a fabric, its link health report (:mod:`ibweb.live.health`) as the visitor may see it,
server-rendered (the counts by grade, the worst ports with their evidence, the cable swaps, the cable inventory
with its CSV download); of a cluster, the worst ports of all its planes ranked together
(:mod:`.cluster_health`). Both carry a Validation section (issue 38), drawn in the browser from the fabric's
validation API (``frontend/src/pages/validation.js``) or the cluster's (:mod:`.cluster_validation`)."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from rest_framework.exceptions import APIException

from ibweb.access import view_of, visible_fabrics
from ibweb.auth.permissions import view_required
from ibweb.http.csv_cells import csv_cell
from ibweb.live.api.health_cables import FILTERS, cable_rows
from ibweb.live.health.cables import TEXT
from ibweb.live.health.shown import report_for
from ibweb.live.validation import store as validation_store
from ibweb.twin.models import CablingPlan

from .cluster import visible_clusters
from .cluster_health import cluster_health, port_anchor

__all__ = ["fabric_health", "fabric_cables_csv", "cluster_health_page", "CABLES_PAGE"]

#: Cable ends a Health page lists at once.
CABLES_PAGE = 100
#: Columns of the cable inventory's CSV.
CSV_COLUMNS = ("node", "guid", "port", "kind", *TEXT, "length_m")


def _when(t: float | None) -> datetime | None:
    return None if t is None else datetime.fromtimestamp(t, UTC)


def _page_rows(report: dict) -> dict:
    """``report`` with times as datetimes for the template (a copy; the entries' episodes and swaps)."""
    worst = []
    for e in report["worst"]:
        downs = e.get("downs")
        if downs:
            downs = {**downs, "episodes": [{**ep, "start_at": _when(ep["start"]), "end_at": _when(ep["end"])}
                                           for ep in downs["episodes"]]}
        worst.append({**e, "downs": downs, "anchor": port_anchor(e["node"], e["port"])})
    return {**report, "worst": worst, "graded_at": _when(report.get("t")),
            "swaps": [{**s, "at": _when(s.get("t"))} for s in reversed(report.get("swaps", []))]}


def _offset(raw: str | None) -> int:
    return int(raw) if raw and raw.isascii() and raw.isdigit() and len(raw) < 10 else 0


def _cables(request, fabric) -> dict:
    """The page's cable inventory section: one page of rows filtered as the query asks, or why there is none."""
    filters = {k: request.GET[k] for k in FILTERS if request.GET.get(k)}
    try:
        rows, inv = cable_rows(request.user, fabric, filters)
    except APIException as e:  # none yet (404) or being read again (503)
        return {"problem": str(e.detail), "filters": filters}
    offset = min(_offset(request.GET.get("offset")), max(len(rows) - 1, 0))
    page = rows[offset:offset + CABLES_PAGE]

    def at(o: int) -> str:
        return "?" + urlencode({**filters, "offset": o}) + "#cables"

    return {"rows": page, "count": len(rows), "first": offset + 1 if page else 0, "last": offset + len(page),
            "previous": at(max(offset - CABLES_PAGE, 0)) if offset else None,
            "next": at(offset + CABLES_PAGE) if offset + CABLES_PAGE < len(rows) else None,
            "filters": filters, "read_at": _when(inv.get("t")),
            "csv": "cables.csv" + ("?" + urlencode(filters) if filters else "")}


@view_required
def fabric_health(request, slug: str):
    """Link health of one fabric: BER graded, modules against their thresholds, downs, cable swaps, cables."""
    fabric = get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)
    report = report_for(request.user, fabric)
    return render(request, "dashboard/health.html", {
        "fabric": fabric, "fabric_nav": fabric, "nav": "health", "report": _page_rows(report) if report else None,
        "interval_s": settings.IBWEB_HEALTH_INTERVAL_S, "cables": _cables(request, fabric),
        "cable_filters": [(k, text, request.GET.get(k, "")) for k, text in FILTERS.items()],
        **_validation(request, fabric)})


def _validation(request, fabric) -> dict:
    """What the Validation section's frame says (the section itself is drawn from its API by the page's module):
    whether the fabric has a cabling plan, the interval, and whether the visitor may start the cable what-if of an
    advised port (the analyses API's permission)."""
    return {"has_plan": CablingPlan.objects.filter(fabric=fabric).exists(),
            "validation_interval_min": max(1, round(validation_store.interval_s() / 60)),
            "may_whatif": request.user.has_perm("fabrics.add_analysis")}


class _Echo:
    def write(self, value: str) -> str:
        return value


@view_required
def fabric_cables_csv(request, slug: str):
    """The fabric's cable inventory as CSV (filtered as the page's query asks); 404 while it has none."""
    fabric = get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)
    filters = {k: request.GET[k] for k in FILTERS if request.GET.get(k)}
    try:
        rows, _ = cable_rows(request.user, fabric, filters)
    except APIException as e:
        return HttpResponse(f"{e.detail}\n", status=e.status_code, content_type="text/plain; charset=utf-8")
    writer = csv.DictWriter(_Echo(), fieldnames=CSV_COLUMNS)

    def lines():
        yield writer.writeheader()
        for start in range(0, len(rows), 1000):  # a thousand rows made at a time
            for row in rows[start:start + 1000]:
                yield writer.writerow({k: csv_cell(row[k]) for k in CSV_COLUMNS})

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{fabric.slug}-cables.csv"'
    return response


@view_required
def cluster_health_page(request, slug: str):
    """Link health of a cluster: the worst ports of all its planes the visitor may open, ranked together."""
    view = view_of(request.user)
    cluster = get_object_or_404(visible_clusters(view), slug=slug)
    health = cluster_health(view, request.user, cluster)
    for e in health["worst"]:
        downs = e.get("downs")
        e["downs"] = downs and {**downs, "episodes": [{**ep, "start_at": _when(ep["start"])}
                                                      for ep in downs["episodes"]]}
    for p in health["planes"]:
        p["graded_at"] = _when(p["t"])
    return render(request, "dashboard/cluster_health.html", {
        "cluster": cluster, "cluster_nav": cluster, "nav": "fabrics", "cluster_tab": "health", "health": health})
