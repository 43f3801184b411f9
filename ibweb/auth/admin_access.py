"""The admin asks :mod:`ibweb.access` too: tenant-scoped rows follow the user's view, the rest needs ``ALL``.

Staff users of the ``ALL`` level (operators, policy admins, superusers) see every row,
as their model permissions allow. A staff user of the ``TENANTS`` level sees and
edits only their tenants' rows and is offered only their tenants in choices and
filters. Models that show every tenant at once (the audit log, fabrics with their
scenario's jobs, analyses, collectors, sweeps, push tokens) need the ``ALL`` level.
"""

from __future__ import annotations

from django.contrib import admin

from ibweb.access import Scope, view_of
from ibweb.access.querysets import restricted

__all__ = ["ViewScopedAdmin", "AllTenantsAdmin", "request_view"]


def request_view(request):
    """``view_of(request.user)``, computed once per request (the admin asks many times per page)."""
    view = getattr(request, "_ibweb_view", None)
    if view is None:
        view = request._ibweb_view = view_of(request.user)
    return view


class ViewScopedAdmin(admin.ModelAdmin):
    """Rows, foreign-key choices and list filters cut to the user's view.

    The model's own :class:`~ibweb.access.RestrictedQuerySet` cuts the rows (its ``access_scope``
    says how they reach their tenant); a foreign key to a model that declares one offers only
    the rows the user sees.
    """

    def _view(self, request):
        return request_view(request)

    def get_queryset(self, request):
        return restricted(self.model._meta.label, self._view(request), super().get_queryset(request))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        related = db_field.related_model
        if isinstance(getattr(related, "access_scope", None), Scope):
            kwargs["queryset"] = restricted(related._meta.label, self._view(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_module_permission(self, request) -> bool:
        return self._view(request).sees_tenants and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self._view(request).sees_tenants and super().has_view_permission(request, obj)

    def has_add_permission(self, request) -> bool:
        return self._view(request).sees_tenants and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self._view(request).sees_tenants and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self._view(request).sees_tenants and super().has_delete_permission(request, obj)


class AllTenantsAdmin(admin.ModelAdmin):
    """A model whose rows show every tenant: the ``ALL`` level, then the model permissions."""

    def _all(self, request) -> bool:
        return request_view(request).sees_all

    def has_module_permission(self, request) -> bool:
        return self._all(request) and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self._all(request) and super().has_view_permission(request, obj)

    def has_add_permission(self, request) -> bool:
        return self._all(request) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self._all(request) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self._all(request) and super().has_delete_permission(request, obj)
