"""Admin pages of token owners (collectors, job sources): a new token's key is made on save and shown once."""

from __future__ import annotations

from django.contrib import messages

from .bearer import BearerToken

__all__ = ["IssuesTokens"]


class IssuesTokens:
    """ModelAdmin mixin for an owner with an inline of :class:`~ibweb.auth.bearer.BearerToken` rows."""

    #: How the message names a token ("Push token", "Job token").
    token_label = "Token"

    def save_formset(self, request, form, formset, change) -> None:
        tokens = formset.save(commit=False)
        for token in tokens:
            if isinstance(token, BearerToken) and not token.digest:
                raw = token.set_new_key()
                messages.warning(request, f"{self.token_label} {token.name!r}: {raw} (shown once; store it now)")
            token.save()
        for gone in formset.deleted_objects:
            gone.delete()
        formset.save_m2m()
