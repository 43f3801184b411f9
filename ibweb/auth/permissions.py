"""Who may call what: reads follow :func:`ibweb.access.view_of`, writes need model permissions.

The checks here only ask the :class:`~ibweb.access.View`; what each level sees is
decided in :mod:`ibweb.access`.
"""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import SAFE_METHODS, BasePermission, DjangoModelPermissions

from ibweb.access import view_of

__all__ = ["view_required", "all_tenants_required", "ViewerReadOrModelPermissions", "ViewerReadAllTenantsWrite",
           "ViewerRead", "AllTenantsRead"]


def view_required(view):
    """Page decorator: visitors who may not view anything are sent to the login page."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not view_of(request.user).may_view:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapped


def all_tenants_required(view):
    """Page decorator for what shows every tenant (exports, imports): the ``ALL`` level only.

    Visitors who are not signed in go to the login page; others get 403.
    """

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not view_of(request.user).sees_all:
            raise PermissionDenied("this shows every tenant: operators and policy admins only")
        return view(request, *args, **kwargs)

    return wrapped


def _unsupported(request, view) -> bool:
    """Whether ``view`` has no handler for the request's method (DRF then answers 405)."""
    return not hasattr(view, request.method.lower())


class ViewerReadOrModelPermissions(DjangoModelPermissions):
    """Reads need a view above ``NONE``; writes need the model's add/change/delete permission."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return view_of(request.user).may_view
        if _unsupported(request, view):
            return True  # 405, not 403 or a 500 from a view without a queryset
        return super().has_permission(request, view)


class ViewerReadAllTenantsWrite(ViewerReadOrModelPermissions):
    """As :class:`ViewerReadOrModelPermissions`, but writes also need the ``ALL`` level (they touch every tenant)."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS or _unsupported(request, view):
            return super().has_permission(request, view)
        return view_of(request.user).sees_all and super().has_permission(request, view)


class ViewerRead(BasePermission):
    """Read-only endpoints for any view above ``NONE`` (what they show is cut to the view)."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return view_of(request.user).may_view
        return _unsupported(request, view)


class AllTenantsRead(BasePermission):
    """Read-only endpoints that show every tenant (audit log, collectors, sweeps): the ``ALL`` level only."""

    message = "this shows every tenant: operators and policy admins only"

    def has_permission(self, request, view) -> bool:
        if _unsupported(request, view):
            return True
        return request.method in SAFE_METHODS and view_of(request.user).sees_all
