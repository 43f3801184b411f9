from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from . import cluster_validation, health_page, history_page, views

app_name = "dashboard"

urlpatterns = [
    path("", views.fabric_list, name="fabric-list"),
    path("fabrics/<slug:slug>/", views.fabric_detail, name="fabric-detail"),
    path("fabrics/<slug:slug>/health/", health_page.fabric_health, name="fabric-health"),
    path("fabrics/<slug:slug>/health/cables.csv", health_page.fabric_cables_csv, name="fabric-health-cables-csv"),
    path("fabrics/<slug:slug>/history/", history_page.fabric_history, name="fabric-history"),
    path("api/fabrics/overview/", views.OverviewView.as_view(), name="fabric-overview"),
    path("clusters/<slug:slug>/", views.cluster_page, name="cluster-detail"),
    path("clusters/<slug:slug>/health/", health_page.cluster_health_page, name="cluster-health"),
    path("api/clusters/", views.ClusterListView.as_view(), name="cluster-list-api"),
    path("api/clusters/<slug:slug>/", views.ClusterDetailView.as_view(), name="cluster-detail-api"),
    path("api/clusters/<slug:slug>/validation/", cluster_validation.ClusterValidationView.as_view(),
         name="cluster-validation-api"),
    # Browsers ask for /favicon.ico on pages that name no icon (downloads, JSON, error pages).
    path("favicon.ico", RedirectView.as_view(url=static("ibweb/favicon.svg"), permanent=True), name="favicon"),
]
