"""Clusters of fabrics (issue 25): made all or nothing, their planes compared, cut to what the viewer may see."""

from __future__ import annotations

import asyncio
import copy
import io
import json
import time

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from fabric_engine.scenario import build_fabric
from ibweb.fabrics.clusters import create_cluster
from ibweb.fabrics.models import Cluster, Fabric
from ibweb.live.feed.frame_store import store_newest
from ibweb.runtime import record
from ibweb.tenancy.models import Tenant
from tests.support.access_fixtures import public_read, role_permissions
from tests.support.cluster_spec import PLANE, SPEC

pytestmark = pytest.mark.django_db

SLUGS = ["pod-plane1", "pod-plane2", "pod-storage"]


def counts() -> tuple[int, int]:
    return Cluster.objects.count(), Fabric.objects.count()


def operator() -> User:
    user = User.objects.create_user("operator", password="pw-operator")
    user.user_permissions.add(*role_permissions("operator"))
    return user


def tenant_user(slug: str) -> User:
    """A user who sees only tenant ``slug`` (acme and globex exist; the user belongs to ``slug``)."""
    for s in ("acme", "globex"):
        Tenant.objects.get_or_create(slug=s, defaults={"name": s.title()})
    user = User.objects.create_user(f"{slug}-user", password="pw-tenant")
    Tenant.objects.get(slug=slug).users.add(user)
    return user


def get(user, url: str):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client.get(url)


def frame(row: Fabric, gbps: float, slowdowns: dict[str, float]) -> None:
    """Store a plane's newest frame header as its runner does: throughput and each job's slowdown."""
    tenants = {j["name"]: j["tenant"] for j in SPEC["jobs"]}
    header = {"seq": 5, "t": time.time(), "tick_s": 1.0,
              "totals": {"hosts": 16, "throughput_gbps": gbps, "congested_links": 0, "hottest": {"util": 0.4}},
              "jobs": [{"id": j, "tenant": tenants[j], "active": True, "slowdown": s, "comm_s": 0.5 * s,
                        "achieved_gbps": gbps / 2} for j, s in slowdowns.items()]}
    asyncio.run(store_newest(row.pk, header["seq"], header, b""))


def publish(row: Fabric, topology: dict) -> None:
    """Publish the runtime record of ``row`` as its engine would, with the fabric ``topology`` describes."""
    record.publish(row.pk, record.row_identity(row), build_fabric(topology), None)


@pytest.fixture
def pod() -> Cluster:
    """The cluster of :data:`SPEC`, running: frames of both planes (llm twice as slow on plane 2) and records
    (plane 2 lacks dgx0013-0016, so those hosts are on some plane but not every one)."""
    cluster = create_cluster(copy.deepcopy(SPEC), "pod", "Pod")
    rows = {f.slug: f for f in cluster.fabrics.all()}
    frame(rows["pod-plane1"], 300.0, {"llm": 1.0, "moe": 1.0})
    frame(rows["pod-plane2"], 100.0, {"llm": 2.0, "moe": 1.0})
    for slug, part in zip(SLUGS, (rows[s].spec["topology"] for s in SLUGS), strict=True):
        publish(rows[slug], {**part, "hosts": 12} if slug == "pod-plane2" else part)
    return cluster


# ------------------------------------------------------------------ made all or nothing
def test_create_cluster_makes_the_cluster_and_its_fabrics():
    cluster = create_cluster(copy.deepcopy(SPEC), "pod", "Pod", description="two rails")
    rows = list(Fabric.objects.filter(cluster=cluster).order_by("slug"))
    assert (cluster.slug, cluster.name, cluster.description) == ("pod", "Pod", "two rails")
    assert [(f.slug, f.name, f.cluster_role, f.rail, f.mode) for f in rows] == [
        ("pod-plane1", "Pod: plane 1", "compute", 1, "emulated"),
        ("pod-plane2", "Pod: plane 2", "compute", 2, "emulated"),
        ("pod-storage", "Pod: storage", "storage", None, "emulated")]
    nodelists = [[j["nodelist"] for j in f.spec["jobs"]] for f in rows]
    assert nodelists[0] == nodelists[1] == nodelists[2] and nodelists[0][0] == "dgx[0001-0006]"
    assert [j["buffer_gb"] for j in rows[0].spec["jobs"]] == [4.0, 1.0]
    assert [j["buffer_gb"] for j in rows[2].spec["jobs"]] == [0.0, 0.0]


@pytest.mark.parametrize("change", [{"planes": 0}, {"plane": {**PLANE, "storage_servers": 2}},
                                    {"jobs": [{"name": "big", "tenant": "acme", "hosts": 99}]}])
def test_a_bad_spec_creates_nothing(change):
    with pytest.raises(ValidationError) as err:
        create_cluster({**copy.deepcopy(SPEC), **change}, "pod", "Pod")
    assert "spec" in err.value.message_dict
    assert counts() == (0, 0)


def test_a_taken_slug_creates_nothing():
    create_cluster(copy.deepcopy(SPEC), "pod", "Pod")
    before = counts()
    assert before == (1, 3)
    with pytest.raises(ValidationError) as err:
        create_cluster(copy.deepcopy(SPEC), "pod", "Pod again")
    assert "slug" in err.value.message_dict and counts() == before
    Fabric.objects.create(name="Taken", slug="pod2-storage", spec={"topology": PLANE})
    with pytest.raises(ValidationError) as err:
        create_cluster(copy.deepcopy(SPEC), "pod2", "Pod 2")  # the planes were saved before the storage fabric
    assert "slug" in err.value.message_dict
    assert counts() == (before[0], before[1] + 1) and not Cluster.objects.filter(slug="pod2").exists()
    assert not Fabric.objects.filter(slug__in=["pod2-plane1", "pod2-plane2"]).exists()


def test_the_create_cluster_command(tmp_path):
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(SPEC))
    out = io.StringIO()
    call_command("create_cluster", str(path), "--slug", "pod", "--name", "Pod", stdout=out)
    assert "created cluster 'pod': pod-plane1, pod-plane2, pod-storage" in out.getvalue()
    assert json.loads(out.getvalue().strip().splitlines()[-1]) == {"cluster": "pod"}
    assert Cluster.objects.get(slug="pod").fabrics.count() == 3


@pytest.mark.parametrize("text", ['{"planes": 2, "plane": ', "not json", json.dumps({**SPEC, "planes": 40})])
def test_the_create_cluster_command_names_a_broken_file(tmp_path, text):
    path = tmp_path / "broken-pod.json"
    path.write_text(text)
    with pytest.raises(CommandError) as err:
        call_command("create_cluster", str(path), "--slug", "pod", stdout=io.StringIO())
    assert str(path) in str(err.value)
    assert counts() == (0, 0)


def test_the_create_cluster_command_names_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match="missing.json"):
        call_command("create_cluster", str(tmp_path / "missing.json"), "--slug", "pod", stdout=io.StringIO())


# ------------------------------------------------------------------ the cluster's data
def test_operator_sees_the_planes_compared_and_each_job_at_its_slowest_rail(pod):
    answer = get(operator(), "/api/clusters/pod/")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert [(f["slug"], f["role"], f["rail"]) for f in body["fabrics"]] == [
        ("pod-plane1", "compute", 1), ("pod-plane2", "compute", 2), ("pod-storage", "storage", None)]
    assert [(p["key"], p["throughput_gbps"], p["load"]) for p in body["planes"]] == [
        ("pod-plane1", 300.0, 1.5), ("pod-plane2", 100.0, 0.5)]
    assert body["imbalance"]["max_over_mean"] == 1.5 and body["imbalance"]["max_over_min"] == 3.0
    assert body["imbalance"]["most_loaded"] == "pod-plane1" and body["imbalance"]["least_loaded"] == "pod-plane2"
    assert body["imbalance"]["jobs_slowest_on"] == {"pod-plane1": 0, "pod-plane2": 1}
    assert body["compute_gbps"] == 400.0
    jobs = {j["id"]: j for j in body["jobs"]}
    assert set(jobs) == {"llm", "moe"}
    llm = jobs["llm"]
    assert (llm["slowdown"], llm["slowest_plane"], llm["comm_s"], llm["achieved_gbps"]) == (2.0, "pod-plane2", 1.0,
                                                                                            200.0)
    assert llm["links"] == {"pod-plane1": "/fabrics/pod-plane1/?focus=job:llm",
                            "pod-plane2": "/fabrics/pod-plane2/?focus=job:llm"}
    assert jobs["moe"]["slowdown"] == 1.0
    hosts = body["hosts"]
    assert hosts["hosts"] == 18 and hosts["fabrics"] == {"pod-plane1": 16, "pod-plane2": 12, "pod-storage": 18}
    assert (hosts["on_planes"], hosts["on_every_plane"], hosts["by_sysimg"]) == (16, 12, 0)
    assert hosts["partial"] == ["dgx0013", "dgx0014", "dgx0015", "dgx0016"]
    assert [s["slug"] for s in body["storage"]] == ["pod-storage"]


def test_the_cluster_list_and_the_overview_name_the_cluster(pod):
    user = operator()
    listed = get(user, "/api/clusters/").json()["clusters"]
    assert [(c["slug"], c["url"]) for c in listed] == [("pod", "/clusters/pod/")]
    assert [(f["slug"], f["role"], f["rail"]) for f in listed[0]["fabrics"]] == [
        ("pod-plane1", "compute", 1), ("pod-plane2", "compute", 2), ("pod-storage", "storage", None)]
    overview = get(user, "/api/fabrics/overview/").json()
    assert [c["slug"] for c in overview["clusters"]] == ["pod"]
    assert {f["slug"] for f in overview["fabrics"]} == set(SLUGS)
    cards = {f["slug"]: f for f in overview["clusters"][0]["fabrics"]}
    assert cards["pod-plane1"]["throughput_gbps"] == 300.0 and cards["pod-plane1"]["state"] == "live"


def test_the_cluster_page_renders(pod, client):
    client.force_login(operator())
    answer = client.get("/clusters/pod/")
    assert answer.status_code == 200 and b"Pod" in answer.content


# ------------------------------------------------------------------ isolation
def test_a_tenant_user_gets_only_its_tenants_jobs_and_no_host_names(pod):
    assert get(operator(), "/api/clusters/pod/").json()["hosts"]["partial"], "the operator sees the names"
    answer = get(tenant_user("acme"), "/api/clusters/pod/")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert [j["id"] for j in body["jobs"]] == ["llm"]
    assert body["jobs"][0]["slowdown"] == 2.0 and body["jobs"][0]["slowest_plane"] == "pod-plane2"
    assert body["hosts"]["partial"] == [] and body["hosts"]["hosts"] == 18, "counts, never names"
    assert body["imbalance"]["jobs_slowest_on"] == {"pod-plane1": 0, "pod-plane2": 1}
    text = answer.content.decode()
    assert "moe" not in text and "globex" not in text.lower() and "dgx00" not in text
    overview = get(tenant_user("globex"), "/api/clusters/pod/").json()
    assert [j["id"] for j in overview["jobs"]] == ["moe"]


def test_a_viewer_of_no_tenant_gets_no_job(pod):
    user = User.objects.create_user("someone", password="pw-someone")
    body = get(user, "/api/clusters/pod/").json()
    assert body["jobs"] == [] and body["hosts"]["partial"] == []
    assert [p["throughput_gbps"] for p in body["planes"]] == [300.0, 100.0], "fabric-wide numbers stay"


def test_a_user_who_may_open_none_of_the_fabrics_gets_404(pod, client, monkeypatch):
    """The clusters shown are those with a fabric the viewer may open (:func:`ibweb.access.visible_fabrics`)."""
    import ibweb.dashboard.cluster as cluster_module

    user = tenant_user("acme")
    client.force_login(user)
    assert client.get("/clusters/pod/").status_code == 200
    real = cluster_module.visible_fabrics
    monkeypatch.setattr(cluster_module, "visible_fabrics", lambda view: real(view).exclude(cluster=pod))
    assert client.get("/clusters/pod/").status_code == 404
    assert get(user, "/api/clusters/pod/").status_code == 404
    assert get(user, "/api/clusters/").json()["clusters"] == []
    assert get(user, "/api/clusters/nosuch/").status_code == 404


def test_a_visitor_who_may_see_nothing_is_refused(pod, client):
    with public_read(False):
        page = client.get("/clusters/pod/")
        assert page.status_code == 302 and "/login" in page["Location"]
        assert get(None, "/api/clusters/pod/").status_code in (401, 403)
        assert get(None, "/api/clusters/").status_code in (401, 403)


def test_ensure_demo_cluster_creates_the_pod_once():
    first, second = io.StringIO(), io.StringIO()
    call_command("ensure_demo_cluster", stdout=first)
    call_command("ensure_demo_cluster", stdout=second)
    assert "created cluster 'pod'" in first.getvalue() and "kept cluster 'pod'" in second.getvalue()
    rows = Cluster.objects.get(slug="pod").fabrics.order_by("slug")
    assert [(f.slug, f.cluster_role, f.rail) for f in rows] == [
        ("pod-plane1", "compute", 1), ("pod-plane2", "compute", 2), ("pod-storage", "storage", None)]
    assert counts() == (1, 3)


# ------------------------------------------------------------------ the twins across planes
def test_telemetry_planes_give_each_job_expected_against_observed_at_its_slowest_rail(pod):
    from ibweb.fabrics.choices import FabricMode
    from ibweb.twin.report_cache import store_report

    rows = {f.slug: f for f in pod.fabrics.all()}
    Fabric.objects.filter(slug__in=["pod-plane1", "pod-plane2"]).update(mode=FabricMode.TELEMETRY)
    observed = {"pod-plane1": {"llm": 95.0, "moe": 20.0}, "pod-plane2": {"llm": 40.0, "moe": 19.0}}
    tenants = {j["name"]: j["tenant"] for j in SPEC["jobs"]}
    for slug, jobs in observed.items():
        store_report(rows[slug].pk, {"t": time.time(), "jobs": [
            {"id": j, "tenant": tenants[j], "emulated_gbps": 100.0 if j == "llm" else 20.0, "observed_gbps": gbps}
            for j, gbps in jobs.items()]})
    jobs = {j["id"]: j for j in get(operator(), "/api/clusters/pod/").json()["jobs"]}
    llm = jobs["llm"]["twin"]
    assert (llm["expected_gbps"], llm["observed_gbps"], llm["ratio"], llm["slowest_plane"]) == (
        200.0, 135.0, 0.4, "pod-plane2")
    assert llm["planes"]["pod-plane1"] == {"expected_gbps": 100.0, "observed_gbps": 95.0, "ratio": 0.95}
    assert (jobs["moe"]["twin"]["ratio"], jobs["moe"]["twin"]["slowest_plane"]) == (0.95, "pod-plane2")
    # a tenant's user gets its own job's figures only
    body = get(tenant_user("acme"), "/api/clusters/pod/").json()
    assert [(j["id"], j["twin"]["ratio"]) for j in body["jobs"]] == [("llm", 0.4)]
    assert "moe" not in json.dumps(body)


def test_emulated_planes_have_no_twin_figures(pod):
    from ibweb.twin.report_cache import store_report

    plane = pod.fabrics.get(slug="pod-plane1")
    store_report(plane.pk, {"t": time.time(), "jobs": [{"id": "llm", "tenant": "acme", "emulated_gbps": 1.0,
                                                         "observed_gbps": 0.0}]})
    assert all(j["twin"] is None for j in get(operator(), "/api/clusters/pod/").json()["jobs"])
