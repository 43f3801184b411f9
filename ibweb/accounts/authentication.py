"""``Authorization: Token <key>``: the API as the :class:`~ibweb.accounts.models.ApiToken`'s user."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework import exceptions

from ibweb.bearer import BearerAuthentication

from .models import ApiToken

__all__ = ["ApiTokenAuthentication"]

#: ``last_used`` is written at most this often per token (not on every request).
LAST_USED_EVERY = timedelta(minutes=1)


class ApiTokenAuthentication(BearerAuthentication):
    """As DRF's ``TokenAuthentication`` (same header), against hashed keys; an inactive user is refused."""

    keyword = "Token"
    token_model = ApiToken
    unknown = "Invalid token."

    def authenticate(self, request):
        result = super().authenticate(request)
        if result is None:
            return None
        token = result[1]
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        now = timezone.now()
        if token.last_used is None or now - token.last_used > LAST_USED_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used=now)
        return token.user, token
