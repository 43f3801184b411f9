"""The "Tenants and policy" page: summary, member search, changes previewed with their effect, undo, import diff
(issue 18)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import numpy as np
import pytest

from fabric_engine.scenario import build_fabric
from ibweb.runtime import record
from ibweb.tenancy.effect import change_effect
from ibweb.tenancy.engine_policy import policy_data
from ibweb.tenancy.inventory import fabric_inventory
from ibweb.tenancy.models import AuditEntry, Partition, PartitionMember
from tests.support.tenancy_fixtures import SPEC, fabric, host_guid, partitions, tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db
TINY = build_fabric(SPEC["topology"])


def page(client, **params):
    answer = client.get("/tenancy/fabrics/tiny/", params)
    assert answer.status_code == 200
    return answer


def test_summary_comes_first_with_tenants_partitions_and_counts(client, partitions):
    fabric_inventory(partitions[0].fabric)  # the record its engine publishes (a read never builds it)
    client.force_login(user_in("operator", "op"))
    ctx = page(client).context
    rows = {t["tenant"].slug: t for t in ctx["tenants"]}
    assert set(rows) == {"acme", "globex"}
    acme = rows["acme"]["partitions"][0]
    assert (acme["ports"], acme["hosts"], acme["sl"]) == (2, 2, None)
    assert rows["globex"]["partitions"][0]["sl"] == 3
    body = page(client).content.decode()
    assert body.index("Every tenant on Tiny") < body.index("Members of")


def test_a_get_of_a_fabric_without_a_record_answers_and_publishes_none(client, partitions):
    fabric = partitions[0].fabric
    row = record.row_identity(fabric)
    client.force_login(user_in("operator", "op"))
    ctx = page(client).context
    assert record.head(fabric.pk, row) is None  # issue 24: reads only read
    rows = {t["tenant"].slug: t for t in ctx["tenants"]}
    assert rows["acme"]["partitions"][0]["ports"] == 2 and rows["acme"]["partitions"][0]["hosts"] == 0
    assert {m["guid"] for m in ctx["members"]} == {host_guid(0), host_guid(1)}
    assert client.get("/tenancy/").status_code == 200 and record.head(fabric.pk, row) is None


def test_member_list_is_searchable_and_paginated(client, fabric, partitions):
    a, _ = partitions
    fabric.spec = {"topology": {"generator": "fat_tree", "hosts": 64, "radix": 16, "name": "tiny"}}
    fabric.save()
    fabric_inventory(fabric)
    PartitionMember.objects.bulk_create([PartitionMember(partition=a, guid=host_guid(i)) for i in range(2, 64)])
    client.force_login(user_in("operator", "op"))
    first = page(client, partition="0x0001").context["members"]
    assert first.paginator.count == 64 and len(first.object_list) == 50 and first.paginator.num_pages == 2
    second = page(client, partition="0x0001", page=2).context["members"]
    assert [m["node"] for m in second.object_list][-1] == "gpu0064"
    hit = page(client, partition="0x0001", q="GPU0012").context["members"]
    assert [m["node"] for m in hit] == ["gpu0012"]
    by_leaf = page(client, partition="0x0001", q="leaf02").context["members"]
    assert by_leaf.paginator.count == 8 and all(m["leaf"] == "leaf02" for m in by_leaf)
    by_guid = page(client, partition="0x0001", q=host_guid(40)[-6:]).context["members"]
    assert [m["guid"] for m in by_guid] == [host_guid(40)]


def test_tenant_user_sees_only_their_partition_and_no_change_form(client, partitions, tenants):
    client.force_login(user_in(None, "ann", tenants[0]))
    answer = page(client, partition="0x0002")
    ctx = answer.context
    assert [t["tenant"].slug for t in ctx["tenants"]] == ["acme"] and ctx["chosen"].name == "acme"
    body = answer.content.decode()
    assert "Globex" not in body and "gpu0005" not in body and "Change members" not in body
    assert client.post("/tenancy/fabrics/tiny/members/", {"partition": "0x0001", "action": "add",
                                                          "guids": host_guid(3)}).status_code == 403


def change(client, step="preview", **data):
    return client.post("/tenancy/fabrics/tiny/members/", {"step": step, "partition": "0x0001", "action": "add",
                                                          **data})


def test_removing_members_previews_who_loses_whom_then_applies_and_undoes(client, partitions):
    a, g = partitions
    client.force_login(user_in("policy admin", "pa"))
    answer = change(client, action="remove", host_pattern="gpu0001")
    effect = answer.context["effect"]
    assert effect is not None and not effect.harmless
    assert (effect.hosts_losing, effect.pairs_lost) == (1, 1)  # gpu0001 no longer reaches gpu0002 (acme)
    assert effect.hosts[0]["host"] == "gpu0001" and effect.hosts[0]["lost_examples"] == ["gpu0002"]
    assert a.members.count() == 2, "a preview changes nothing"
    body = answer.content.decode()
    assert "1 host lose reachability" in body and "Apply anyway" in body
    token = answer.context["form"].data["confirm"]
    applied = change(client, step="apply", action="remove", host_pattern="gpu0001", confirm=token)
    assert applied.status_code == 302 and applied.url.endswith("?partition=0x0001#members")
    assert list(a.members.values_list("guid", flat=True)) == [host_guid(1)]
    entry = AuditEntry.objects.filter(object_id=str(a.pk), via="page").get()
    assert entry.before["members"] == {host_guid(0): "full", host_guid(1): "limited"}
    # undo from the audit log: preview the restore, then apply it
    undo = client.post("/tenancy/fabrics/tiny/members/", {"step": "preview", "partition": "0x0001",
                                                          "action": "add", "restore": entry.pk})  # as the Undo button
    assert undo.context["effect"].pairs_gained == 1 and undo.context["effect"].harmless
    token = undo.context["form"].data["confirm"]
    assert change(client, step="apply", restore=entry.pk, confirm=token).status_code == 302
    assert dict(a.members.values_list("guid", "membership")) == {host_guid(0): "full", host_guid(1): "limited"}


def test_apply_without_the_previewed_token_previews_again(client, partitions):
    a, _ = partitions
    client.force_login(user_in("policy admin", "pa"))
    answer = change(client, step="apply", guids=host_guid(3), confirm="stale")
    assert answer.status_code == 200 and answer.context["effect"] is not None
    assert not a.members.filter(guid=host_guid(3)).exists()
    assert "changed since the preview" in answer.content.decode()


def test_adding_a_leaf_or_a_job_and_errors_at_the_field(client, partitions):
    a, _ = partitions
    client.force_login(user_in("policy admin", "pa"))
    leaf = change(client, leaf="leaf02")
    assert leaf.context["effect"].changed_hosts == 2 and leaf.context["effect"].pairs_gained > 0
    assert "pairs" not in leaf.context["form"].errors
    bad = change(client, guids="0xzz")
    assert "malformed GUID" in bad.context["form"].errors["guids"][0]
    unknown = change(client, guids="0x42")
    assert "not a port of fabric tiny" in unknown.context["form"].errors["guids"][0]
    none = change(client, host_pattern="nothing*")
    assert "no host of fabric tiny matches" in none.context["form"].errors["host_pattern"][0]
    again = change(client, guids=host_guid(0))
    assert "already full members" in again.context["form"].non_field_errors()[0]


def test_effect_names_the_jobs_a_change_cuts():
    h = TINY.hosts
    g = [f"0x{int(TINY.port_guid[TINY.port_offset[n]]):016x}" for n in h]
    before = {"partitions": [{"name": "a", "pkey": 1, "members": [[x, "full"] for x in g[:4]]},
                             {"name": "b", "pkey": 2, "members": [[x, "full"] for x in g[4:]]}]}
    after = {"partitions": [{"name": "a", "pkey": 1, "members": [[x, "full"] for x in g[:3]]}, before["partitions"][1]]}
    jobs = [{"id": "train", "tenant": "a", "hosts": h[:4]}, {"id": "other", "tenant": "b", "hosts": h[4:]}]
    e = change_effect(TINY, before, after, h[3:4], jobs)
    assert (e.changed_hosts, e.hosts_losing, e.pairs_lost, e.pairs_gained) == (1, 1, 3, 0)
    assert e.jobs == [{"id": "train", "tenant": "a", "pairs_cut": 3, "hosts": 4, "hosts_cut": 4}]
    # limited members: two limited hosts cannot talk, a full and a limited one can
    limited = {"partitions": [{"name": "a", "pkey": 1, "members": [[g[0], "full"], [g[1], "limited"],
                                                                   [g[2], "limited"]]}]}
    demoted = {"partitions": [{"name": "a", "pkey": 1, "members": [[g[0], "limited"], [g[1], "limited"],
                                                                   [g[2], "limited"]]}]}
    e = change_effect(TINY, limited, demoted, h[:1])
    assert (e.pairs_lost, e.hosts_losing) == (2, 1)
    assert np.array_equal(np.sort([x["node"] for x in e.hosts]), h[:1])


def test_effect_uses_the_fabric_policy_data(fabric, partitions):
    data = policy_data(fabric)
    assert [p["name"] for p in data["partitions"]][:3] == ["Default", "acme", "globex"]
    e = change_effect(TINY, data, data, TINY.hosts[:2])
    assert e.harmless and e.pairs_gained == 0 and e.hosts == []


def test_import_shows_a_diff_before_importing(client, partitions):
    a, _ = partitions
    client.force_login(user_in("policy admin", "pa"))
    text = f"acme=0x0001 : {host_guid(0)}=full, {host_guid(2)}=full ;\nnew=0x0060 : {host_guid(5)}=full ;\n"
    answer = client.post("/tenancy/fabrics/tiny/import/", {"text": text, "step": "preview"})
    diff = answer.context["import_preview"]["diff"]
    rows = {r["name"]: r for r in diff["rows"]}
    assert rows["new"]["created"] and rows["new"]["added"] == [host_guid(5)]
    assert rows["acme"]["added"] == [host_guid(2)] and rows["acme"]["removed"] == [host_guid(1)]
    assert diff["unchanged"] == 1  # globex
    assert not Partition.objects.filter(pkey=0x60).exists() and a.members.count() == 2
    assert not AuditEntry.objects.filter(via="import").exists(), "the dry run leaves no audit entry"
    assert "What the import changes" in answer.content.decode()
    done = client.post("/tenancy/fabrics/tiny/import/", {"text": text, "step": "import"}, follow=True)
    assert b"1 created, 1 updated" in done.content and Partition.objects.filter(pkey=0x60).exists()
    bad = client.post("/tenancy/fabrics/tiny/import/", {"text": "bad=0x0051 : 0x77 ;", "step": "preview"},
                      follow=True)
    assert b"Nothing to import" in bad.content and b"partitions.conf:1" in bad.content


@pytest.mark.django_db(transaction=True)
def test_jobs_come_from_the_runtime_record_and_a_job_change_names_the_job_it_cuts(client, tenants):
    from ibweb.fabrics.models import Fabric
    from ibweb.tenancy import services
    from tests.support.engine_fixtures import published

    acme, _ = tenants
    row = Fabric.objects.create(name="Jobs", slug="jobs", spec={**SPEC, "jobs": [
        {"name": "train", "tenant": "acme", "hosts": 4, "placement": "packed", "buffer_gb": 1, "compute_s": 0.1}]})
    part = Partition.objects.create(fabric=row, tenant=acme, name="acme", pkey=0x0011)
    services.add_members(part, [(host_guid(i), "full") for i in range(4)])
    from django.contrib.auth.models import Permission

    admin = user_in(None, "pa")  # a transactional test may run after a flush that took the role groups with it
    admin.user_permissions.add(*Permission.objects.filter(codename__in=[
        "view_all_tenants", "add_partitionmember", "change_partitionmember", "delete_partitionmember"]))
    client.force_login(admin)
    assert page_of(client, "jobs").context["tenants"][0]["jobs"] == 0, "no record yet: no job"
    published(row)
    ctx = page_of(client, "jobs").context
    assert ctx["tenants"][0]["jobs"] == 1
    assert ("train", "train (acme)") in ctx["form"].fields["job"].choices
    answer = client.post("/tenancy/fabrics/jobs/members/", {"step": "preview", "partition": "0x0011",
                                                            "action": "remove", "host_pattern": "gpu0004"})
    assert [j["id"] for j in answer.context["effect"].jobs] == ["train"]
    assert "train</strong> (acme): 4 of 4 hosts lose peers" in answer.content.decode()


def page_of(client, slug: str):
    return client.get(f"/tenancy/fabrics/{slug}/")
