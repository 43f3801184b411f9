"""SHARP and storage state of a fabric from its newest frame, filtered by tenant for restricted users."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from ibweb.fabrics.models import Fabric
from ibweb.permissions import visible_tenants

from ..groups import newest_frame
from ..tenant_view import filter_sharp, filter_storage

__all__ = ["SharpView", "StorageView"]


class _SectionView(APIView):
    section = ""
    restrict = staticmethod(lambda section, tenants: section)

    def get(self, request, slug: str):
        fabric = get_object_or_404(Fabric.objects.restrict(request.user), slug=slug)
        frame = newest_frame(fabric.pk)
        if frame is None:
            raise NotFound(f"fabric {fabric.slug} has not published a frame yet")
        data = frame.get(self.section)
        tenants = visible_tenants(request.user)
        if tenants is not None:
            data = self.restrict(data, set(tenants))
        return Response({"fabric": fabric.slug, "seq": frame.get("seq"), "t": frame.get("t"), self.section: data})


class SharpView(_SectionView):
    """SHARP state: generation and limits, trees per switch, per job on/off and savings, recent events."""

    section = "sharp"
    restrict = staticmethod(filter_sharp)


class StorageView(_SectionView):
    """Storage state: per server read/write and bottleneck, per job (with checkpoints) and per tenant throughput."""

    section = "storage"
    restrict = staticmethod(filter_storage)
