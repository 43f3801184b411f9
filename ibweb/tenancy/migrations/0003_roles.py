"""Roles as groups: viewer, operator, policy admin, with their model permissions."""

from django.db import migrations

from ibweb.auth import role_grants

TENANCY_MODELS = ("tenant", "serviceclass", "partition", "partitionmember", "qospolicy", "auditentry")
EDITABLE = ("tenant", "serviceclass", "partition", "partitionmember", "qospolicy")

ROLES = {
    "viewer": [("tenancy", f"view_{m}") for m in TENANCY_MODELS] + [("fabrics", "view_fabric")],
    "operator": [("tenancy", f"view_{m}") for m in TENANCY_MODELS]
    + [("tenancy", "view_all_tenants"), ("fabrics", "view_fabric"), ("fabrics", "change_fabric")],
    "policy admin": [("tenancy", f"view_{m}") for m in TENANCY_MODELS]
    + [("tenancy", f"{a}_{m}") for m in EDITABLE for a in ("add", "change", "delete")]
    + [("tenancy", "view_all_tenants"), ("fabrics", "view_fabric")],
}


def create_roles(apps, schema_editor):
    role_grants.grant(apps, ROLES)


def delete_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("tenancy", "0002_partitions_qos_audit"),
        ("fabrics", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_roles, delete_roles)]
