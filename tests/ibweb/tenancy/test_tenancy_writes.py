"""Writes of tenancy data that work and do not race (issue 14).

REST updates of tenants and partitions; member changes through every path (the UFM-style
API, the admin inline and bulk add, the import) reach the running engine at the next tick
and leave an audit entry; two concurrent writers on PostgreSQL both keep their change;
a constraint a concurrent writer won, or a row still in use, is a 409.
"""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import asyncio
import threading
import time

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from rest_framework.test import APIClient

from ibweb.live.engine.runner import FabricRunner
from ibweb.tenancy import services
from ibweb.tenancy.engine_policy import policy_version
from ibweb.tenancy.models import AuditEntry, Partition, PartitionMember
from tests.support.access_fixtures import build, role_permissions
from tests.support.engine_fixtures import settled_tick
from tests.support.tenancy_fixtures import fabric, host_guid, partitions, tenants  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def admin_api() -> APIClient:
    """A policy admin's client (the role's permissions granted directly: transactional tests flush the groups)."""
    user = User.objects.filter(username="pa").first()
    if user is None:
        user = User.objects.create_user("pa", password="pw-pa")
        user.user_permissions.add(*role_permissions("policy admin"))
    client = APIClient()
    client.force_authenticate(user)
    return client


# ------------------------------------------------------------------ REST updates
def test_patch_and_put_of_tenants_and_partitions(partitions):
    api = admin_api()
    r = api.patch("/api/tenancy/tenants/acme/", {"contacts": "ops@acme.example"}, format="json")
    assert r.status_code == 200, r.json()
    assert r.json()["contacts"] == "ops@acme.example"
    a = partitions[0]
    r = api.patch(f"/api/tenancy/partitions/{a.pk}/", {"sl": 5, "description": "training"}, format="json")
    assert r.status_code == 200, r.json()
    a.refresh_from_db()
    assert (a.sl, a.description, a.name) == (5, "training", "acme")
    r = api.put(f"/api/tenancy/partitions/{a.pk}/", {"fabric": "tiny", "name": "acme-2", "pkey": "0x0001",
                                                     "tenant": "acme"}, format="json")
    assert r.status_code == 200 and r.json()["name"] == "acme-2"
    # a real clash is still named at its field
    r = api.patch(f"/api/tenancy/partitions/{a.pk}/", {"pkey": "0x0002"}, format="json")
    assert r.status_code == 400 and "pkey" in r.json()
    r = api.patch("/api/tenancy/tenants/acme/", {"slug": "globex"}, format="json")
    assert r.status_code == 400 and "slug" in r.json()
    updates = AuditEntry.objects.filter(action="update", via="api")
    assert updates.count() == 3 and updates.filter(object_type="tenancy.Tenant").exists()


def test_deleting_a_row_still_in_use_is_a_409(partitions):
    r = admin_api().delete("/api/tenancy/tenants/acme/")
    assert r.status_code == 409 and "acme" in r.json()["detail"]


def test_the_ufm_api_answers_with_the_members_after_the_change(partitions):
    api = admin_api()
    r = api.post("/api/tenancy/fabrics/tiny/pkeys/0x0001/guids/", {"guids": [host_guid(2)], "membership": "full"},
                 format="json")
    assert r.status_code == 200
    assert [g["guid"] for g in r.json()["guids"]] == [host_guid(0), host_guid(1), host_guid(2)]
    r = api.post("/api/tenancy/fabrics/tiny/pkeys/0x0001/guids/remove/", {"guids": [host_guid(0)]}, format="json")
    assert [g["guid"] for g in r.json()["guids"]] == [host_guid(1), host_guid(2)]
    r = api.put("/api/tenancy/fabrics/tiny/pkeys/0x0001/qos/", {"service_level": 4}, format="json")
    assert r.json()["service_level"] == 4


# ------------------------------------------------------------------ every path reaches the engine
def _isolated(frame: dict) -> set[str]:
    return {a["job"] for a in frame["alerts"] if a.get("kind") == "isolation"}


async def test_member_changes_through_every_path_reach_the_engine_at_the_next_tick_and_are_audited(monkeypatch):
    """gpu0001 leaves and rejoins acme's partition through each path; acme-train is isolated, then not."""
    shared = await asyncio.to_thread(build)
    partition = shared.partitions["acme"]
    guid = await asyncio.to_thread(lambda: partition.members.order_by("guid").first().guid)
    sent: list[dict] = []

    async def capture(fabric_id, seq, header, links):
        sent.append(header)

    monkeypatch.setattr("ibweb.live.feed.publisher.store_newest", capture)
    engine = FabricRunner(shared.fabric)
    await engine.start()
    await settled_tick(engine)
    assert not _isolated(sent[-1])
    root = shared.users["superuser"]
    pkey = f"/api/tenancy/fabrics/shared/pkeys/0x{partition.pkey:04x}/"

    def api(method: str, url: str, body) -> int:
        client = APIClient()
        client.force_authenticate(root)
        return getattr(client, method)(url, body, format="json").status_code

    def admin_inline_delete() -> int:
        from django.test import Client

        client = Client()
        client.force_login(root)
        members = list(partition.members.order_by("guid"))
        form = {"fabric": partition.fabric_id, "tenant": partition.tenant_id, "name": partition.name,
                "pkey": f"0x{partition.pkey:04x}", "ipoib": "on", "default_membership": "full",
                "members-TOTAL_FORMS": len(members), "members-INITIAL_FORMS": len(members)}
        for i, m in enumerate(members):
            form |= {f"members-{i}-id": m.pk, f"members-{i}-partition": partition.pk, f"members-{i}-guid": m.guid,
                     f"members-{i}-membership": m.membership, **({f"members-{i}-DELETE": "on"} if m.guid == guid
                                                                  else {})}
        return client.post(f"/admin/tenancy/partition/{partition.pk}/change/", form).status_code

    def admin_bulk_add() -> int:
        from django.test import Client

        client = Client()
        client.force_login(root)
        return client.post(f"/admin/tenancy/partition/{partition.pk}/bulk-members/",
                           {"guids": guid, "membership": "full"}).status_code

    def others() -> list[str]:
        return list(partition.members.exclude(guid=guid).order_by("guid").values_list("guid", flat=True))

    def import_back() -> int:
        text = f"{partition.name}=0x{partition.pkey:04x} : {guid}=full ;"
        client = APIClient()
        client.force_authenticate(root)
        return client.post("/api/tenancy/fabrics/shared/opensm/partitions.conf?merge=1", {"text": text},
                           format="json").status_code

    steps = [  # (path, via, change, whether acme-train is isolated afterwards)
        ("UFM remove", "api", lambda: api("post", pkey + "guids/remove/", {"guids": [guid]}), True),
        ("UFM add", "api", lambda: api("post", pkey + "guids/", {"guids": [guid], "membership": "full"}), False),
        ("UFM set", "api", lambda: api("put", pkey + "guids/", {"guids": others(), "membership": "full"}), True),
        ("admin bulk add", "admin", admin_bulk_add, False),
        ("admin inline delete", "admin", admin_inline_delete, True),
        ("import", "import", import_back, False),
        ("UFM set again", "api", lambda: api("put", pkey + "guids/", {"guids": others(), "membership": "full"}),
         True),
        ("UFM create with GUIDs", "api",
         lambda: api("post", "/api/tenancy/fabrics/shared/pkeys/", {"pkey": f"0x{partition.pkey:04x}",
                                                                    "guids": [guid], "membership": "full"}), False),
    ]
    for path, via, change, isolated in steps:
        audits = await asyncio.to_thread(AuditEntry.objects.filter(via=via).count)
        version = await asyncio.to_thread(policy_version, shared.fabric.pk)
        status = await asyncio.to_thread(change)
        assert status in (200, 201, 302), (path, status)
        assert await asyncio.to_thread(policy_version, shared.fabric.pk) > version, path
        await settled_tick(engine)
        assert ("acme-train" in _isolated(sent[-1])) == isolated, path
        assert await asyncio.to_thread(AuditEntry.objects.filter(via=via).count) == audits + 1, path


async def test_member_changes_through_the_policy_page_its_import_and_the_admin_inline_add_reach_the_engine(
        monkeypatch):
    """The paths the test above does not take: the policy page's previewed change (remove, add), its import
    (replace, merge) and an admin inline row added; each reaches the engine at the next tick, audited once."""
    from django.test import Client

    shared = await asyncio.to_thread(build)
    partition = shared.partitions["acme"]
    guid = await asyncio.to_thread(lambda: partition.members.order_by("guid").first().guid)
    sent: list[dict] = []

    async def capture(fabric_id, seq, header, links):
        sent.append(header)

    def signed_in() -> Client:
        c = Client()
        c.force_login(shared.users["superuser"])
        return c

    web = await asyncio.to_thread(signed_in)  # its session written once, before the engine runs
    monkeypatch.setattr("ibweb.live.feed.publisher.store_newest", capture)
    engine = FabricRunner(shared.fabric)
    await engine.start()
    await settled_tick(engine)
    assert not _isolated(sent[-1])
    pkey = f"0x{partition.pkey:04x}"

    def client() -> Client:
        return web

    def page(action: str) -> int:
        c = client()
        form = {"partition": pkey, "action": action, "guids": guid}
        preview = c.post("/tenancy/fabrics/shared/members/", {**form, "step": "preview"})
        token = preview.context["form"].data["confirm"]
        return c.post("/tenancy/fabrics/shared/members/", {**form, "step": "apply", "confirm": token}).status_code

    def others() -> list[str]:
        return list(partition.members.exclude(guid=guid).order_by("guid").values_list("guid", flat=True))

    def page_import(guids: list[str], merge: bool) -> int:
        text = f"{partition.name}={pkey} : " + ", ".join(f"{g}=full" for g in guids) + " ;"
        return client().post("/tenancy/fabrics/shared/import/", {"text": text, **({"merge": "on"} if merge else {})}
                             ).status_code

    def ufm_remove() -> int:
        api = APIClient()
        api.force_authenticate(shared.users["superuser"])
        return api.post(f"/api/tenancy/fabrics/shared/pkeys/{pkey}/guids/remove/", {"guids": [guid]},
                        format="json").status_code

    def admin_inline_add() -> int:
        members = list(partition.members.order_by("guid"))
        form = {"fabric": partition.fabric_id, "tenant": partition.tenant_id, "name": partition.name, "pkey": pkey,
                "ipoib": "on", "default_membership": "full", "members-TOTAL_FORMS": len(members) + 1,
                "members-INITIAL_FORMS": len(members)}
        for i, m in enumerate(members):
            form |= {f"members-{i}-id": m.pk, f"members-{i}-partition": partition.pk, f"members-{i}-guid": m.guid,
                     f"members-{i}-membership": m.membership}
        n = len(members)
        form |= {f"members-{n}-partition": partition.pk, f"members-{n}-guid": guid, f"members-{n}-membership": "full"}
        return client().post(f"/admin/tenancy/partition/{partition.pk}/change/", form).status_code

    steps = [  # (path, via, change, whether acme-train is isolated afterwards)
        ("page remove", "page", lambda: page("remove"), True),
        ("page add", "page", lambda: page("add"), False),
        ("page import, replacing", "import", lambda: page_import(others(), merge=False), True),
        ("page import, merging", "import", lambda: page_import([guid], merge=True), False),
        ("UFM remove", "api", ufm_remove, True),
        ("admin inline add", "admin", admin_inline_add, False),
    ]
    for path, via, change, isolated in steps:
        audits = await asyncio.to_thread(AuditEntry.objects.filter(via=via).count)
        version = await asyncio.to_thread(policy_version, shared.fabric.pk)
        status = await asyncio.to_thread(change)
        assert status in (200, 302), (path, status)
        assert await asyncio.to_thread(policy_version, shared.fabric.pk) > version, path
        await settled_tick(engine)
        assert ("acme-train" in _isolated(sent[-1])) == isolated, path
        assert await asyncio.to_thread(AuditEntry.objects.filter(via=via).count) == audits + 1, path


def test_constraint_violations_through_every_path_are_400_or_409_or_a_form_with_errors():
    """A taken P_Key or name, a GUID twice, a row still in use: through REST, the UFM API, the import (API and page),
    the admin and the policy page; nothing is a 500 and nothing changes."""
    from django.test import Client

    from ibweb.tenancy.models import Tenant

    shared = build()
    root = shared.users["superuser"]
    api = APIClient()
    api.force_authenticate(root)
    web = Client()
    web.force_login(root)
    a, g = shared.partitions["acme"], shared.partitions["globex"]
    guid, a_pkey, g_pkey = a.members.order_by("guid").first().guid, f"0x{a.pkey:04x}", f"0x{g.pkey:04x}"
    before = (list(Partition.objects.order_by("pk").values_list()), list(PartitionMember.objects.order_by("pk")
                                                                         .values_list()),
              list(Tenant.objects.order_by("pk").values_list("slug", "name")))
    rest = [
        (api.post, "/api/tenancy/partitions/", {"fabric": "shared", "name": "x", "pkey": a_pkey}, 400, "pkey"),
        (api.post, "/api/tenancy/partitions/", {"fabric": "shared", "name": a.name, "pkey": "0x0777"}, 400, "name"),
        (api.patch, f"/api/tenancy/partitions/{a.pk}/", {"pkey": g_pkey}, 400, "pkey"),
        (api.patch, f"/api/tenancy/partitions/{a.pk}/", {"name": g.name}, 400, "name"),
        (api.patch, "/api/tenancy/tenants/acme/", {"slug": "globex"}, 400, "slug"),
        (api.post, "/api/tenancy/tenants/", {"slug": "globex", "name": "G2"}, 400, "slug"),
        (api.post, f"/api/tenancy/fabrics/shared/pkeys/{a_pkey}/guids/", {"guids": [guid, guid]}, 400, "guids"),
        (api.post, "/api/tenancy/fabrics/shared/pkeys/", {"pkey": "0x7fff", "guids": [guid]}, 400, "pkey"),
        (api.post, "/api/tenancy/fabrics/shared/opensm/partitions.conf",
         {"text": f"{g.name}={a_pkey} : {guid}=full ;"}, 400, "text"),
        (api.delete, "/api/tenancy/tenants/globex/", None, 409, "detail"),
    ]
    for method, url, body, status, field in rest:
        r = method(url, body, format="json")
        assert (r.status_code, field in r.json()) == (status, True), (url, body, r.content)
    members = list(a.members.order_by("guid"))
    form = {"fabric": a.fabric_id, "tenant": a.tenant_id, "name": a.name, "pkey": a_pkey, "ipoib": "on",
            "default_membership": "full", "members-TOTAL_FORMS": len(members) + 1,
            "members-INITIAL_FORMS": len(members)}
    for i, m in enumerate(members):
        form |= {f"members-{i}-id": m.pk, f"members-{i}-partition": a.pk, f"members-{i}-guid": m.guid,
                 f"members-{i}-membership": m.membership}
    form |= {f"members-{len(members)}-partition": a.pk, f"members-{len(members)}-guid": guid,
             f"members-{len(members)}-membership": "full"}
    pages = [  # a form shown again with its errors (200)
        (f"/admin/tenancy/partition/{a.pk}/change/", form),
        ("/admin/tenancy/partition/add/", {"fabric": a.fabric_id, "name": "zz", "pkey": a_pkey,
                                           "default_membership": "full", "members-TOTAL_FORMS": 0,
                                           "members-INITIAL_FORMS": 0}),
        (f"/admin/tenancy/partition/{a.pk}/bulk-members/", {"guids": "zz", "membership": "full"}),
        ("/tenancy/fabrics/shared/members/", {"step": "apply", "partition": a_pkey, "action": "add", "guids": "zz"}),
    ]
    for url, data in pages:
        r = web.post(url, data)
        assert r.status_code == 200 and b"rror" in r.content, (url, r.status_code)
    r = web.post("/tenancy/fabrics/shared/import/", {"text": f"{g.name}={a_pkey} : {guid}=full ;"}, follow=True)
    assert r.status_code == 200 and "Nothing imported" in r.content.decode()
    after = (list(Partition.objects.order_by("pk").values_list()), list(PartitionMember.objects.order_by("pk")
                                                                        .values_list()),
             list(Tenant.objects.order_by("pk").values_list("slug", "name")))
    assert after == before


# ------------------------------------------------------------------ concurrent writers (PostgreSQL)
def _postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("two concurrent writers need PostgreSQL's row locks: this runs in make test-services")


def _in_thread(fn) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            out["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def _while_locked(partition: Partition, first, second) -> dict:
    """Run ``first`` in a transaction holding the partition's row lock; meanwhile start ``second`` in another thread
    (its own connection), give it time to read, then commit ``first``. Returns ``second``'s outcome."""
    with transaction.atomic():
        row = Partition.objects.select_for_update().get(pk=partition.pk)
        first(row)
        thread, out = _in_thread(second)
        time.sleep(1.0)  # the second writer has read (or is waiting for the lock)
    thread.join(30)
    assert not thread.is_alive()
    return out


def test_two_patches_of_one_partition_keep_both_fields(partitions):
    _postgresql()
    a = partitions[0]

    def first(row):
        row.mtu = 4
        row.save(update_fields=["mtu"])

    out = _while_locked(a, first, lambda: admin_api().patch(f"/api/tenancy/partitions/{a.pk}/", {"sl": 3},
                                                            format="json").status_code)
    assert out.get("value") == 200, out
    a.refresh_from_db()
    assert (a.mtu, a.sl) == (4, 3), "the second PATCH overwrote the first one's field"


def test_two_writers_adding_the_same_guid_neither_fails(partitions):
    _postgresql()
    a = partitions[0]
    guid = host_guid(5)

    def first(row):
        PartitionMember.objects.create(partition=row, guid=guid, membership="full")

    out = _while_locked(a, first, lambda: admin_api().post("/api/tenancy/fabrics/tiny/pkeys/0x0001/guids/",
                                                           {"guids": [guid, host_guid(6)], "membership": "full"},
                                                           format="json"))
    assert "error" not in out, out
    r = out["value"]
    assert r.status_code == 200, r.content
    assert {g["guid"] for g in r.json()["guids"]} >= {guid, host_guid(6)}  # both writers' members
    assert PartitionMember.objects.filter(partition=a, guid=guid).count() == 1


def test_a_pkey_taken_meanwhile_is_a_409(partitions):
    _postgresql()
    a = partitions[0]

    def first(row):
        Partition.objects.create(fabric=row.fabric, name="first", pkey=0x0030)

    out = _while_locked(a, first, lambda: admin_api().post("/api/tenancy/partitions/", {
        "fabric": "tiny", "name": "second", "pkey": "0x0030"}, format="json"))
    r = out["value"]
    assert r.status_code in (400, 409), r.content  # 409 when its check ran before the first one committed
    assert Partition.objects.filter(pkey=0x0030).count() == 1
    services.add_members(a, [(host_guid(7), "full")])  # the partition is still writable
