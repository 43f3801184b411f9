"""The roles' event permissions: everyone who views sees events; operators acknowledge; operators and
policy admins comment."""

from django.db import migrations

from ibweb.auth import role_grants

ROLES = {
    "viewer": [("events", "view_event"), ("events", "view_eventcomment")],
    "operator": [("events", "view_event"), ("events", "change_event"), ("events", "view_eventcomment"),
                 ("events", "add_eventcomment")],
    "policy admin": [("events", "view_event"), ("events", "view_eventcomment"), ("events", "add_eventcomment")],
}


class Migration(migrations.Migration):
    dependencies = [("events", "0001_initial"), ("tenancy", "0003_roles")]

    operations = [role_grants.operation(ROLES)]
