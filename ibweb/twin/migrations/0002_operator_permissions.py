"""Operators manage job sources, job tokens and cabling plans; every role may view them."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

MODELS = ("jobsource", "jobtoken", "scheduledjob", "cablingplan")
OPERATOR = [("twin", f"{a}_{m}") for m in MODELS for a in ("add", "change", "delete", "view")]
VIEW = [("twin", f"view_{m}") for m in ("scheduledjob", "cablingplan")]
ROLES = {"operator": OPERATOR, "policy admin": VIEW, "viewer": VIEW}


def grant(apps, schema_editor):
    for config in apps.get_app_configs():
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
        group.permissions.remove(*Permission.objects.filter(content_type__app_label="twin"))


class Migration(migrations.Migration):
    dependencies = [
        ("twin", "0001_initial"),
        ("tenancy", "0003_roles"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
