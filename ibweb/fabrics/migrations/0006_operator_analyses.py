"""Operators start analyses (eBB, the what-ifs, the twin's what-if): the operator role gets ``add_analysis``.

Superusers hold every permission; viewers, tenants' users and anonymous visitors do not get it.
"""

from django.db import migrations

from ibweb.auth import role_grants

ROLES = {"operator": [("fabrics", "add_analysis")]}


class Migration(migrations.Migration):
    dependencies = [
        ("fabrics", "0005_analysis_whatif_live"),
        ("tenancy", "0003_roles"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [role_grants.operation(ROLES)]
