"""Query parameters of tenancy's REST lists (django-filter); the viewsets scope their rows before these filter.

Values are matched as given (not stripped), as the lists always did: ``?fabric=slug&tenant=slug&q=text``.
"""

from __future__ import annotations

import django_filters
from django.core.exceptions import ValidationError

from ibweb.api.filtersets import ParsedFilter

from .models import AuditEntry, CongestionControlPolicy, Partition, PartitionMember, QosPolicy, Tenant

__all__ = ["TenantFilterSet", "PartitionFilterSet", "QosPolicyFilterSet", "CongestionControlPolicyFilterSet",
           "AuditEntryFilterSet", "MemberFilterSet"]


def _exact(field_name: str, help_text: str) -> django_filters.CharFilter:
    return django_filters.CharFilter(field_name=field_name, strip=False, help_text=help_text)


def _name_contains() -> django_filters.CharFilter:
    return django_filters.CharFilter(field_name="name", lookup_expr="icontains", strip=False,
                                     help_text="text in the name (any case)")


def _partition_id(raw: str) -> str:
    if raw and not (raw.isascii() and raw.isdigit() and len(raw) < 19):
        raise ValidationError(f"expected a partition ID (a number), got {raw!r}")
    return raw


class TenantFilterSet(django_filters.FilterSet):
    q = _name_contains()

    class Meta:
        model = Tenant
        fields: list[str] = []


class PartitionFilterSet(django_filters.FilterSet):
    fabric = _exact("fabric__slug", "the fabric's slug")
    tenant = _exact("tenant__slug", "the tenant's slug")
    q = _name_contains()

    class Meta:
        model = Partition
        fields: list[str] = []


class QosPolicyFilterSet(django_filters.FilterSet):
    fabric = _exact("fabric__slug", "the fabric's slug")

    class Meta:
        model = QosPolicy
        fields: list[str] = []


class CongestionControlPolicyFilterSet(django_filters.FilterSet):
    fabric = _exact("fabric__slug", "the fabric's slug")

    class Meta:
        model = CongestionControlPolicy
        fields: list[str] = []


class AuditEntryFilterSet(django_filters.FilterSet):
    fabric = _exact("fabric__slug", "the fabric's slug")
    action = _exact("action", "the action: create, update, delete or import")
    user = _exact("username", "who made the change (user name)")

    class Meta:
        model = AuditEntry
        fields: list[str] = []


class MemberFilterSet(django_filters.FilterSet):
    fabric = _exact("partition__fabric__slug", "the fabric's slug")
    partition = ParsedFilter(field_name="partition_id", parse=_partition_id, strip=False,
                             help_text="a partition ID (a number)")
    guid = _exact("guid", "a port GUID as stored: 0x and 16 hex digits")

    class Meta:
        model = PartitionMember
        fields: list[str] = []
