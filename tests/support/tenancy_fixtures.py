"""Fixtures shared by the tenancy web tests (imported by ``test_tenancy_*.py``)."""

import pytest
from django.contrib.auth.models import Group, User

from ibweb.fabrics.models import Fabric
from ibweb.tenancy.models import Partition, PartitionMember, Tenant

SPEC = {"topology": {"generator": "fat_tree", "hosts": 8, "radix": 4, "name": "tiny"}}


def host_guid(rank: int) -> str:
    """Port GUID of host ``rank`` (0-based) of the generated fat tree: node GUID base + (rank+1)*0x10, port 1."""
    return f"0x{0xB83FD20300000000 + (rank + 1) * 0x10 + 1:016x}"


@pytest.fixture
def fabric(db):
    return Fabric.objects.create(name="Tiny", slug="tiny", spec=SPEC)


@pytest.fixture
def tenants(db):
    return Tenant.objects.create(name="Acme", slug="acme"), Tenant.objects.create(name="Globex", slug="globex")


@pytest.fixture
def partitions(fabric, tenants):
    acme, globex = tenants
    a = Partition.objects.create(fabric=fabric, tenant=acme, name="acme", pkey=0x0001)
    g = Partition.objects.create(fabric=fabric, tenant=globex, name="globex", pkey=0x0002, sl=3)
    PartitionMember.objects.create(partition=a, guid=host_guid(0), membership="full")
    PartitionMember.objects.create(partition=a, guid=host_guid(1), membership="limited")
    PartitionMember.objects.create(partition=g, guid=host_guid(4), membership="full")
    return a, g


def user_in(role: str | None, username: str, tenant: Tenant | None = None) -> User:
    user = User.objects.create_user(username, password="pw-" + username)
    if role:
        user.groups.add(Group.objects.get(name=role))
    if tenant is not None:
        tenant.users.add(user)
    return user


def operator_api(username: str = "operator-api"):
    """An API client of a user who may see every tenant (the ``ALL`` level, as the operator role gives).

    The permission is granted directly: transactional tests flush the roles the migration created.
    """
    from django.contrib.auth.models import Permission
    from rest_framework.test import APIClient

    user = User.objects.filter(username=username).first()
    if user is None:
        user = User.objects.create_user(username, password="pw-" + username)
        user.user_permissions.add(Permission.objects.get(codename="view_all_tenants"))
    client = APIClient()
    client.force_authenticate(user)
    return client
