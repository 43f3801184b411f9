"""Operators start analyses (eBB, the what-ifs, the twin's what-if): the operator role gets ``add_analysis``.

Superusers hold every permission; viewers, tenants' users and anonymous visitors do not get it.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = {"operator": [("fabrics", "add_analysis")]}


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
    for name, perms in ROLES.items():
        for group in apps.get_model("auth", "Group").objects.filter(name=name):
            group.permissions.remove(*[Permission.objects.get(content_type__app_label=a, codename=c) for a, c in perms])


class Migration(migrations.Migration):
    dependencies = [
        ("fabrics", "0005_analysis_whatif_live"),
        ("tenancy", "0003_roles"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
