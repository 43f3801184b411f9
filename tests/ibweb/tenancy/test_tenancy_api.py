"""Tenancy REST API: UFM-style P_Key semantics, bad input, permissions, tenant restriction (issue 9)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import pytest
from rest_framework.test import APIClient

from ibweb.runtime import record
from ibweb.tenancy.inventory import fabric_inventory
from ibweb.tenancy.models import AuditEntry, Partition, PartitionMember
from tests.support.tenancy_fixtures import fabric, host_guid, partitions, tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db
BASE = "/api/tenancy/fabrics/tiny/pkeys/"


@pytest.fixture
def admin_api(db):
    client = APIClient()
    client.force_authenticate(user_in("policy admin", "pa"))
    return client


def guids_of(partition):
    return dict(partition.members.values_list("guid", "membership"))


def test_get_all_pkeys_with_guids(partitions):
    client = APIClient()
    client.force_authenticate(user_in("operator", "op"))
    fabric = partitions[0].fabric
    unpublished = client.get(BASE).json()  # no engine yet: the GUIDs name no node, and the read builds nothing
    assert {g["node"] for g in unpublished["0x0001"]["guids"]} == {None}
    assert record.head_of(fabric) is None
    inventory = fabric_inventory(fabric)  # published, as the fabric's engine (or a write checking GUIDs) does
    data = client.get(BASE).json()
    assert list(data) == ["0x7fff", "0x0001", "0x0002"]
    assert data["0x7fff"]["managed"] is True and data["0x7fff"]["keywords"]["ALL_CAS"] == "limited"
    assert data["0x0001"]["guids"] == [
        {"guid": host_guid(0), "membership": "full", "node": int(inventory.hosts[0])},
        {"guid": host_guid(1), "membership": "limited", "node": int(inventory.hosts[1])}]


def test_create_pkey_and_add_guids_with_membership_each(admin_api, fabric, tenants):
    r = admin_api.post(BASE, {"pkey": "0x0010", "name": "train", "tenant": "acme",
                              "guids": [host_guid(2), host_guid(3)], "memberships": ["full", "limited"]},
                       format="json")
    assert r.status_code == 201, r.json()
    p = Partition.objects.get(fabric=fabric, pkey=0x10)
    assert guids_of(p) == {host_guid(2): "full", host_guid(3): "limited"}
    # adding again to the existing P_Key changes memberships and adds new GUIDs
    r = admin_api.post(BASE, {"pkey": "0x10", "guids": [host_guid(3), host_guid(5)], "membership": "full"},
                       format="json")
    assert r.status_code == 200
    assert guids_of(p) == {host_guid(2): "full", host_guid(3): "full", host_guid(5): "full"}
    assert AuditEntry.objects.filter(object_type="tenancy.Partition", object_id=str(p.pk)).count() == 3


def test_remove_replace_and_qos(admin_api, partitions):
    a, _ = partitions
    url = f"{BASE}0x0001/"
    assert admin_api.post(url + "guids/remove/", {"guids": [host_guid(1)]}, format="json").status_code == 200
    assert guids_of(a) == {host_guid(0): "full"}
    r = admin_api.put(url + "guids/", {"guids": [host_guid(6), host_guid(7)], "membership": "limited"}, format="json")
    assert r.status_code == 200 and guids_of(a) == {host_guid(6): "limited", host_guid(7): "limited"}
    r = admin_api.put(url + "qos/", {"service_level": 4, "mtu_limit": 5, "rate_limit": 400}, format="json")
    assert r.status_code == 200, r.json()
    a.refresh_from_db()
    assert (a.sl, a.mtu, a.rate) == (4, 5, 21)
    entry = AuditEntry.objects.filter(object_id=str(a.pk)).first()
    assert entry.before["sl"] is None and entry.after["sl"] == 4 and entry.username == "pa"
    assert admin_api.delete(url).status_code == 204 and not Partition.objects.filter(pk=a.pk).exists()


@pytest.mark.parametrize("body, field, words", [
    ({"pkey": "0x7fff", "name": "d", "guids": []}, "pkey", "default partition"),
    ({"pkey": "0x0000", "name": "z"}, "pkey", "0x0001..0x7ffe"),
    ({"pkey": "banana", "name": "z"}, "pkey", "P_Key"),
    ({"pkey": "0x0001", "name": "dup"}, "name", ""),  # existing P_Key: name is irrelevant, guids missing -> ok
    ({"pkey": "0x0020", "name": ""}, "name", "blank"),
    ({"pkey": "0x0020", "name": "n", "guids": ["0xzz"]}, "guids", "malformed GUID"),
    ({"pkey": "0x0020", "name": "n", "guids": ["0x1234"]}, "guids", "not a port of fabric tiny"),
    ({"pkey": "0x0020", "name": "n", "guids": [host_guid(0), host_guid(0)]}, "guids", "listed twice"),
    ({"pkey": "0x0020", "name": "n", "guids": [host_guid(0)], "memberships": ["full", "full"]}, "memberships", "one"),
])
def test_bad_input_names_the_field_and_saves_nothing(admin_api, partitions, body, field, words):
    before = (Partition.objects.count(), PartitionMember.objects.count(), AuditEntry.objects.count())
    r = admin_api.post(BASE, body, format="json")
    if body["pkey"] == "0x0001":
        assert r.status_code == 200
        return
    assert r.status_code == 400, r.json()
    assert words in " ".join(r.json()[field])
    assert (Partition.objects.count(), PartitionMember.objects.count(), AuditEntry.objects.count()) == before


def test_qos_bad_values(admin_api, partitions):
    r = admin_api.put(f"{BASE}0x0001/qos/", {"service_level": 16, "rate_limit": 123}, format="json")
    assert r.status_code == 400 and set(r.json()) == {"service_level", "rate_limit"}


def test_crud_partition_serializer_errors(admin_api, partitions):
    r = admin_api.post("/api/tenancy/partitions/", {"fabric": "tiny", "name": "x", "pkey": "0x0002"}, format="json")
    assert r.status_code == 400 and "already used" in r.json()["pkey"][0]
    r = admin_api.post("/api/tenancy/partitions/", {"fabric": "tiny", "name": "x", "pkey": "0x0003", "sl": 16},
                       format="json")
    assert r.status_code == 400 and "sl" in r.json()
    r = admin_api.post("/api/tenancy/qos-policies/", {"fabric": "tiny", "vlarb_low": "0:999"}, format="json")
    assert r.status_code == 400 and "999" in str(r.json()["vlarb_low"])
    r = admin_api.post("/api/tenancy/partitions/", {"fabric": "tiny", "name": "ok", "pkey": 3}, format="json")
    assert r.status_code == 201 and r.json()["pkey"] == "0x0003"


def test_writes_need_permissions(partitions, tenants):
    viewer = APIClient()
    viewer.force_authenticate(user_in("viewer", "v"))
    assert viewer.get(BASE).status_code == 200
    assert viewer.post(BASE, {"pkey": "0x30", "name": "n"}, format="json").status_code == 403
    assert viewer.post(f"{BASE}0x0001/guids/remove/", {"guids": [host_guid(0)]}, format="json").status_code == 403
    assert viewer.delete(f"/api/tenancy/partitions/{partitions[0].pk}/").status_code == 403
    assert APIClient().post(BASE, {"pkey": "0x30", "name": "n"}, format="json").status_code in (401, 403)
    assert Partition.objects.count() == 2


def test_tenant_users_see_only_their_tenant(partitions, tenants):
    acme, _ = tenants
    client = APIClient()
    client.force_authenticate(user_in("viewer", "acme-user", acme))
    assert list(client.get(BASE).json()) == ["0x7fff", "0x0001"]
    names = [p["name"] for p in client.get("/api/tenancy/partitions/").json()["results"]]
    assert names == ["acme"]
    assert client.get(f"{BASE}0x0002/").status_code == 404
    assert [t["slug"] for t in client.get("/api/tenancy/tenants/").json()["results"]] == ["acme"]
    assert client.get("/api/tenancy/fabrics/tiny/opensm/partitions.conf").status_code == 403


def test_tenant_policy_admin_cannot_touch_other_tenants(partitions, tenants):
    acme, _ = tenants
    client = APIClient()
    client.force_authenticate(user_in(None, "acme-admin", acme))
    from django.contrib.auth.models import Permission
    u = client.handler._force_user
    u.user_permissions.add(*Permission.objects.filter(codename__in=["change_partition", "add_partitionmember",
                                                                    "add_partition"]))
    r = client.post(f"{BASE}0x0002/guids/", {"guids": [host_guid(5)]}, format="json")
    assert r.status_code == 404
    r = client.post(BASE, {"pkey": "0x40", "name": "mine", "tenant": "globex"}, format="json")
    assert r.status_code == 400 and "tenant" in r.json()
    assert client.post(f"{BASE}0x0001/guids/", {"guids": [host_guid(5)]}, format="json").status_code == 200


def test_get_never_changes_anything(partitions):
    client = APIClient()
    client.force_authenticate(user_in("policy admin", "pa2"))
    before = AuditEntry.objects.count()
    for url in (BASE, f"{BASE}0x0001/", "/api/tenancy/fabrics/tiny/opensm/partitions.conf",
                "/api/tenancy/partitions/", "/api/tenancy/audit-entries/"):
        assert client.get(url).status_code == 200
    assert client.get(f"{BASE}0x0001/guids/").status_code == 405
    assert AuditEntry.objects.count() == before


def test_schema_lists_tenancy_paths(db):
    r = APIClient().get("/api/schema/")
    assert r.status_code == 200 and b"/api/tenancy/fabrics/{fabric}/pkeys/" in r.content
