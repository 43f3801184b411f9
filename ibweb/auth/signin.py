"""Sign-in and password-reset throttles that slow an attacker without locking the owner out (issue 26).

Rules (counts live in the cache: Redis at scale, so every web process counts together):

- **Per client address**, any sign-in attempt: at most :attr:`LoginThrottle.per_address` a minute, then 429.
  The address is ``REMOTE_ADDR`` only, which the server sets from the peer, or from ``X-Forwarded-For``
  when the peer is one of ``IBWEB_TRUSTED_PROXIES`` (:mod:`ibweb.http.proxies`); a header alone never moves it.
- **Per account**, failures from anywhere (a botnet spreading one account's guesses), counted against the
  account the name signs in to (:meth:`LoginThrottle.account_key`: every spelling Django's sign-in takes for it,
  NFKC forms such as fullwidth letters and case included), or the NFKC-casefolded name when no account has it.
  The first
  :attr:`LoginThrottle.free_failures` cost nothing; after ``n`` failures the account takes one attempt
  per ``2 ** (n - free_failures)`` seconds (at most :attr:`LoginThrottle.max_delay_s`), 429 with
  ``Retry-After`` before that. There is no lock-out: the owner gets in within the delay, and a browser
  that signed in to the account before (a signed *known device* cookie, set by every successful
  sign-in) skips the account delay entirely, so failures elsewhere cannot keep the owner out.
  A success clears the account's failures. Sessions and API tokens already issued are never affected.
- **Password reset form**: per client address and per e-mail address asked for (whether or not an
  account has it, so the answer tells nothing), :data:`RESET_PER_ADDRESS` and :data:`RESET_PER_EMAIL`.
"""

from __future__ import annotations

import hashlib
import math
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UsernameField
from django.contrib.auth.views import LoginView, PasswordResetView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

__all__ = ["client_address", "rate_limited", "LoginThrottle", "LOGIN_THROTTLE", "throttled_login", "site_login",
           "admin_login", "password_reset", "KNOWN_DEVICE_COOKIE", "RESET_PER_ADDRESS", "RESET_PER_EMAIL"]

#: The signed cookie naming the accounts that signed in from this browser before (hashed account keys).
KNOWN_DEVICE_COOKIE = "ibweb_device"
_DEVICE_SALT = "ibweb.auth.signin.known-device"
_DEVICE_MAX_AGE_S = 180 * 86400
_DEVICE_MAX_ACCOUNTS = 5
#: Password-reset requests: ``(limit, window seconds)`` per client address and per e-mail address.
RESET_PER_ADDRESS = (5, 900)
RESET_PER_EMAIL = (3, 3600)


def client_address(request: HttpRequest) -> str:
    """The address throttles count: ``REMOTE_ADDR`` (never a forwarding header read here)."""
    return request.META.get("REMOTE_ADDR") or "unknown"


def _bucket(scope: str, key: str, index: int) -> str:
    return f"ibweb:rate:{scope}:{key}:{index}"


def _count(key: str, ttl_s: int) -> int:
    cache.add(key, 0, ttl_s + 1)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, ttl_s + 1)
        return 1


def rate_limited(scope: str, key: str, limit: int, window_s: int) -> bool:
    """Count one event for ``key``; True once more than ``limit`` happened in the last ``window_s`` seconds.

    A sliding window: this window's count plus the previous window's, weighted by how much of it still lies
    within ``window_s`` of now. A fixed window alone would let ``2 * limit`` through across its boundary.
    """
    now = time.time()
    index, into = divmod(now, window_s)
    current = _count(_bucket(scope, key, int(index)), 2 * window_s)
    previous = cache.get(_bucket(scope, key, int(index) - 1)) or 0
    return current + previous * (1 - into / window_s) > limit


def _too_many(request: HttpRequest, what: str, wait_s: int) -> HttpResponse:
    response = HttpResponse(f"Too many {what}; wait and try again.", status=429, content_type="text/plain")
    response.headers["Retry-After"] = str(max(1, int(wait_s)))
    return response


@dataclass(frozen=True)
class LoginThrottle:
    """The sign-in limits of every login form (the site's and the admin's): see the module docstring."""

    per_address: int = 10
    address_window_s: int = 60
    free_failures: int = 5
    max_delay_s: int = 60
    #: Failures are forgotten this long after the account's last one.
    failure_memory_s: int = 3600

    def account_key(self, username: str) -> str:
        """The hashed key of the account ``username`` names: ``user:<pk>`` when it resolves to one, else the name.

        The name is normalised as the sign-in form does (:class:`~django.contrib.auth.forms.UsernameField`:
        stripped, NFKC), then resolved as the backend does (the exact name), or case-insensitively when exactly one
        account matches so (names are treated as one account whatever their case); an unknown name is keyed by its
        NFKC-casefolded form, so its spellings share one count too.
        """
        name = UsernameField().to_python(username) or ""
        users = get_user_model()._default_manager
        field = get_user_model().USERNAME_FIELD
        pk = users.filter(**{field: name}).values_list("pk", flat=True).first()
        if pk is None:
            found = list(users.filter(**{f"{field}__iexact": name}).values_list("pk", flat=True)[:2])
            pk = found[0] if len(found) == 1 else None
        ident = f"user:{pk}" if pk is not None else "name:" + unicodedata.normalize("NFKC", name.casefold())
        return self._hash(ident)

    def user_key(self, user) -> str:
        """The key of a signed-in ``user`` (the one :meth:`account_key` gives each name of it)."""
        return self._hash(f"user:{user.pk}")

    @staticmethod
    def _hash(ident: str) -> str:
        return hashlib.sha256(ident.encode()).hexdigest()[:32]

    def _keys(self, account: str) -> tuple[str, str]:
        return f"ibweb:login-fail:{account}", f"ibweb:login-last:{account}"

    def delay_s(self, failures: int) -> int:
        """Seconds the account waits after its last failure, having ``failures`` of them."""
        if failures < self.free_failures:
            return 0
        return min(2 ** min(failures - self.free_failures, 30), self.max_delay_s)

    def refused(self, request: HttpRequest, account: str | None) -> int | None:
        """Seconds to wait when this attempt on ``account`` (an :meth:`account_key`, None: no name) is over a limit
        (it is counted against the address), else None."""
        if rate_limited("login", client_address(request), self.per_address, self.address_window_s):
            return self.address_window_s
        if not account or self.known_device(request, account):
            return None
        count_key, last_key = self._keys(account)
        failures = cache.get(count_key) or 0
        wait = self.delay_s(failures) - (time.time() - (cache.get(last_key) or 0.0))
        return math.ceil(wait) if wait > 0 else None

    def failed(self, account: str | None) -> None:
        if account:
            count_key, last_key = self._keys(account)
            _count(count_key, self.failure_memory_s)
            cache.set(last_key, time.time(), self.failure_memory_s)
            cache.touch(count_key, self.failure_memory_s)

    def succeeded(self, account: str | None) -> None:
        if account:
            cache.delete_many(list(self._keys(account)))

    # ------------------------------------------------------------ known devices
    def _device_accounts(self, request: HttpRequest) -> list[str]:
        raw = request.get_signed_cookie(KNOWN_DEVICE_COOKIE, default="", salt=_DEVICE_SALT,
                                        max_age=_DEVICE_MAX_AGE_S)
        return [a for a in raw.split(",") if a]

    def known_device(self, request: HttpRequest, account: str) -> bool:
        """Whether this browser signed in to ``account`` before (a valid signed cookie names it)."""
        return account in self._device_accounts(request)

    def remember_device(self, request: HttpRequest, response: HttpResponse, account: str) -> None:
        """Add ``account`` to the browser's known-device cookie (the newest few accounts are kept)."""
        accounts = [account] + [a for a in self._device_accounts(request) if a != account]
        response.set_signed_cookie(KNOWN_DEVICE_COOKIE, ",".join(accounts[:_DEVICE_MAX_ACCOUNTS]), salt=_DEVICE_SALT,
                                   max_age=_DEVICE_MAX_AGE_S, httponly=True, samesite="Lax",
                                   secure=settings.SESSION_COOKIE_SECURE)


LOGIN_THROTTLE = LoginThrottle()


def throttled_login(view: Callable[..., HttpResponse], throttle: LoginThrottle = LOGIN_THROTTLE):
    """Wrap a login view: a POST over a :class:`LoginThrottle` limit gets 429 (with ``Retry-After``) before any
    password is checked; a failure counts against its account, a success clears it and marks the browser known."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method != "POST":
            return view(request, *args, **kwargs)
        username = str(request.POST.get("username", ""))[:150]
        account = throttle.account_key(username) if username.strip() else None
        wait = throttle.refused(request, account)
        if wait is not None:
            return _too_many(request, "sign-in attempts", wait)
        response = view(request, *args, **kwargs)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and account == throttle.user_key(user):
            throttle.succeeded(account)
            throttle.remember_device(request, response, account)
        else:
            throttle.failed(account)
        return response

    return wrapped


def throttled_reset(view: Callable[..., HttpResponse]):
    """Wrap a password-reset view: POSTs over :data:`RESET_PER_ADDRESS` or :data:`RESET_PER_EMAIL` get 429."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method == "POST":
            limit, window = RESET_PER_ADDRESS
            if rate_limited("reset", client_address(request), limit, window):
                return _too_many(request, "password reset requests", window)
            email = str(request.POST.get("email", ""))[:254].strip().lower()
            limit, window = RESET_PER_EMAIL
            if email and rate_limited("reset-email", hashlib.sha256(email.encode()).hexdigest()[:32], limit, window):
                return _too_many(request, "password reset requests for this address", window)
        return view(request, *args, **kwargs)

    return wrapped


#: The site's sign-in page, throttled.
site_login = throttled_login(LoginView.as_view())
#: The admin's sign-in page, throttled by the same counts.
admin_login = throttled_login(admin.site.login)
#: The password-reset form (``accounts/password_reset/``), throttled.
password_reset = throttled_reset(PasswordResetView.as_view())
