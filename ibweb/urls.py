from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from .health import healthz
from .security import RateLimitedLoginView

urlpatterns = [
    path("", include("ibweb.fabrics.urls")),
    path("", include("ibweb.dashboard.urls")),
    path("admin/", admin.site.urls),
    path("accounts/login/", RateLimitedLoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/fabrics/", include("ibweb.fabrics.api.urls")),
    path("api/fabrics/", include("ibweb.live.api.urls")),
    path("api/tenancy/", include("ibweb.tenancy.api.urls")),
    path("tenancy/", include("ibweb.tenancy.urls")),
    path("api/telemetry/", include("ibweb.telemetry.api.urls")),
    path("", include("ibweb.telemetry.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("healthz", healthz, name="healthz"),
]
