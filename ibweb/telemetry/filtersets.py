"""Query parameters of telemetry's REST lists (django-filter), applied after the viewsets scope their rows."""

from __future__ import annotations

import django_filters

from .models import Sweep

__all__ = ["SweepFilterSet"]


class SweepFilterSet(django_filters.FilterSet):
    fabric = django_filters.CharFilter(field_name="config__fabric__slug", strip=False, help_text="the fabric's slug")

    class Meta:
        model = Sweep
        fields: list[str] = []
