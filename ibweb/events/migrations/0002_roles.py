"""The roles' event permissions: everyone who views sees events; operators acknowledge; operators and
policy admins comment."""

from django.db import migrations

from ibweb import role_grants

ROLES = {name: [("events", codename) for codename in codenames] for name, codenames in {
    "viewer": ["view_event", "view_eventcomment"],
    "operator": ["view_event", "change_event", "view_eventcomment", "add_eventcomment"],
    "policy admin": ["view_event", "view_eventcomment", "add_eventcomment"],
}.items()}


class Migration(migrations.Migration):
    dependencies = [("events", "0001_initial"), ("tenancy", "0003_roles")]

    operations = [role_grants.operation(ROLES)]
