"""The role groups the migrations make, made again where a transactional test flushed them.

A transactional test empties every table when it ends; Django makes the permissions again (``post_migrate``)
but not the groups the role migrations made, so a test that runs after one on the same worker would find no
``operator`` or ``viewer``. :func:`ensure_roles` replays those migrations' grants on the project's historical
models when a role is missing (one count query otherwise).
"""

from __future__ import annotations

import importlib

from django.contrib.auth.models import Group
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from ibweb.auth import role_grants

__all__ = ["ROLE_MIGRATIONS", "ensure_roles"]

#: The migrations that grant roles (each has ``ROLES``), in the order they apply.
ROLE_MIGRATIONS = (
    "ibweb.tenancy.migrations.0003_roles",
    "ibweb.events.migrations.0002_roles",
    "ibweb.fabrics.migrations.0006_operator_analyses",
    "ibweb.fabrics.migrations.0009_cluster_roles",
    "ibweb.twin.migrations.0002_operator_permissions",
    "ibweb.accounts.migrations.0003_service_account_role",
    "ibweb.notify.migrations.0002_roles",
    "ibweb.tenancy.migrations.0005_congestion_control_roles",
)


def _roles() -> list[dict]:
    return [importlib.import_module(name).ROLES for name in ROLE_MIGRATIONS]


def ensure_roles() -> None:
    """Make the role groups and their permissions again if any is missing."""
    roles = _roles()
    names = {name for r in roles for name in r}
    if Group.objects.filter(name__in=names).count() == len(names):
        return
    apps = MigrationLoader(connection).project_state().apps
    for r in roles:
        role_grants.grant(apps, r)
