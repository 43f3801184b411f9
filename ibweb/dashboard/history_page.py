"""The History page of a fabric (issue 40): a time-range picker, the hottest and the most erroring ports over the
window and a chart per chosen port, drawn in the browser (``frontend/src/history/``) from the per-port history
API (``/api/fabrics/fabrics/<slug>/ports/<node>/<port>/tsdb/`` and ``.../tsdb/top/``, :mod:`ibweb.live.api.tsdb_views`),
which applies what the visitor may see. The page carries the catalog of stored series, so the browser offers
every error counter the store keeps."""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import get_object_or_404, render

from ibweb.access import view_of, visible_fabrics
from ibweb.auth.permissions import view_required
from ibweb.tsdb.series import SERIES

__all__ = ["fabric_history", "series_catalog"]


def series_catalog() -> list[dict[str, str]]:
    """Every stored series as ``{"name", "unit", "agg"}``, in the catalog's order."""
    return [{"name": s.name, "unit": s.unit, "agg": s.agg} for s in SERIES.values()]


@view_required
def fabric_history(request, slug: str):
    """Per-port history of one fabric over a window: the hottest and most erroring ports, a chart per port."""
    fabric = get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)
    return render(request, "dashboard/history.html", {
        "fabric": fabric, "fabric_nav": fabric, "nav": "history", "catalog": series_catalog(),
        "retention_days": settings.IBWEB_TSDB_RETENTION_DAYS})
