"""The roles' notification permissions: operators manage channels, rules and silences and read deliveries;
policy admins read them; a tenant's admins (the ``tenant admin`` role, with the tenant's membership) manage that
tenant's channels and rules (ibweb.notify.api.permissions)."""

from django.db import migrations

from ibweb.auth import role_grants

_CRUD = ("add", "change", "delete", "view")
ROLES = {
    "operator": [("notify", f"{op}_{m}") for m in ("channel", "rule", "silence") for op in _CRUD]
                + [("notify", "view_delivery"), ("notify", "view_attempt")],
    "policy admin": [("notify", f"view_{m}") for m in ("channel", "rule", "silence", "delivery", "attempt")],
    "tenant admin": [("notify", f"{op}_{m}") for m in ("channel", "rule") for op in _CRUD]
                    + [("notify", "view_delivery"), ("notify", "view_attempt")],
}


class Migration(migrations.Migration):
    dependencies = [("notify", "0001_initial"), ("events", "0002_roles")]

    operations = [role_grants.operation(ROLES)]
