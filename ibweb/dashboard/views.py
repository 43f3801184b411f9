"""Pages that load the frontend bundles: the fabrics overview and the live dashboard; the overview's API."""

from django.shortcuts import get_object_or_404, render
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from ibweb.access import view_of, visible_fabrics
from ibweb.permissions import view_required

from .overview import fabric_cards


@view_required
def fabric_list(request):
    """One card per fabric the visitor may see, updated every tick by the page."""
    view = view_of(request.user)
    cards = fabric_cards(view, visible_fabrics(view))
    return render(request, "dashboard/fabric_list.html", {"cards": cards, "nav": "fabrics"})


@view_required
def fabric_detail(request, slug: str):
    """The live dashboard of one fabric."""
    fabric = get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)
    return render(request, "dashboard/fabric_detail.html", {"fabric": fabric, "fabric_nav": fabric, "nav": "live"})


class MayView(BasePermission):
    def has_permission(self, request, view) -> bool:
        return view_of(request.user).may_view


class OverviewView(APIView):
    """``GET /api/fabrics/overview/``: the cards of the fabrics overview (see :mod:`ibweb.dashboard.overview`)."""

    permission_classes = [MayView]
    http_method_names = ["get", "head", "options"]

    def get(self, request):
        view = view_of(request.user)
        return Response({"fabrics": fabric_cards(view, visible_fabrics(view))})
