"""API tokens of users: ``Authorization: Token <key>`` acts as the token's user (issue 26).

Only a SHA-256 digest of the key and its first eight characters (the non-secret prefix that
finds the row and names it in lists) are stored; the key is shown once, when issued (the admin,
``manage.py create_api_token``). They replace DRF's ``authtoken`` tokens, which kept the key in
clear; migration 0002 hashed those, so keys issued before keep working.
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.db import models

from ibweb.auth.bearer import BearerToken, token_digest

__all__ = ["ApiToken"]


class ApiToken(BearerToken):
    """A user's API key (a script's, a scraper's): it authenticates as :attr:`user`."""

    OWNER = "user"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")

    class Meta:
        ordering = ["user", "name"]
        verbose_name = "API token"
        indexes = [models.Index(fields=["prefix"], name="accounts_apitoken_prefix")]

    @classmethod
    def lookup(cls, raw: str) -> ApiToken | None:
        """The token whose key is ``raw`` (with its user), or None; digests are compared in constant time."""
        digest = token_digest(raw)
        found = None
        for token in cls.objects.select_related("user").filter(prefix=raw[:8]):
            if hmac.compare_digest(token.digest, digest):
                found = token
        return found
