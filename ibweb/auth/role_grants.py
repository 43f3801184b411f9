"""What the role migrations do: give the roles' groups their permissions, or take them back.

``roles`` maps a group name to ``(app label, codename)`` pairs. The permissions are created first (a new
model's are made only after the migrations otherwise). Migrations call these with their historical ``apps``.
"""

from __future__ import annotations

from django.contrib.auth.management import create_permissions
from django.db import migrations

__all__ = ["grant", "revoke", "operation"]


def grant(apps, roles: dict[str, list[tuple[str, str]]]) -> None:
    """Add each role's permissions to its group (made if missing)."""
    for label in sorted({app for perms in roles.values() for app, _ in perms}):
        config = apps.get_app_config(label)
        config.models_module = True
        create_permissions(config, apps=apps, verbosity=0)
        config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, perms in roles.items():
        group, _ = Group.objects.get_or_create(name=name)
        for app_label, codename in perms:
            group.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


def revoke(apps, roles: dict[str, list[tuple[str, str]]]) -> None:
    """Remove each role's permissions from its group."""
    Permission = apps.get_model("auth", "Permission")
    for group in apps.get_model("auth", "Group").objects.filter(name__in=roles):
        for app_label, codename in roles[group.name]:
            group.permissions.remove(*Permission.objects.filter(content_type__app_label=app_label, codename=codename))


def operation(roles: dict[str, list[tuple[str, str]]]) -> migrations.RunPython:
    """The migration operation that grants ``roles`` (and revokes them when unapplied)."""
    return migrations.RunPython(lambda apps, schema_editor: grant(apps, roles),
                                lambda apps, schema_editor: revoke(apps, roles))
