from django.urls import path
from rest_framework.routers import DefaultRouter

from .views import CollectorConfigViewSet, SamplePushView, SweepViewSet

app_name = "telemetry-api"

router = DefaultRouter()
router.register("collectors", CollectorConfigViewSet, basename="collector")
router.register("sweeps", SweepViewSet, basename="sweep")
urlpatterns = [
    path("fabrics/<slug:slug>/samples/", SamplePushView.as_view(), name="push-samples"),
    *router.urls,
]
