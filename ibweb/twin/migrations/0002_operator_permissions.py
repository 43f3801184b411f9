"""Operators manage job sources, job tokens and cabling plans; every role may view them."""

from django.db import migrations

from ibweb.auth import role_grants

MODELS = ("jobsource", "jobtoken", "scheduledjob", "cablingplan")
OPERATOR = [("twin", f"{a}_{m}") for m in MODELS for a in ("add", "change", "delete", "view")]
VIEW = [("twin", f"view_{m}") for m in ("scheduledjob", "cablingplan")]
ROLES = {"operator": OPERATOR, "policy admin": VIEW, "viewer": VIEW}


class Migration(migrations.Migration):
    dependencies = [
        ("twin", "0001_initial"),
        ("tenancy", "0003_roles"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [role_grants.operation(ROLES)]
