"""``/api/telemetry/fabrics/<slug>/reference/``: a fabric's reference cabling; POST accepts the current one."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, permissions
from rest_framework.response import Response
from rest_framework.views import APIView

from ibweb.access import view_of, visible_fabrics

from ..models import CollectorConfig
from ..reference import accept_current_cabling, reference_summary

__all__ = ["ReferenceCablingView", "may_accept_cabling"]


def may_accept_cabling(user) -> bool:
    """Operators (every tenant, and the right to change fabrics) may accept a fabric's cabling."""
    return view_of(user).sees_all and user.has_perm("fabrics.change_fabric")


class _AllTenantsReadOperatorWrite(permissions.BasePermission):
    message = "the reference cabling names every host: operators only"

    def has_permission(self, request, view) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return view_of(request.user).sees_all
        if request.method == "POST":
            return may_accept_cabling(request.user)
        return True  # DRF answers 405


@extend_schema(request=None, responses=OpenApiTypes.OBJECT)
class ReferenceCablingView(APIView):
    """What a telemetry-fed fabric's conditions are measured against (its last good discovery, or the cabling an
    operator accepted): ``{"at", "by", "switches", "hosts", "cables"}``. ``POST`` (operators) makes the newest
    discovery the reference: cables missing from it stop being conditions (audited)."""

    permission_classes = [_AllTenantsReadOperatorWrite]

    def _config(self, request, slug: str) -> CollectorConfig:
        fabrics = visible_fabrics(view_of(request.user))
        return get_object_or_404(CollectorConfig.objects.select_related("fabric").defer("reference"),
                                 fabric__in=fabrics, fabric__slug=slug)

    def get(self, request, slug: str):
        return Response(reference_summary(self._config(request, slug)))

    def post(self, request, slug: str):
        try:
            return Response(accept_current_cabling(self._config(request, slug), request.user, via="api"))
        except ValueError as exc:
            raise exceptions.ValidationError({"detail": str(exc)}) from exc
