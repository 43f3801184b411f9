"""Operators manage clusters (which fabrics are a cluster's planes is set on each fabric, which they may change);
policy admins and viewers may view them. Superusers hold every permission."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

OPERATOR = [("fabrics", f"{action}_cluster") for action in ("add", "change", "delete", "view")]
VIEW = [("fabrics", "view_cluster")]
ROLES = {"operator": OPERATOR, "policy admin": VIEW, "viewer": VIEW}


def grant(apps, schema_editor):
    config = apps.get_app_config("fabrics")
    config.models_module = True
    create_permissions(config, apps=apps, verbosity=0)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, perms in ROLES.items():
        group, _ = Group.objects.get_or_create(name=name)
        for app_label, codename in perms:
            group.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


def revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for group in apps.get_model("auth", "Group").objects.filter(name__in=ROLES):
        group.permissions.remove(*Permission.objects.filter(content_type__app_label="fabrics",
                                                            codename__endswith="_cluster"))


class Migration(migrations.Migration):
    dependencies = [
        ("fabrics", "0008_cluster"),
        ("tenancy", "0003_roles"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
