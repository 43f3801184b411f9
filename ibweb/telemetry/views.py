"""``/metrics``: every visible fabric's ports in the Prometheus text format."""

from __future__ import annotations

import time

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import BasePermission
from rest_framework.views import APIView

from fabric_engine.telemetry.prometheus import CONTENT_TYPE, render_metrics
from ibweb.fabrics.models import Fabric
from ibweb.permissions import can_view

from . import store


class CanView(BasePermission):
    def has_permission(self, request, view) -> bool:
        return can_view(request.user)


@extend_schema(responses=OpenApiTypes.STR)
class MetricsView(APIView):
    """Per-port counters of emulated and telemetry-fed fabrics (``?fabric=<slug>`` for one).

    Emulated fabrics: counters integrated from the engine's per-link rates.
    Telemetry-fed fabrics: the raw counters of the newest sweep. A fabric whose
    engine has not produced anything yet is left out. Authentication as for the
    API (session or ``Authorization: Token ...``); anonymous where public read is on.
    """

    permission_classes = [CanView]

    def get(self, request):
        fabrics = Fabric.objects.restrict(request.user).only("pk", "slug")
        slug = request.query_params.get("fabric")
        if slug:
            fabrics = fabrics.filter(slug=slug)
        parts = []
        now = time.time()
        for fabric in fabrics:  # one entry per fabric
            entry = store.metrics_entry(fabric.pk)
            if entry is None:
                continue
            parts.append(render_metrics(entry["topology"], entry["totals"], fabric.slug,
                                        extra={"infiniband_counters_age_seconds": round(now - entry["t"], 3)}))
        return HttpResponse("".join(parts), content_type=CONTENT_TYPE)
