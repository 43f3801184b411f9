"""Operators manage clusters (which fabrics are a cluster's planes is set on each fabric, which they may change);
policy admins and viewers may view them. Superusers hold every permission."""

from django.db import migrations

from ibweb.auth import role_grants

OPERATOR = [("fabrics", f"{action}_cluster") for action in ("add", "change", "delete", "view")]
VIEW = [("fabrics", "view_cluster")]
ROLES = {"operator": OPERATOR, "policy admin": VIEW, "viewer": VIEW}


class Migration(migrations.Migration):
    dependencies = [
        ("fabrics", "0008_cluster"),
        ("tenancy", "0003_roles"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [role_grants.operation(ROLES)]
