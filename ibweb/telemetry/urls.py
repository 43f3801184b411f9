from django.urls import path

from .views import MetricsView

app_name = "telemetry"

urlpatterns = [path("metrics", MetricsView.as_view(), name="metrics")]
