"""Who sees how much: a user's :class:`View` (a level, and the tenants it is granted), from explicit grants."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from django.conf import settings

__all__ = ["Level", "View", "view_of", "view_from_key", "VIEW_ALL_PERMISSION", "NOTHING", "FABRIC_ONLY",
           "EVERYTHING"]

#: The permission that grants the ``ALL`` level.
VIEW_ALL_PERMISSION = "tenancy.view_all_tenants"


class Level(IntEnum):
    """How much of the fabric a user may see (ordered: a higher level sees more)."""

    NONE = 0
    FABRIC = 1
    TENANTS = 2
    ALL = 3


@dataclass(frozen=True)
class View:
    """What one user may see: a level, and for ``TENANTS`` the IDs of their tenants."""

    level: Level
    tenant_ids: frozenset[int] = frozenset()

    @property
    def key(self) -> str:
        """A short stable name of this view: users with equal keys see exactly the same data.

        ``"none"``, ``"fabric"``, ``"all"``, or ``"t-<id>-<id>..."`` (tenant IDs ascending).
        """
        if self.level == Level.TENANTS:
            return "t-" + "-".join(str(i) for i in sorted(self.tenant_ids))
        return self.level.name.lower()

    @property
    def may_view(self) -> bool:
        """Whether the user may view dashboards, feeds and read-only endpoints at all."""
        return self.level > Level.NONE

    @property
    def sees_all(self) -> bool:
        """Whether the user sees every tenant's data (and the audit log, exports and collectors)."""
        return self.level == Level.ALL

    @property
    def sees_tenants(self) -> bool:
        """Whether the user sees tenant-scoped data at all (their own tenants', or every tenant's)."""
        return self.level >= Level.TENANTS

    def sees_tenant(self, tenant_id: int | None) -> bool:
        """Whether data of the tenant with this ID is visible (``None``, data of no tenant, only to ``ALL``)."""
        if self.level == Level.ALL:
            return True
        return self.level == Level.TENANTS and tenant_id is not None and tenant_id in self.tenant_ids


NOTHING = View(Level.NONE)
FABRIC_ONLY = View(Level.FABRIC)
EVERYTHING = View(Level.ALL)


def view_from_key(key: str) -> View:
    """The :class:`View` a :attr:`View.key` names (``"all"``, ``"fabric"``, ``"t-1-2"``); ``ValueError`` otherwise."""
    if key == "all":
        return EVERYTHING
    if key.startswith("t-"):
        try:
            return View(Level.TENANTS, frozenset(int(i) for i in key[2:].split("-")))
        except ValueError:
            pass
    elif key == "fabric":
        return FABRIC_ONLY
    raise ValueError(f"not a view key: {key!r}")


def view_of(user) -> View:
    """The :class:`View` of ``user`` (a Django user, ``AnonymousUser`` or ``None``)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return FABRIC_ONLY if settings.IBWEB_PUBLIC_READ else NOTHING
    if user.is_superuser or user.has_perm(VIEW_ALL_PERMISSION):
        return EVERYTHING
    ids = frozenset(user.tenants.values_list("pk", flat=True))
    return View(Level.TENANTS, ids) if ids else FABRIC_ONLY
