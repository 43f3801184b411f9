"""A fabric's link health report: ``GET /api/fabrics/fabrics/<slug>/health/``.

Link health is fabric-wide: every view that may see the fabric gets the report, with the hosts it may not name
read as ``host-<index>`` (:mod:`ibweb.live.health.shown`). Emulated fabrics grade their readings every
``IBWEB_HEALTH_INTERVAL_S``; before the first grading (or for a fabric whose source reads no link health) 404.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from ibweb.live.api.base import FabricView
from ibweb.live.health.shown import report_for

__all__ = ["HealthView"]


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
