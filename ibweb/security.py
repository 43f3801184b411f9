"""Security headers and rate limits that Django does not ship."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

#: The dashboard runs under this policy: bundled scripts and styles only, the feed over ws(s).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
#: Django's admin sets inline styles; its pages relax only that.
ADMIN_POLICY = CONTENT_SECURITY_POLICY.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")


class SecurityHeadersMiddleware:
    """Adds the content security policy and a strict permissions policy to every response."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = ADMIN_POLICY if request.path.startswith("/admin/") else CONTENT_SECURITY_POLICY
        response.headers.setdefault("Content-Security-Policy", policy)
        response.headers.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        return response


def rate_limited(scope: str, key: str, limit: int, window_s: int) -> bool:
    """Count one event for ``key`` in a fixed window; True once more than ``limit`` happened."""
    bucket = f"ibweb:rate:{scope}:{key}:{int(time.time() // window_s)}"
    cache.add(bucket, 0, window_s + 1)
    try:
        count = cache.incr(bucket)
    except ValueError:  # expired between add and incr
        cache.set(bucket, 1, window_s + 1)
        count = 1
    return count > limit


def client_address(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "unknown")


class RateLimitedLoginView(LoginView):
    """Login that answers 429 after too many attempts from one address (10 per minute)."""

    limit = 10
    window_s = 60

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if rate_limited("login", client_address(request), self.limit, self.window_s):
            response = HttpResponse("Too many login attempts; wait a minute.", status=429, content_type="text/plain")
            response.headers["Retry-After"] = str(self.window_s)
            return response
        return super().post(request, *args, **kwargs)
