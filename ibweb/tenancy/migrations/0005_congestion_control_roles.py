"""The roles' permissions on congestion control policies: as on QoS policies (0003_roles, accounts 0003)."""

from django.db import migrations

from ibweb.auth import role_grants

MODEL = "congestioncontrolpolicy"
ROLES = {
    "viewer": [("tenancy", f"view_{MODEL}")],
    "operator": [("tenancy", f"view_{MODEL}")],
    "policy admin": [("tenancy", f"{a}_{MODEL}") for a in ("view", "add", "change", "delete")],
    "service account": [("tenancy", f"view_{MODEL}")],
}


class Migration(migrations.Migration):
    dependencies = [
        ("tenancy", "0004_congestion_control_policy"),
        ("accounts", "0003_service_account_role"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [role_grants.operation(ROLES)]
