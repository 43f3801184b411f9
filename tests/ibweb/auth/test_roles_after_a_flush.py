"""The role groups come back for a test that runs after a transactional test emptied the tables."""

import pytest
from django.contrib.auth.models import Group, Permission

from tests.support.roles import ensure_roles

pytestmark = pytest.mark.django_db


def test_roles_flushed_are_made_again_with_their_permissions():
    operator_perms = set(Group.objects.get(name="operator").permissions.values_list("codename", flat=True))
    Group.objects.all().delete()
    ensure_roles()
    again = set(Group.objects.get(name="operator").permissions.values_list("codename", flat=True))
    assert again == operator_perms and "view_all_tenants" in again
    assert Permission.objects.filter(group__name="viewer").exists()
