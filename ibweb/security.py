"""Security headers and the sign-in throttle that Django does not ship."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps

from django.contrib import admin
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


def _bucket(scope: str, key: str, window_s: int) -> str:
    return f"ibweb:rate:{scope}:{key}:{int(time.time() // window_s)}"


def rate_limited(scope: str, key: str, limit: int, window_s: int) -> bool:
    """Count one event for ``key`` in a fixed window; True once more than ``limit`` happened."""
    return _count(_bucket(scope, key, window_s), window_s) > limit


def _count(bucket: str, window_s: int) -> int:
    cache.add(bucket, 0, window_s + 1)
    try:
        return cache.incr(bucket)
    except ValueError:  # expired between add and incr
        cache.set(bucket, 1, window_s + 1)
        return 1


def client_address(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "unknown")


@dataclass(frozen=True)
class LoginThrottle:
    """How many sign-in attempts are let through: per client address (any attempt) and per account (failures).

    The address limit slows one client guessing many accounts; the account limit slows
    many clients (a botnet) guessing one account. Shared by every login form (the site's
    and the admin's) through :func:`throttled_login`; counts live in the cache (Redis at
    scale, so every web process counts together).
    """

    per_address: int = 10
    address_window_s: int = 60
    failures_per_account: int = 5
    account_window_s: int = 900

    def account_key(self, username: str) -> str:
        return hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]

    def refused(self, request: HttpRequest, username: str) -> int | None:
        """Seconds to wait when this attempt is over a limit (it is counted against the address), else None."""
        if rate_limited("login", client_address(request), self.per_address, self.address_window_s):
            return self.address_window_s
        if username and (cache.get(_bucket("login-account", self.account_key(username), self.account_window_s))
                         or 0) >= self.failures_per_account:
            return self.account_window_s
        return None

    def failed(self, username: str) -> None:
        if username:
            _count(_bucket("login-account", self.account_key(username), self.account_window_s), self.account_window_s)

    def succeeded(self, username: str) -> None:
        if username:
            cache.delete(_bucket("login-account", self.account_key(username), self.account_window_s))


LOGIN_THROTTLE = LoginThrottle()


def throttled_login(view: Callable[..., HttpResponse], throttle: LoginThrottle = LOGIN_THROTTLE):
    """Wrap a login view: a POST over a :class:`LoginThrottle` limit gets 429 (with ``Retry-After``) before any
    password is checked; a failed sign-in counts against its account, a successful one clears that count."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method != "POST":
            return view(request, *args, **kwargs)
        username = str(request.POST.get("username", ""))[:150]
        wait = throttle.refused(request, username)
        if wait is not None:
            response = HttpResponse("Too many sign-in attempts; wait and try again.", status=429,
                                    content_type="text/plain")
            response.headers["Retry-After"] = str(wait)
            return response
        response = view(request, *args, **kwargs)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and user.get_username().lower() == username.strip().lower():
            throttle.succeeded(username)
        else:
            throttle.failed(username)
        return response

    return wrapped


#: The site's sign-in page, throttled.
site_login = throttled_login(LoginView.as_view())
#: The admin's sign-in page, throttled by the same counts.
admin_login = throttled_login(admin.site.login)
