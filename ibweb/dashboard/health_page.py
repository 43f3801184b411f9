"""The Health page of a fabric: its link health report (:mod:`ibweb.live.health`) as the visitor may see it,
server-rendered: the counts by grade, the worst ports with their evidence, the cable swaps."""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.shortcuts import get_object_or_404, render

from ibweb.access import view_of, visible_fabrics
from ibweb.auth.permissions import view_required
from ibweb.live.health.shown import report_for

__all__ = ["fabric_health"]


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
        worst.append({**e, "downs": downs})
    return {**report, "worst": worst, "graded_at": _when(report.get("t")),
            "swaps": [{**s, "at": _when(s.get("t"))} for s in reversed(report.get("swaps", []))]}


@view_required
def fabric_health(request, slug: str):
    """Link health of one fabric: BER graded, modules against their thresholds, downs, cable swaps."""
    fabric = get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)
    report = report_for(request.user, fabric)
    return render(request, "dashboard/health.html", {
        "fabric": fabric, "fabric_nav": fabric, "nav": "health", "report": _page_rows(report) if report else None,
        "interval_s": settings.IBWEB_HEALTH_INTERVAL_S})
