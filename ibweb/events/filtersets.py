"""The REST events list's query parameters as a django-filter FilterSet (same names and rules as the page).

Each parameter is parsed by :mod:`ibweb.events.query` (one set of rules for the page and the API)
and narrows the rows through :func:`~ibweb.events.query.apply_filters`. The text search ``q`` runs
last: for a view that sees redacted messages it searches what that view reads, which needs the
view's host filter, handed over by :class:`EventFilterBackend`.
"""

from __future__ import annotations

from datetime import UTC, datetime

import django_filters
from django.core.exceptions import ValidationError
from django_filters.rest_framework import DjangoFilterBackend

from ibweb.api.filtersets import JoinedWidget, ParsedFilter

from .choices import Severity
from .models import Event
from .query import STATES, EventFilters, _listing, _when, apply_filters

__all__ = ["EventFilterSet", "EventFilterBackend"]


def _state(raw: str) -> str:
    state = raw or "all"
    if state not in STATES:
        raise ValidationError(f"{state!r} is not one of {', '.join(STATES)}")
    return state


def _kinds(raw: str) -> tuple[str, ...]:
    kinds = _listing(raw, "kind")
    if any(len(k) > 32 for k in kinds):
        raise ValidationError("kinds are at most 32 characters")
    return kinds


class EventFilterSet(django_filters.FilterSet):
    """``severity``, ``kind``, ``tenant``, ``since``, ``until``, ``state``, ``q`` (see :mod:`ibweb.events.query`)."""

    severity = ParsedFilter(method="narrow", widget=JoinedWidget,
                            parse=lambda raw: _listing(raw, "severity", Severity.values),
                            help_text=f"one or more of {', '.join(Severity.values)} (comma-separated or repeated)")
    kind = ParsedFilter(method="narrow", widget=JoinedWidget, parse=_kinds,
                        help_text="one or more event kinds (comma-separated or repeated, at most 20)")
    tenant = ParsedFilter(method="narrow", parse=lambda raw: raw[:100],
                          help_text="a tenant's slug, or `none` for the fabric-wide events")
    since = ParsedFilter(method="narrow", parse=lambda raw: _when(raw, "since", datetime.now(tz=UTC)),
                         help_text="last seen at or after: a date-time (2026-05-01T10:00Z) or an age (30m, 2h, 7d)")
    until = ParsedFilter(method="narrow", parse=lambda raw: _when(raw, "until", datetime.now(tz=UTC)),
                         help_text="first seen before: a date-time or an age")
    state = ParsedFilter(method="narrow", parse=_state, help_text=f"one of {', '.join(STATES)} (default: all)")
    q = ParsedFilter(method="narrow", parse=lambda raw: raw[:200], help_text="text in the message as you see it")

    class Meta:
        model = Event
        fields: list[str] = []

    def __init__(self, *args, access=None, hidden=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.access, self.hidden = access, hidden

    def narrow(self, queryset, name: str, value):
        rows = apply_filters(queryset, EventFilters(**{name: value}), self.access, self.hidden)
        if isinstance(rows, list):  # a text search of redacted messages: the rows this view reads it in
            return queryset.filter(pk__in=[e.pk for e in rows])
        return rows


class EventFilterBackend(DjangoFilterBackend):
    """Hands :class:`EventFilterSet` the list view's access view and host filter (``view.access``, ``view.hidden``)."""

    def get_filterset_kwargs(self, request, queryset, view) -> dict:
        return {**super().get_filterset_kwargs(request, queryset, view),
                "access": view.access, "hidden": view.hidden}
