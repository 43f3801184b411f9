"""What the apps' FilterSets share (django-filter, as NetBox filters its REST lists).

A list view restricts its queryset to what the user may see (``get_queryset``) and only then
lets :class:`~django_filters.rest_framework.DjangoFilterBackend` narrow it by query parameters;
a bad value answers 400 ``{"<parameter>": ["<why>"]}``, as DRF's serializers do.

:class:`ParsedFilter` takes a parameter the way the project has always read it: a function turns
the raw text into the value or raises :class:`~django.core.exceptions.ValidationError` with the
message the client reads.
"""

from __future__ import annotations

from collections.abc import Callable

import django_filters
from django import forms
from django.core.exceptions import ValidationError

__all__ = ["ParsedField", "ParsedFilter", "JoinedWidget"]


class JoinedWidget(forms.TextInput):
    """A parameter given once as ``a,b`` or repeated (``name=a&name=b``, as checkboxes send it), joined by commas."""

    def value_from_datadict(self, data, files, name) -> str:
        if hasattr(data, "getlist"):
            return ",".join(data.getlist(name))
        return data.get(name, "")


class ParsedField(forms.CharField):
    """The stripped text of a parameter, turned into its value by ``parse`` (which may raise ValidationError)."""

    def __init__(self, *, parse: Callable[[str], object], **kwargs) -> None:
        self.parse = parse
        super().__init__(**kwargs)

    def clean(self, value):
        raw = super().clean(value)
        try:
            return self.parse(raw)
        except ValidationError as exc:  # {"name": [...]} from a shared parser: the form names the field itself
            raise ValidationError(exc.messages) from None


class ParsedFilter(django_filters.CharFilter):
    """A query parameter read by ``parse(raw) -> value``; documented in the OpenAPI schema as a string."""

    field_class = ParsedField
