"""A fabric's link health: ``GET /api/fabrics/fabrics/<slug>/health/`` (the report) and
``GET /api/fabrics/fabrics/<slug>/health/ports/<node>/<port>/`` (one port's BER per lane and its trend).

Link health is fabric-wide: every view that may see the fabric gets the report, with the hosts it may not name
read as ``host-<index>`` (:mod:`ibweb.live.health.shown`). Emulated fabrics grade their readings every
``IBWEB_HEALTH_INTERVAL_S``; before the first grading (or for a fabric whose source reads no link health) 404.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from fabric_engine.topology.limits import MAX_NODE_PORTS
from ibweb.access import node_name
from ibweb.live.api.base import FabricView
from ibweb.live.health.shown import report_for
from ibweb.live.health.trend import GRADINGS, port_trend
from ibweb.runtime import health as store

__all__ = ["HealthView", "HealthPortView"]


@extend_schema(responses=OpenApiTypes.OBJECT)
class HealthView(FabricView):
    """Link health: counts by grade (BER, modules, links down) and the worst ports ranked with their evidence
    (BER and its window, module temperature against its thresholds, cable inventory, downs), cable swaps."""

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        report = report_for(request.user, fabric)
        if report is None:
            raise NotFound(f"fabric {fabric.slug} has no link health report yet (its source reads no link health, "
                           f"or has not graded it yet)")
        return Response({"fabric": fabric.slug, **report})


@extend_schema(responses=OpenApiTypes.OBJECT)
class HealthPortView(FabricView):
    """One port's raw BER per lane (the newest grading; null where the tool gives no lane) and its trend: the raw
    BER (the worst lane's) and the port's grade at each of its last gradings (``t``, ``raw``, ``grade``; a null
    grade: not read then). Only ports graded warning or error in their last gradings have a trend
    (``tracked``: false for the others, graded normal all along). ``node``: a name, a ``0x`` GUID or the
    ``host-<i>`` label of a host the user may not name; 404 for a node the user may not see."""

    def get(self, request, slug: str, node: str, port: int):
        fabric = self.fabric(request, slug)
        f, i, hidden = self.node(request, fabric, node)
        if not 1 <= port <= min(int(f.nports[i]), MAX_NODE_PORTS):
            raise NotFound(f"{node} has no port {port}")
        snapshot = store.trend_of(fabric.pk)
        if snapshot is None:
            raise NotFound(f"fabric {fabric.slug} has no link health trend yet (its source reads no link health, "
                           f"or has not graded it yet)")
        trend = port_trend(snapshot, int(f.guid[i]), port)
        return Response({"fabric": fabric.slug, "node": node_name(f, i, hidden), "port": port,
                         "gradings": GRADINGS, "tracked": trend is not None,
                         **(trend or {"t": [], "raw": [], "grade": [], "lanes": None})})
