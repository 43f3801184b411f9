"""Fixtures the fabrics app's tests share."""

import pytest
from django.contrib.auth.models import Permission, User


@pytest.fixture
def operator(client):
    """``client`` signed in as a user who may add and change fabrics and sees every tenant."""
    user = User.objects.create_user("op", password="pw")
    user.user_permissions.add(*Permission.objects.filter(codename__in=["add_fabric", "change_fabric",
                                                                        "view_all_tenants"]))
    client.force_login(user)
    return client
