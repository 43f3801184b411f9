"""SHARP and storage state of a fabric from its newest frame, as the user's access view sees it in the feed."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from ibweb.access import view_of, visible_fabrics
from ibweb.live.feed.frame_store import newest_frame
from ibweb.live.feed.view import cached_feed_view

__all__ = ["SharpView", "StorageView"]


class _SectionView(APIView):
    section = ""

    def get(self, request, slug: str):
        view = view_of(request.user)
        fabric = get_object_or_404(visible_fabrics(view), slug=slug)
        frame = newest_frame(fabric.pk)
        if frame is None:
            raise NotFound(f"fabric {fabric.slug} has not published a frame yet")
        if not view.sees_all:  # the feed's filter of this view (jobs, tenants, hidden hosts' names)
            fv, _, _ = cached_feed_view(view.key, fabric)
            if fv is None:
                raise NotFound(f"fabric {fabric.slug} has not published a frame yet")
            frame = fv.header(frame)
        data = frame.get(self.section)
        return Response({"fabric": fabric.slug, "seq": frame.get("seq"), "t": frame.get("t"), self.section: data})


@extend_schema(responses=OpenApiTypes.OBJECT)
class SharpView(_SectionView):
    """SHARP state: generation and limits, trees per switch, per job on/off and savings, recent events."""

    section = "sharp"


@extend_schema(responses=OpenApiTypes.OBJECT)
class StorageView(_SectionView):
    """Storage state: per server read/write and bottleneck, per job (with checkpoints) and per tenant throughput."""

    section = "storage"
