from django.urls import path
from rest_framework.routers import DefaultRouter

from .views import ExpectedView, FabricJobsView, JobSourceViewSet, PlanView

app_name = "twin-api"

router = DefaultRouter()
router.register("sources", JobSourceViewSet, basename="source")
urlpatterns = [
    path("fabrics/<slug:slug>/jobs/", FabricJobsView.as_view(), name="jobs"),
    path("fabrics/<slug:slug>/expected/", ExpectedView.as_view(), name="expected"),
    path("fabrics/<slug:slug>/plan/", PlanView.as_view(), name="plan"),
    *router.urls,
]
