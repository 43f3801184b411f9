"""The roles' event permissions: everyone who views sees events; operators acknowledge; operators and
policy admins comment."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = {
    "viewer": ["view_event", "view_eventcomment"],
    "operator": ["view_event", "change_event", "view_eventcomment", "add_eventcomment"],
    "policy admin": ["view_event", "view_eventcomment", "add_eventcomment"],
}


def grant(apps, schema_editor):
    config = apps.get_app_config("events")
    config.models_module = True
    create_permissions(config, apps=apps, verbosity=0)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in ROLES.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*Permission.objects.filter(content_type__app_label="events", codename__in=codenames))


def revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for group in apps.get_model("auth", "Group").objects.filter(name__in=ROLES):
        group.permissions.remove(*Permission.objects.filter(content_type__app_label="events"))


class Migration(migrations.Migration):
    dependencies = [("events", "0001_initial"), ("tenancy", "0003_roles")]

    operations = [migrations.RunPython(grant, revoke)]
