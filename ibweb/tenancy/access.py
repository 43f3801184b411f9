"""Who sees which tenant: the one place that decides (pages, API and the live feed ask it).

A user belongs to tenants through ``Tenant.users``. Superusers, users with the
``tenancy.view_all_tenants`` permission (the operator and policy admin roles) and
users of no tenant see everything :func:`ibweb.permissions.can_view` lets them see;
any other user sees only the partitions, jobs and hosts of their own tenants.
"""

from __future__ import annotations

import numpy as np

from ibweb.permissions import can_view

__all__ = ["visible_tenant_ids", "visible_tenant_slugs", "visible_hosts", "can_see_tenant"]


def visible_tenant_ids(user) -> set[int] | None:
    """IDs of the tenants ``user`` may see; ``None`` means all (an empty set: none)."""
    if not can_view(user):
        return set()
    if not (user and user.is_authenticated) or user.is_superuser or user.has_perm("tenancy.view_all_tenants"):
        return None
    ids = set(user.tenants.values_list("pk", flat=True))
    return ids or None


def visible_tenant_slugs(user) -> set[str] | None:
    """Slugs (and names) of the tenants ``user`` may see, ``None`` for all; jobs name their tenant by either."""
    from .models import Tenant

    ids = visible_tenant_ids(user)
    if ids is None:
        return None
    rows = Tenant.objects.filter(pk__in=ids).values_list("slug", "name")
    return {s for pair in rows for s in pair}


def can_see_tenant(user, tenant: str | None) -> bool:
    """Whether a job or row of tenant ``tenant`` (slug or name; ``None`` for none) is visible to ``user``."""
    slugs = visible_tenant_slugs(user)
    return slugs is None or (tenant is not None and tenant in slugs)


def visible_hosts(user, fabric) -> np.ndarray | None:
    """Node indices of the hosts ``user`` may see on ``fabric``: their tenants' members (``None``: all)."""
    from .engine_policy import policy_for
    from .models import Partition

    ids = visible_tenant_ids(user)
    if ids is None:
        return None
    names = set(Partition.objects.filter(fabric=fabric, tenant_id__in=ids).values_list("name", flat=True))
    policy, inv = policy_for(fabric)
    rows = [k for k, n in enumerate(policy.names) if n in names]
    if not rows:
        return np.zeros(0, dtype=np.int64)
    member = (policy.membership[rows] != 0).any(axis=0)
    return np.intersect1d(np.flatnonzero(member), inv.hosts)
