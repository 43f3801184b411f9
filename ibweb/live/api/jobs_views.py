"""The jobs of a fabric's catalog and the links they cross: ``GET /api/fabrics/fabrics/<slug>/jobs/``.

The catalog is the one the fabric's engine runs on, read from its runtime record (:mod:`ibweb.runtime.record`);
before the engine published, it answers 503.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from ibweb.access import job_tenants, view_of
from ibweb.live.api.base import FabricView
from ibweb.runtime import record

__all__ = ["JobsView"]


@extend_schema(responses=OpenApiTypes.OBJECT)
class JobsView(FabricView):
    """The jobs of the fabric's catalog: name, tenant, pattern, host node indices and the directed links they cross.

    Emulated fabrics: the scenario's jobs. Telemetry-fed fabrics: what their source carries
    (none without a scheduler feed).
    """

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        h = self.head(fabric)
        catalog = record.jobs(fabric.pk, h) or []
        tenants = job_tenants(view_of(request.user))
        jobs = [{k: j[k] for k in ("id", "tenant", "pattern", "hosts", "links")} for j in catalog
                if tenants is None or j["tenant"] in tenants]
        return Response({"fabric": fabric.slug, "jobs": jobs})
