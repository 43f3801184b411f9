"""The admin asks :mod:`ibweb.access` too: tenant-scoped rows follow the user's view, the rest needs ``ALL``.

Staff users of the ``ALL`` level (operators, policy admins, superusers) see every row,
as their model permissions allow. A staff user of the ``TENANTS`` level sees and
edits only their tenants' rows and is offered only their tenants in choices and
filters. Models that show every tenant at once (the audit log, fabrics with their
scenario's jobs, analyses, collectors, sweeps, push tokens) need the ``ALL`` level.
"""

from __future__ import annotations

from django.contrib import admin

from .access import view_of

__all__ = ["ViewScopedAdmin", "AllTenantsAdmin", "request_view"]


def request_view(request):
    """``view_of(request.user)``, computed once per request (the admin asks many times per page)."""
    view = getattr(request, "_ibweb_view", None)
    if view is None:
        view = request._ibweb_view = view_of(request.user)
    return view


class ViewScopedAdmin(admin.ModelAdmin):
    """Rows, foreign-key choices and list filters cut to the user's view.

    ``scope(view, queryset)`` is the :mod:`ibweb.access` function of the model
    (``visible_partitions``, ...); ``related_scopes`` maps a foreign key's model to its own.
    """

    scope = None
    related_scopes: dict = {}

    def _view(self, request):
        return request_view(request)

    def get_queryset(self, request):
        return type(self).scope(self._view(request), super().get_queryset(request))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        scope = self.related_scopes.get(db_field.related_model)
        if scope is not None:
            kwargs["queryset"] = scope(self._view(request), db_field.related_model._default_manager.all())
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
