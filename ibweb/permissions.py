"""Who may do what: anonymous read where public read is on, model permissions for writes."""

from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from rest_framework.permissions import SAFE_METHODS, DjangoModelPermissions


def can_view(user) -> bool:
    """Whether ``user`` may view dashboards, feeds and read-only API endpoints."""
    return bool(settings.IBWEB_PUBLIC_READ or (user and user.is_authenticated))


def view_required(view):
    """Page decorator: visitors who may not view (see :func:`can_view`) are sent to the login page."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not can_view(request.user):
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapped


def visible_tenants(user) -> set[str] | None:
    """Slugs and names of the tenants whose jobs ``user`` may see; ``None`` for all (see ``tenancy.access``)."""
    from ibweb.tenancy.access import visible_tenant_slugs

    return visible_tenant_slugs(user)


class PublicReadOrModelPermissions(DjangoModelPermissions):
    """Reads follow :func:`can_view`; writes need the model's add/change/delete permission."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return can_view(request.user)
        return super().has_permission(request, view)
