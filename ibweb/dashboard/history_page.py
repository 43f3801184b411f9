"""The History page of a fabric (issue 40): a time-range picker, the hottest and the most erroring ports over the
window and a chart per chosen port, drawn in the browser (``frontend/src/history/``) from the per-port history
API (``/api/fabrics/fabrics/<slug>/ports/<node>/<port>/tsdb/`` and ``.../tsdb/top/``, :mod:`ibweb.live.api.tsdb_views`),
which applies what the visitor may see; a switch's ports side by side from ``.../nodes/<node>/tsdb/``. The page carries
the catalog of stored series, so the browser offers every error counter the store keeps, and the fabric's switch names
(from its runtime record; none before its engine published one) for the switch picker."""

from __future__ import annotations

import numpy as np
from django.conf import settings
from django.shortcuts import get_object_or_404, render

from ibweb.access import view_of, visible_fabrics
from ibweb.auth.permissions import view_required
from ibweb.runtime import record
from ibweb.tsdb.series import SERIES

__all__ = ["MAX_SWITCHES", "fabric_history", "series_catalog", "switch_names"]

#: Switch names the page offers at most (a 32,768-GPU rail-optimized fabric has fewer than 2,000 switches).
MAX_SWITCHES = 8192


def series_catalog() -> list[dict[str, str]]:
    """Every stored series as ``{"name", "unit", "agg"}``, in the catalog's order."""
    return [{"name": s.name, "unit": s.unit, "agg": s.agg} for s in SERIES.values()]


def switch_names(fabric) -> list[str]:
    """The names of ``fabric``'s switches (every node but the hosts: never hidden from a visitor), in node order, as
    its runtime record holds them; none before its engine published one."""
    h = record.head_of(fabric)
    f = record.fabric(fabric.pk, h) if h is not None else None
    if f is None:
        return []
    switch = np.ones(f.num_nodes, dtype=bool)
    switch[np.asarray(f.hosts, dtype=np.int64)] = False
    return f.node_name[np.flatnonzero(switch)[:MAX_SWITCHES]].astype(str).tolist()


@view_required
def fabric_history(request, slug: str):
    """Per-port history of one fabric over a window: the hottest and most erroring ports, a chart per port."""
    fabric = get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)
    return render(request, "dashboard/history.html", {
        "fabric": fabric, "fabric_nav": fabric, "nav": "history", "catalog": series_catalog(),
        "switches": switch_names(fabric), "retention_days": settings.IBWEB_TSDB_RETENTION_DAYS})
