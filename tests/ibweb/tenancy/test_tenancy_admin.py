"""Tenancy admin and the "Tenants and policy" page (issue 9)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import pytest
from django.test import Client

from ibweb.tenancy.inventory import fabric_inventory
from ibweb.tenancy.models import AuditEntry, Partition
from tests.support.tenancy_fixtures import fabric, host_guid, partitions, tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db


def inline_data(partition, rows, **fields):
    data = {"fabric": partition.fabric_id, "tenant": partition.tenant_id or "", "name": partition.name,
            "pkey": f"0x{partition.pkey:04x}", "ipoib": "on", "default_membership": "full", **fields,
            "members-TOTAL_FORMS": str(len(rows)), "members-INITIAL_FORMS": "0", "members-MIN_NUM_FORMS": "0",
            "members-MAX_NUM_FORMS": "1000"}
    for i, (guid, membership) in enumerate(rows):
        data[f"members-{i}-guid"] = guid
        data[f"members-{i}-membership"] = membership
    return data


def test_admin_lists_and_searches(admin_client, partitions):
    r = admin_client.get("/admin/tenancy/partition/", {"q": host_guid(4)})
    assert r.status_code == 200 and b"globex" in r.content and b"0x0001" not in r.content
    assert admin_client.get("/admin/tenancy/tenant/").status_code == 200
    assert admin_client.get("/admin/tenancy/auditentry/").status_code == 200


def test_admin_inline_rejects_unknown_guid_and_saves_nothing(admin_client, fabric):
    p = Partition(fabric=fabric, name="new", pkey=0x0033)
    r = admin_client.post("/admin/tenancy/partition/add/", inline_data(p, [(host_guid(0), "full"), ("0x99", "full")]))
    assert r.status_code == 200 and b"is not a port of fabric tiny" in r.content
    assert not Partition.objects.filter(pkey=0x33).exists()
    r = admin_client.post("/admin/tenancy/partition/add/", inline_data(p, [(host_guid(0), "full")], sl="16"))
    assert r.status_code == 200 and b"less than or equal to 15" in r.content
    r = admin_client.post("/admin/tenancy/partition/add/", inline_data(p, [(host_guid(0), "full")], pkey="0x7fff"))
    assert b"default partition" in r.content and not Partition.objects.filter(pkey=0x33).exists()
    r = admin_client.post("/admin/tenancy/partition/add/", inline_data(p, [(host_guid(0), "full")]))
    assert r.status_code == 302
    created = Partition.objects.get(pkey=0x33)
    assert created.members.get().guid == host_guid(0)
    entry = AuditEntry.objects.get(object_id=str(created.pk))
    assert entry.action == "create" and entry.via == "admin" and entry.after["members"] == {host_guid(0): "full"}


def test_bulk_add_from_pasted_guids_and_pattern(admin_client, partitions):
    a, _ = partitions
    url = f"/admin/tenancy/partition/{a.pk}/bulk-members/"
    assert admin_client.get(url).status_code == 200
    r = admin_client.post(url, {"guids": f"{host_guid(2)}, {host_guid(3)}\n", "host_pattern": "gpu000[78]",
                                "membership": "limited"})
    assert r.status_code == 302
    assert set(a.members.filter(membership="limited").values_list("guid", flat=True)) == \
        {host_guid(1), host_guid(2), host_guid(3), host_guid(6), host_guid(7)}
    r = admin_client.post(url, {"guids": "0x42", "membership": "full"})
    assert r.status_code == 200 and b"not a port of fabric tiny" in r.content
    r = admin_client.post(url, {"host_pattern": "nothing*", "membership": "full"})
    assert b"no host of fabric tiny matches" in r.content


def test_admin_forms_need_csrf(partitions):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user_in("policy admin", "pa-staff"))
    a, _ = partitions
    r = client.post(f"/admin/tenancy/partition/{a.pk}/bulk-members/", {"guids": host_guid(5), "membership": "full"})
    assert r.status_code == 403


def test_policy_page_read_only_for_operators(client, partitions):
    fabric_inventory(partitions[0].fabric)  # the record its engine publishes: the page places GUIDs on it
    client.force_login(user_in("operator", "op-page"))
    r = client.get("/tenancy/fabrics/tiny/")
    assert r.status_code == 200
    body = r.content.decode()
    assert "acme" in body and "globex" in body and "gpu0001" in body and "leaf01" in body
    assert "Import partitions.conf" not in body and "partitions.conf" in body


def test_policy_page_shows_no_tenant_to_anonymous_visitors_or_viewers_of_no_tenant(client, partitions):
    """Issue 14: public read and a user of no tenant get the fabric-wide view, never tenants or exports."""
    fabric_inventory(partitions[0].fabric)  # the record its engine publishes: the page places GUIDs on it
    for who in (None, user_in("viewer", "nobody-page")):
        if who is not None:
            client.force_login(who)
        body = client.get("/tenancy/fabrics/tiny/").content.decode()
        assert "Acme" not in body and "Globex" not in body and "gpu0001" not in body and "0x0002" not in body
        assert "partitions.conf" not in body
        download = client.get("/tenancy/fabrics/tiny/opensm/partitions.conf")
        assert download.status_code in (302, 403) and b"gpu" not in download.content


def test_policy_page_restricted_to_tenant(client, partitions, tenants):
    fabric_inventory(partitions[0].fabric)  # the record its engine publishes: the page places GUIDs on it
    client.force_login(user_in("viewer", "acme-v", tenants[0]))
    body = client.get("/tenancy/fabrics/tiny/").content.decode()
    assert "gpu0001" in body and "gpu0005" not in body and "Globex" not in body
    assert client.get("/tenancy/fabrics/tiny/opensm/partitions.conf").status_code == 403


def test_page_import_is_post_only_and_transactional(client, partitions):
    client.force_login(user_in("policy admin", "pa3"))
    assert b"Import partitions.conf" in client.get("/tenancy/fabrics/tiny/").content
    assert client.get("/tenancy/fabrics/tiny/import/").status_code == 405
    bad = f"ok=0x0050 : {host_guid(0)} ;\nbad=0x0051 : 0x77 ;\n"
    r = client.post("/tenancy/fabrics/tiny/import/", {"text": bad}, follow=True)
    assert b"partitions.conf:2" in r.content and not Partition.objects.filter(pkey=0x50).exists()
    r = client.post("/tenancy/fabrics/tiny/import/", {"text": f"ok=0x0050 : {host_guid(0)}=full ;"}, follow=True)
    assert Partition.objects.filter(pkey=0x50).exists() and b"1 created" in r.content
