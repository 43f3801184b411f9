"""Bearer tokens of machine clients (collectors pushing samples, schedulers pushing jobs).

A token belongs to one owner row (a collector, a job source) that names its fabric. Only a
SHA-256 digest of the key is stored; the key itself is shown once, when issued. A request
sends it as ``Authorization: Bearer <key>``; :class:`BearerAuthentication` puts the token in
``request.auth`` (the user stays anonymous), :class:`TokenThrottle` limits pushes per token.

The API declares its authentication classes once (``REST_FRAMEWORK``); a route that takes one kind of
token names it (``bearer_authentication``, through :class:`BearerRoute`) and :class:`RouteBearerAuthentication`,
one of the declared classes, applies it there only: elsewhere a ``Bearer`` header is refused (401).
"""

from __future__ import annotations

import hashlib
import secrets

from django.db import models
from rest_framework import authentication, exceptions, throttling

__all__ = ["BearerToken", "BearerAuthentication", "RouteBearerAuthentication", "BearerRoute", "TokenThrottle",
           "token_digest"]


def token_digest(raw: str) -> str:
    """The stored fingerprint of a raw token (SHA-256, hex)."""
    return hashlib.sha256(raw.encode()).hexdigest()


class BearerToken(models.Model):
    """A named secret of one owner row; subclasses add the owner foreign key named by :attr:`OWNER`."""

    #: Name of the subclass's foreign key to its owner (the owner has a ``fabric``).
    OWNER = ""

    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=8, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}...)"

    def set_new_key(self) -> str:
        """Give this token a fresh random key; returns the key (only its digest is stored)."""
        raw = secrets.token_urlsafe(32)
        self.prefix, self.digest = raw[:8], token_digest(raw)
        return raw

    @classmethod
    def issue(cls, owner: models.Model, name: str) -> tuple[BearerToken, str]:
        """Create a token of ``owner``; returns it and its key."""
        token = cls(**{cls.OWNER: owner}, name=name)
        raw = token.set_new_key()
        token.save()
        return token, raw

    @classmethod
    def lookup(cls, raw: str) -> BearerToken | None:
        """The token whose key is ``raw`` (with its owner and fabric), or None."""
        return cls.objects.select_related(f"{cls.OWNER}__fabric").filter(digest=token_digest(raw)).first()


class BearerAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <key>`` of a :attr:`token_model`; ``request.auth`` is the token."""

    keyword = "Bearer"
    token_model: type[BearerToken]
    #: What a key no token has is called in the 401.
    unknown = "unknown token"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].decode(errors="replace") != self.keyword:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization: Bearer <token>")
        token = self.token_model.lookup(header[1].decode(errors="replace"))
        if token is None:
            raise exceptions.AuthenticationFailed(self.unknown)
        return None, token

    def authenticate_header(self, request) -> str:
        return self.keyword


class RouteBearerAuthentication(authentication.BaseAuthentication):
    """The view's own token kind (its ``bearer_authentication``) on its route; nothing on any other route."""

    def authenticate(self, request):
        scheme = getattr((getattr(request, "parser_context", None) or {}).get("view"), "bearer_authentication", None)
        return None if scheme is None else scheme().authenticate(request)


class BearerRoute:
    """Mixin of an API view taking the tokens of :attr:`bearer_authentication` (besides sessions and API tokens):
    a request that is not signed in is answered 401 with ``WWW-Authenticate`` naming that scheme."""

    bearer_authentication: type[BearerAuthentication]

    def get_authenticate_header(self, request) -> str:
        return self.bearer_authentication.keyword


class TokenThrottle(throttling.SimpleRateThrottle):
    """Pushes per token of :attr:`token_model` (the ``push`` rate of ``REST_FRAMEWORK``); 429 beyond."""

    scope = "push"
    token_model: type[BearerToken]
    #: Keeps the counters of different token kinds apart in the cache.
    ident_scope = "push"

    def get_cache_key(self, request, view) -> str | None:
        token = request.auth
        if not isinstance(token, self.token_model):
            return None
        return self.cache_format % {"scope": self.ident_scope, "ident": token.pk}
