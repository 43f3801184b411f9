"""Pages that load the frontend bundles: the fabrics overview, the live dashboard, the cluster page; their APIs."""

from django.shortcuts import get_object_or_404, render
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from ibweb.access import view_of, visible_fabrics
from ibweb.auth.permissions import view_required

from .cluster import cluster_cards, cluster_detail, visible_clusters
from .overview import fabric_cards


@view_required
def fabric_list(request):
    """One card per fabric the visitor may see, updated every tick by the page."""
    view = view_of(request.user)
    cards = fabric_cards(view, visible_fabrics(view))
    clusters = cluster_cards(view, cards={c["slug"]: c for c in cards})
    return render(request, "dashboard/fabric_list.html", {"cards": cards, "clusters": clusters, "nav": "fabrics"})


@view_required
def fabric_detail(request, slug: str):
    """The live dashboard of one fabric."""
    fabric = get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)
    return render(request, "dashboard/fabric_detail.html", {"fabric": fabric, "fabric_nav": fabric, "nav": "live"})


@view_required
def cluster_page(request, slug: str):
    """A cluster's planes compared, its storage fabric beside them, its jobs at their slowest rail."""
    cluster = get_object_or_404(visible_clusters(view_of(request.user)), slug=slug)
    return render(request, "dashboard/cluster_detail.html", {"cluster": cluster, "cluster_nav": cluster,
                                                            "nav": "fabrics", "cluster_tab": "planes"})


class MayView(BasePermission):
    def has_permission(self, request, view) -> bool:
        return view_of(request.user).may_view


@extend_schema(responses=OpenApiTypes.OBJECT)
class OverviewView(APIView):
    """``GET /api/fabrics/overview/``: the cards of the fabrics overview (see :mod:`ibweb.dashboard.overview`)."""

    permission_classes = [MayView]
    http_method_names = ["get", "head", "options"]

    def get(self, request):
        view = view_of(request.user)
        cards = fabric_cards(view, visible_fabrics(view))
        return Response({"fabrics": cards, "clusters": cluster_cards(view, cards={c["slug"]: c for c in cards})})


class ClusterListView(APIView):
    """``GET /api/clusters/``: each cluster the visitor may see with its fabrics' cards side by side."""

    permission_classes = [MayView]
    http_method_names = ["get", "head", "options"]

    @extend_schema(operation_id="api_clusters_list", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        return Response({"clusters": cluster_cards(view_of(request.user))})


@extend_schema(responses=OpenApiTypes.OBJECT)
class ClusterDetailView(APIView):
    """``GET /api/clusters/<slug>/``: the cluster page's data (:func:`ibweb.dashboard.cluster.cluster_detail`)."""

    permission_classes = [MayView]
    http_method_names = ["get", "head", "options"]

    def get(self, request, slug: str):
        view = view_of(request.user)
        return Response(cluster_detail(view, get_object_or_404(visible_clusters(view), slug=slug)))
