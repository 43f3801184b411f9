from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from .api import schema  # noqa: F401 - the schema's authentication extensions
from .auth.signin import admin_login, password_reset, site_login
from .http.health import healthz

urlpatterns = [
    path("", include("ibweb.fabrics.urls")),
    path("", include("ibweb.dashboard.urls")),
    path("", include("ibweb.events.urls")),
    path("admin/login/", admin_login),  # before the admin's own: the same throttle as the site's sign-in
    path("admin/", admin.site.urls),
    path("accounts/login/", site_login, name="login"),
    path("accounts/password_reset/", password_reset, name="password_reset"),  # throttled, before auth.urls
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/fabrics/", include("ibweb.fabrics.api.urls")),
    path("api/fabrics/", include("ibweb.live.api.urls")),
    path("api/fabrics/", include("ibweb.events.api_urls")),
    path("api/tenancy/", include("ibweb.tenancy.api.urls")),
    path("tenancy/", include("ibweb.tenancy.urls")),
    path("api/telemetry/", include("ibweb.telemetry.api.urls")),
    path("api/twin/", include("ibweb.twin.api.urls")),
    path("api/notify/", include("ibweb.notify.api.urls")),
    path("", include("ibweb.notify.urls")),  # the notifications page
    path("", include("ibweb.telemetry.urls")),
    path("", include("ibweb.twin.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("healthz", healthz, name="healthz"),
]
