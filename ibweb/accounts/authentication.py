"""``Authorization: Token <key>``: the API and the live feed as the :class:`~ibweb.accounts.models.ApiToken`'s user.

:func:`token_user` is the one check of such a header: the API's :class:`ApiTokenAuthentication` and the feed's
consumer (:mod:`ibweb.live.feed.consumers`) both call it, so a key works, or is refused, the same on both.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions

from ibweb.auth.bearer import BearerAuthentication

from .models import ApiToken

__all__ = ["ApiTokenAuthentication", "token_user", "KEYWORD"]

#: The scheme of ``Authorization: Token <key>``.
KEYWORD = "Token"

#: ``last_used`` is written at most this often per token (not on every request).
LAST_USED_EVERY = timedelta(minutes=1)


def token_user(header: bytes):
    """``(user, token)`` of an ``Authorization`` value ``Token <key>``; AuthenticationFailed saying why not
    (malformed, unknown key, inactive user). Marks the token used (at most once per :data:`LAST_USED_EVERY`)."""
    parts = header.split()
    if len(parts) != 2 or parts[0].decode(errors="replace") != KEYWORD:
        raise exceptions.AuthenticationFailed(f"Authorization: {KEYWORD} <key>")
    token = ApiToken.lookup(parts[1].decode(errors="replace"))
    if token is None:
        raise exceptions.AuthenticationFailed("Invalid token.")
    if not token.user.is_active:
        raise exceptions.AuthenticationFailed("User inactive or deleted.")
    now = timezone.now()
    if token.last_used is None or now - token.last_used > LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
    return token.user, token


class ApiTokenAuthentication(BearerAuthentication):
    """As DRF's ``TokenAuthentication`` (same header), against hashed keys (:func:`token_user`)."""

    keyword = KEYWORD
    token_model = ApiToken

    def authenticate(self, request):
        header = authentication.get_authorization_header(request)
        if header.split()[:1] != [KEYWORD.encode()]:
            return None
        return token_user(header)
