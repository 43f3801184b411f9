"""Rows a view may see: a queryset the tenant-owned models inherit, cut by a :class:`Scope` each model declares.

As NetBox's ``RestrictedQuerySet``: a model says how its rows reach their tenant
(``access_scope = Scope(tenant=("partition__tenant_id",))``), and
``Model.objects.restrict(view_or_user)`` keeps the rows that view sees. Nothing here
imports a model; a model without a scope is refused (fail-closed).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.db.models import Q

from .view import Level, View, view_of

__all__ = ["Scope", "RestrictedQuerySet", "restricted", "visible_fabrics", "visible_tenants", "visible_partitions",
           "visible_members", "visible_service_classes", "visible_qos_policies"]


@dataclass(frozen=True)
class Scope:
    """How a model's rows are seen.

    ``tenant``: lookups of the owning tenant's ID (a row is a ``TENANTS`` view's when any of them
    is one of its tenants; more than one, or one through a many-valued relation, adds ``distinct``);
    ``shared``: rows of no tenant that every view from ``FABRIC`` up sees (fabric-wide events);
    ``public_from``: the level from which every row is seen (fabrics: ``FABRIC``; QoS tables: ``TENANTS``).
    ``ALL`` sees every row; ``NONE`` none.
    """

    tenant: tuple[str, ...] = ()
    shared: Q | None = None
    public_from: Level | None = None
    distinct: bool = False

    def apply(self, queryset: models.QuerySet, view: View) -> models.QuerySet:
        """``queryset`` cut to the rows ``view`` sees."""
        if view.sees_all or (self.public_from is not None and view.may_view and view.level >= self.public_from):
            return queryset
        if not view.may_view:
            return queryset.none()
        q = Q(pk__in=[]) if self.shared is None else self.shared
        if view.level == Level.TENANTS:
            for path in self.tenant:
                q |= Q(**{f"{path}__in": view.tenant_ids})
        elif self.shared is None:
            return queryset.none()
        out = queryset.filter(q)
        return out.distinct() if self.distinct else out


class RestrictedQuerySet(models.QuerySet):
    """A queryset that can cut itself to what a user or :class:`View` sees (:meth:`restrict`)."""

    def restrict(self, subject) -> models.QuerySet:
        """The rows ``subject`` (a :class:`View`, or a user, anonymous or ``None``) may see."""
        scope = getattr(self.model, "access_scope", None)
        if not isinstance(scope, Scope):
            raise ImproperlyConfigured(f"{self.model.__name__} declares no access_scope: nobody may see its rows")
        return scope.apply(self, subject if isinstance(subject, View) else view_of(subject))


def restricted(label: str, view: View, queryset: models.QuerySet | None = None) -> models.QuerySet:
    """``queryset`` (default: every row of the model ``label``, ``"app.Model"``) cut to what ``view`` sees."""
    if queryset is None:
        queryset = apps.get_model(label)._default_manager.all()
    return RestrictedQuerySet.restrict(queryset, view)


def visible_fabrics(view: View, queryset=None):
    """The fabrics ``view`` may open (their aggregates; every fabric from ``FABRIC`` up)."""
    return restricted("fabrics.Fabric", view, queryset)


def visible_tenants(view: View, queryset=None):
    """The tenants ``view`` sees (with their contacts): its own, or all for ``ALL``."""
    return restricted("tenancy.Tenant", view, queryset)


def visible_partitions(view: View, queryset=None):
    """The partitions ``view`` sees: its tenants' (a partition of no tenant only for ``ALL``)."""
    return restricted("tenancy.Partition", view, queryset)


def visible_members(view: View, queryset=None):
    """The partition members ``view`` sees: those of :func:`visible_partitions`."""
    return restricted("tenancy.PartitionMember", view, queryset)


def visible_service_classes(view: View, queryset=None):
    """The QoS classes ``view`` sees: all for ``ALL``, else those its tenants or their partitions use."""
    return restricted("tenancy.ServiceClass", view, queryset)


def visible_qos_policies(view: View, queryset=None):
    """The fabrics' QoS tables (SL to VL, arbitration): configuration, for ``TENANTS`` and up."""
    return restricted("tenancy.QosPolicy", view, queryset)
