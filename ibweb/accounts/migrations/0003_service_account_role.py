"""The ``service account`` role (issue 42): a script's read-only API access, what a viewer may view.

A service account signs in with an API token (``manage.py create_user NAME --role service-account --token``),
is not staff (no admin) and has no usable password unless one is given; like a viewer it sees the fabrics,
and its tenants' share when it belongs to tenants.
"""

from django.db import migrations

from ibweb.auth import role_grants

TENANCY = ("tenant", "serviceclass", "partition", "partitionmember", "qospolicy", "auditentry")
ROLES = {
    "service account": [("tenancy", f"view_{m}") for m in TENANCY]
    + [("fabrics", "view_fabric"), ("fabrics", "view_cluster"), ("twin", "view_scheduledjob"),
       ("twin", "view_cablingplan"), ("events", "view_event"), ("events", "view_eventcomment")],
}


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_hash_drf_tokens"),
        ("tenancy", "0003_roles"),
        ("fabrics", "0009_cluster_roles"),
        ("twin", "0002_operator_permissions"),
        ("events", "0002_roles"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [role_grants.operation(ROLES)]
