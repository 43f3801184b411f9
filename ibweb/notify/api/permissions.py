"""Who may change notification settings, from the access view (:func:`ibweb.access.view_of`) and model permissions.

Reads: any view above ``NONE``, the rows cut by each model's access scope (a tenant's channels and rules to its
users, the operators' and the silences to ``ALL`` only). Writes need the model permission (operators; a tenant's
admins are granted the channel and rule permissions by the ``tenant admin`` role) and, below ``ALL``, a row of one
of the user's tenants: a tenant's admins manage their tenant's channels and rules only.
"""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS

from ibweb.access import view_of
from ibweb.auth.permissions import ViewerReadAllTenantsWrite, ViewerReadOrModelPermissions

__all__ = ["TenantOwnedWrite", "OperatorsWrite", "OperatorsChange", "may_own"]


def may_own(user, tenant_id: int | None) -> bool:
    """Whether ``user`` may write a row owned by ``tenant_id`` (``None``: the operators')."""
    view = view_of(user)
    return view.sees_all or (tenant_id is not None and view.sees_tenants and tenant_id in view.tenant_ids)


class TenantOwnedWrite(ViewerReadOrModelPermissions):
    """Channels and rules: model permissions, and the row's tenant one of the user's below ``ALL``."""

    def has_permission(self, request, view) -> bool:
        writes = request.method not in SAFE_METHODS and hasattr(view, request.method.lower())
        if writes and not view_of(request.user).sees_tenants:
            return False
        return super().has_permission(request, view)

    def has_object_permission(self, request, view, obj) -> bool:
        return request.method in SAFE_METHODS or may_own(request.user, obj.tenant_id)


class OperatorsWrite(ViewerReadAllTenantsWrite):
    """Silences: written by the ``ALL`` level with the model permission (they may silence any tenant's events)."""


class OperatorsChange(OperatorsWrite):
    """Actions that change a row through a POST (expire a silence): as :class:`OperatorsWrite`, but the POST asks
    the model's ``change`` permission, not ``add`` (DRF's default for a POST)."""

    perms_map = {**OperatorsWrite.perms_map, "POST": ["%(app_label)s.change_%(model_name)s"]}
