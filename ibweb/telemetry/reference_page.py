"""The events page's "accept the current cabling" form (operators): the newest discovery becomes the reference."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from ibweb.access import view_of, visible_fabrics

from .api.reference_views import may_accept_cabling
from .models import CollectorConfig
from .reference import accept_current_cabling, reference_summary

__all__ = ["accept_cabling_page", "reference_context"]


def reference_context(user, fabric) -> dict | None:
    """What the events page shows of a fabric's reference cabling (None: not a telemetry-fed fabric, or the
    visitor may not see every host)."""
    if not view_of(user).sees_all:
        return None
    config = CollectorConfig.objects.filter(fabric=fabric).defer("reference").first()
    if config is None:
        return None
    return {**reference_summary(config), "can_accept": may_accept_cabling(user)}


@require_POST
def accept_cabling_page(request, slug: str):
    """Accept the fabric's current cabling as its reference, then back to its events."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not may_accept_cabling(request.user):
        raise PermissionDenied("accepting the cabling needs an operator")
    config = get_object_or_404(CollectorConfig.objects.select_related("fabric"),
                               fabric__in=visible_fabrics(view_of(request.user)), fabric__slug=slug)
    try:
        after = accept_current_cabling(config, request.user, via="page")
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"The current cabling ({after['cables']} cables, {after['switches']} switches, "
                                  f"{after['hosts']} hosts) is now the reference: cables missing from it are no "
                                  "longer conditions.")
    return redirect(reverse("events:fabric-events", args=[slug]))
