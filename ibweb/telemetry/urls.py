from django.urls import path

from .reference_page import accept_cabling_page
from .views import MetricsTargetsView, MetricsView

app_name = "telemetry"

urlpatterns = [
    path("metrics", MetricsView.as_view(), name="metrics"),
    path("metrics/targets", MetricsTargetsView.as_view(), name="metrics-targets"),
    # the events page's reference cabling section (events_page_sections on the app's config) posts here
    path("fabrics/<slug:slug>/events/accept-cabling/", accept_cabling_page, name="accept-cabling"),
]
