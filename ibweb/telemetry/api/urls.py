from django.urls import path
from rest_framework.routers import DefaultRouter

from ..views import TrialSweepView
from .conditions_views import ConditionListView
from .counters_views import PortCountersView
from .device_push import DevicePushView
from .health_push import HealthPushView
from .reference_views import ReferenceCablingView
from .views import CollectorConfigViewSet, SamplePushView, SweepViewSet

app_name = "telemetry-api"

router = DefaultRouter()
router.register("collectors", CollectorConfigViewSet, basename="collector")
router.register("sweeps", SweepViewSet, basename="sweep")
urlpatterns = [
    path("fabrics/<slug:slug>/samples/", SamplePushView.as_view(), name="push-samples"),
    path("fabrics/<slug:slug>/health/", HealthPushView.as_view(), name="push-health"),
    path("fabrics/<slug:slug>/devices/", DevicePushView.as_view(), name="push-devices"),
    path("fabrics/<slug:slug>/reference/", ReferenceCablingView.as_view(), name="reference-cabling"),
    path("fabrics/<slug:slug>/conditions/", ConditionListView.as_view(), name="conditions"),
    path("fabrics/<slug:slug>/ports/<str:node>/<int:port>/counters/", PortCountersView.as_view(),
         name="port-counters"),
    path("trial-sweep/", TrialSweepView.as_view(), name="trial-sweep"),
    *router.urls,
]
