"""Tenancy models: validation at the field, roles, inventory checks, audit (issue 9)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from ibweb.tenancy.models import Partition, PartitionMember, QosPolicy
from tests.support.tenancy_fixtures import fabric, host_guid, partitions, tenants  # noqa: F401

pytestmark = pytest.mark.django_db


def errors_of(obj) -> dict:
    with pytest.raises(ValidationError) as info:
        obj.full_clean()
    return info.value.message_dict


@pytest.mark.parametrize("pkey, words", [(0, "0x0001..0x7ffe"), (0x7FFF, "default partition"),
                                         (0x8001, "0x0001..0x7ffe")])
def test_bad_pkey_is_a_field_error(fabric, pkey, words):
    assert words in " ".join(errors_of(Partition(fabric=fabric, name="x", pkey=pkey))["pkey"])


def test_duplicate_pkey_and_missing_name(partitions, fabric):
    assert "already used" in errors_of(Partition(fabric=fabric, name="other", pkey=0x0001))["pkey"][0]
    assert "already used" in errors_of(Partition(fabric=fabric, name="acme", pkey=0x0005))["name"][0]
    assert "name" in errors_of(Partition(fabric=fabric, name="", pkey=0x0009))
    assert "sl" in errors_of(Partition(fabric=fabric, name="s", pkey=0x0009, sl=16))


def test_member_guid_checked_against_inventory(partitions):
    a, _ = partitions
    assert "malformed GUID" in errors_of(PartitionMember(partition=a, guid="0xnothex"))["guid"][0]
    assert "not a port of fabric tiny" in errors_of(PartitionMember(partition=a, guid="0x1234"))["guid"][0]
    for spelled in (host_guid(2).upper().replace("0X", "0x"), host_guid(2).upper()):  # "0XB83F..." too
        ok = PartitionMember(partition=a, guid=spelled)
        ok.full_clean()
        assert ok.guid == host_guid(2)


def test_qos_tables_validated_per_field(fabric):
    errs = errors_of(QosPolicy(fabric=fabric, vlarb_high="0:256", vlarb_low="0:4", sl2vl="0," * 15 + "0",
                               high_limit=300))
    assert "256" in errs["vlarb_high"][0] and "high_limit" in errs
    errs = errors_of(QosPolicy(fabric=fabric, max_vls=2, sl2vl="0,1,2,0,0,0,0,0,0,0,0,0,0,0,0,15"))
    assert "SL 2->VL 2" in errs["sl2vl"][0]


def test_roles_exist_with_permissions():
    perms = {g.name: {p.codename for p in g.permissions.all()} for g in Group.objects.all()}
    assert "change_partition" in perms["policy admin"] and "change_partition" not in perms["viewer"]
    assert "view_partition" in perms["viewer"] and "view_all_tenants" in perms["operator"]
