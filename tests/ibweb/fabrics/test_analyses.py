"""Analyses as tasks (issue 5): eBB and what-if through the API, eager Celery, progress rows and feed messages."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Permission, User
from django.test import override_settings
from rest_framework.test import APIClient

from fabric_engine.analysis import effective_bisection_bandwidth, what_if
from fabric_engine.errors import RoutingError
from fabric_engine.routing import route
from fabric_engine.scenario import DEMO_SPEC, build_emulator, build_fabric
from ibweb.asgi import application
from ibweb.fabrics import tasks
from ibweb.fabrics.analyses import ProgressThrottle
from ibweb.fabrics.demo import ensure_demo
from ibweb.fabrics.models import Analysis
from ibweb.live.engine.runner import FabricRunner

URL = "/api/fabrics/fabrics/demo/analyses/"


def analyst(username: str = "analyst", allowed: bool = True) -> User:
    user = User.objects.create_user(username, password="pw")
    user.user_permissions.add(Permission.objects.get(codename="view_all_tenants"))  # sees every tenant's jobs
    if allowed:
        user.user_permissions.add(Permission.objects.get(codename="add_analysis", content_type__app_label="fabrics"))
    return user


@pytest.fixture
def api(db):
    ensure_demo()
    client = APIClient()
    client.force_authenticate(analyst())
    return client


def post(client, body: dict, capture) -> dict:
    """Create an analysis, run its task as the commit would, and read it back."""
    with capture(execute=True):
        r = client.post(URL, body, format="json")
    assert r.status_code == 201, r.json()
    return client.get(f"{URL}{r.json()['id']}/").json()


@pytest.mark.django_db
def test_ebb_runs_after_commit_and_matches_the_engine(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        r = api.post(URL, {"kind": "ebb", "params": {"patterns": 300, "seed": 7}}, format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["status"] == "queued" and len(callbacks) == 1  # nothing runs before the row is committed
    callbacks[0]()
    row = Analysis.objects.get(pk=r.json()["id"])
    assert row.status == "done" and row.progress == 1.0 and row.started <= row.finished
    routing = route(build_fabric(DEMO_SPEC["topology"]), "minhop")
    expected = effective_bisection_bandwidth(routing, 300, 7)
    assert row.result["ebb"] == round(expected.ebb, 6) and row.result["patterns"] == 300
    assert row.result["min"] <= row.result["p50"] <= row.result["max"] and sum(row.result["histogram"]["counts"]) == 300
    got = api.get(f"{URL}{row.pk}/").json()
    assert got["fabric"] == "demo" and got["requested_by"] == "analyst" and got["result"]["ebb"] == row.result["ebb"]
    assert api.get(URL).json()["results"][0]["id"] == row.pk


@pytest.mark.django_db(transaction=True)
def test_eager_answer_already_holds_the_result(api):
    r = api.post(URL, {"kind": "ebb", "params": {"patterns": 100, "engine": "ftree", "method": "maxmin"}},
                 format="json")
    body = r.json()
    assert r.status_code == 201 and body["status"] == "done", body  # autocommit: the task ran before the answer
    res = body["result"]
    assert res["engine"] == "ftree" and res["method"] == "maxmin" and 0 < res["ebb"] <= 1


@pytest.mark.django_db
def test_progress_updates_the_row_then_finishes(api, django_capture_on_commit_callbacks, monkeypatch):
    seen = []

    def record(analysis, fraction, status, message):
        row = Analysis.objects.get(pk=analysis.pk)
        seen.append((fraction, status, row.progress, row.status, message))

    monkeypatch.setattr(tasks, "publish_progress", record)
    monkeypatch.setattr(tasks, "PROGRESS_INTERVAL_S", 0.0)  # every report goes through
    post(api, {"kind": "ebb", "params": {"patterns": 250}}, django_capture_on_commit_callbacks)
    running = [s for s in seen if s[1] == "running"]
    # routing, start of the patterns, then one per batch of 100 patterns except the final one
    assert [s[4] for s in running] == ["routing the fabric with minhop", "0 of 250 patterns", "100 of 250 patterns",
                                       "200 of 250 patterns"]
    assert all(f == progress and st == "running" for f, _, progress, st, _ in running)
    fractions = [s[0] for s in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0
    assert seen[-1][:4] == (1.0, "done", 1.0, "done") and seen[-1][4].startswith("eBB ")


def test_throttle_passes_at_most_one_report_per_interval_and_always_the_last():
    times = iter([0.0, 0.1, 0.2, 0.26, 0.3, 0.31])
    throttle = ProgressThrottle(0.25, lambda: next(times))
    assert [throttle(f) for f in (0.1, 0.2, 0.3, 0.4, 0.5, 1.0)] == [True, False, False, True, False, True]


@pytest.mark.django_db
def test_whatif_failed_cables_side_by_side(api, django_capture_on_commit_callbacks):
    em = build_emulator({**DEMO_SPEC, "routing": "minhop"})
    leaf_spine = [c for c in range(em.fabric.num_links) if em.fabric.kind[em.fabric.a_node[c]] != 0
                  and em.fabric.kind[em.fabric.b_node[c]] != 0]  # switch-switch cables
    failed = leaf_spine[:4]
    body = post(api, {"kind": "whatif_links", "params": {"failed_cables": failed[::-1], "ebb_patterns": 100}},
                django_capture_on_commit_callbacks)
    assert body["status"] == "done", body
    res = body["result"]
    expected = what_if(em.fabric, em.jobs, failed_cables=failed).as_dict()
    assert res["delta"] == expected["delta"] and res["alternative"]["failed_cables"] == failed
    assert [f["cable"] for f in res["failed"]] == failed and all("/" in f["a"] and "/" in f["b"] for f in res["failed"])
    base_ebb = effective_bisection_bandwidth(em.routing, 100, 1).ebb
    alt_ebb = effective_bisection_bandwidth(route(em.fabric.without_links(failed), "minhop"), 100, 1).ebb
    assert res["baseline"]["ebb"] == round(base_ebb, 6) and res["alternative"]["ebb"] == round(alt_ebb, 6)
    assert res["summary"]["ebb_delta"] == round(round(alt_ebb, 6) - round(base_ebb, 6), 6)
    assert res["alternative"]["ebb"] <= res["baseline"]["ebb"]  # fewer uplinks: no more bisection bandwidth
    assert res["summary"]["jobs"] == len(em.jobs)
    for change in res["links_changed"]:
        assert change["baseline_util"] != change["alternative_util"]


@pytest.mark.django_db
def test_whatif_other_engine(api, django_capture_on_commit_callbacks):
    res = post(api, {"kind": "whatif_engine", "params": {"engine": "updn", "ebb_patterns": 0}},
               django_capture_on_commit_callbacks)["result"]
    assert res["baseline"]["engine"] == "minhop" and res["alternative"]["engine"] == "updn"
    assert res["baseline"]["ebb"] is None and res["summary"]["ebb_delta"] is None
    assert [d["id"] for d in res["delta"]] == [j["name"] for j in DEMO_SPEC["jobs"]]


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "field", "words"), [
    ({"kind": "whatif_links", "params": {"failed_cables": [3, 50000]}}, "failed_cables",
     "item 1: cable 50000 is outside 0.."),
    ({"kind": "whatif_links", "params": {}}, "failed_cables", "required"),
    ({"kind": "whatif_engine", "params": {"engine": "lash"}}, "engine", "'lash' is not one of"),
    ({"kind": "ebb", "params": {"patterns": 10 ** 6}}, "patterns", "outside 1..20000"),
    ({"kind": "ebb", "params": {"patterns": "many"}}, "patterns", "expected an integer"),
    ({"kind": "ebb", "params": {"samples": 10}}, "samples", "unknown parameter"),
    ({"kind": "ebb", "params": {"pattern": "alltoall"}}, "pattern", "not one of bisection"),
])
def test_bad_params_are_400_naming_the_field(api, body, field, words):
    r = api.post(URL, body, format="json")
    assert r.status_code == 400
    errors = r.json()["params"]
    assert list(errors) == [field] and words in errors[field][0]
    assert not Analysis.objects.exists()


@pytest.mark.django_db
def test_unknown_kind_is_400(api):
    r = api.post(URL, {"kind": "alltoall", "params": {}}, format="json")
    assert r.status_code == 400 and "kind" in r.json()


@pytest.mark.django_db
def test_permissions(db):
    ensure_demo()
    anonymous = APIClient()
    assert anonymous.get(URL).status_code == 200  # public read (the development default)
    assert anonymous.post(URL, {"kind": "ebb"}, format="json").status_code == 403
    assert "actions" not in anonymous.options(URL).json()
    reader = APIClient()
    reader.force_authenticate(analyst("reader", allowed=False))
    assert reader.post(URL, {"kind": "ebb"}, format="json").status_code == 403
    writer = APIClient()
    writer.force_authenticate(analyst("writer"))
    assert "POST" in writer.options(URL).json()["actions"]  # how the dashboard decides to show its button
    assert writer.get("/api/fabrics/fabrics/nope/analyses/").status_code == 404
    with override_settings(IBWEB_PUBLIC_READ=False):
        assert anonymous.get(URL).status_code == 403
    assert not Analysis.objects.exists()


@pytest.mark.django_db
def test_a_failing_analysis_is_marked_failed_with_the_message(api, django_capture_on_commit_callbacks, monkeypatch):
    def no_route(fabric, engine):
        raise RoutingError(f"{engine}: the fabric is not connected")

    monkeypatch.setattr("fabric_engine.analysis.run.route", no_route)
    messages = []
    monkeypatch.setattr(tasks, "publish_progress", lambda a, f, status, message: messages.append((status, message)))
    body = post(api, {"kind": "ebb"}, django_capture_on_commit_callbacks)
    assert body["status"] == "failed" and "not connected" in body["error"] and body["result"] is None
    assert messages[-1] == ("failed", body["error"])
    assert tasks.run_analysis(body["id"]) == "failed"  # a second delivery does not run it again
    assert len(messages) == 2


@pytest.mark.django_db
def test_an_unexpected_error_does_not_leave_the_row_running(api, django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setattr("fabric_engine.analysis.run.ebb_report",
                        lambda *a, **k: (_ for _ in ()).throw(MemoryError("too big")))
    body = post(api, {"kind": "ebb"}, django_capture_on_commit_callbacks)
    assert body["status"] == "failed" and body["error"] == "internal error: MemoryError: too big"


@pytest.mark.django_db(transaction=True)
async def test_feed_clients_get_progress_then_done():
    fabric, _ = await sync_to_async(ensure_demo)()
    await FabricRunner(fabric).start()
    user = await sync_to_async(analyst)()
    client = APIClient()
    client.force_authenticate(user)
    comm = WebsocketCommunicator(application, "/ws/fabrics/demo/live/")
    assert (await comm.connect())[0]
    try:
        assert json.loads(await comm.receive_from(timeout=5))["type"] == "snapshot"
        r = await sync_to_async(client.post)(URL, {"kind": "ebb", "params": {"patterns": 500}}, format="json")
        assert r.status_code == 201 and r.json()["status"] == "done"
        pk = r.json()["id"]
        ours = []
        while not ours or ours[-1]["status"] == "running":
            msg = json.loads(await asyncio.wait_for(comm.receive_from(), 10))
            if msg["type"] == "progress" and msg["task"] == "analysis":
                ours.append(msg)
        done = ours[-1]
        assert done == {"v": 1, "type": "progress", "task": "analysis", "id": pk, "kind": "ebb", "fraction": 1.0,
                        "status": "done", "message": done["message"]}
        assert done["message"] == f"eBB {100 * r.json()['result']['ebb']:.1f}% over 500 bisection patterns (minhop)"
        assert all(m["id"] == pk and m["status"] == "running" and m["fraction"] < 1 for m in ours[:-1])
    finally:
        await comm.disconnect()


def test_a_telemetry_fed_fabric_is_analysed_on_what_its_engine_published_issue_13(
        api, django_capture_on_commit_callbacks):
    from ibweb.fabrics.models import Fabric
    from ibweb.runtime import record

    lab = Fabric.objects.create(name="Lab", slug="lab", mode="telemetry")
    url = "/api/fabrics/fabrics/lab/analyses/"
    r = api.post(url, {"kind": "ebb", "params": {"patterns": 50}}, format="json")
    assert r.status_code == 400 and "not been discovered yet" in r.json()["fabric"][0]
    f = build_fabric({"generator": "fat_tree", "hosts": 16, "radix": 8})
    routing = route(f, "updn")
    record.publish(lab.pk, record.row_identity(lab), f, routing)
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(url, {"kind": "ebb", "params": {"patterns": 50, "seed": 3}}, format="json")
    body = api.get(f"{url}{r.json()['id']}/").json()
    assert body["status"] == "done", body
    want = effective_bisection_bandwidth(routing, 50, 3)
    assert body["result"]["engine"] == "updn" and body["result"]["ebb"] == pytest.approx(want.ebb, abs=1e-6)


@pytest.mark.django_db
def test_operators_may_start_analyses_viewers_tenants_users_and_anonymous_visitors_not():
    """The migration gives the operator role ``add_analysis``: the dashboard's start buttons and the twin's what-if
    form show when ``OPTIONS`` lists a ``POST`` action (``api.js`` ``canCreate``), for operators and superusers only."""
    import importlib

    from django.contrib.auth.models import Group
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    from ibweb.auth import role_grants
    from ibweb.tenancy.models import Tenant

    # the migrations' functions as migrate runs them, on the historical models (transactional tests flush groups)
    apps = MigrationLoader(connection).project_state(("fabrics", "0006_operator_analyses")).apps
    importlib.import_module("ibweb.tenancy.migrations.0003_roles").create_roles(apps, None)
    role_grants.grant(apps, importlib.import_module("ibweb.fabrics.migrations.0006_operator_analyses").ROLES)
    ensure_demo()
    acme = Tenant.objects.create(slug="acme", name="Acme")
    users = {"anonymous": None}
    for name, group in (("operator", "operator"), ("viewer", "viewer"), ("policy-admin", "policy admin"),
                        ("acme-user", "viewer")):
        users[name] = User.objects.create_user(name, password="pw")
        users[name].groups.add(Group.objects.get(name=group))
    acme.users.add(users["acme-user"])
    users["superuser"] = User.objects.create_superuser("root", password="pw")
    offered = {}
    for name, user in users.items():
        client = APIClient()
        if user is not None:
            client.force_authenticate(user)
        offered[name] = "POST" in (client.options(URL).json().get("actions") or {})
    assert offered == {"anonymous": False, "operator": True, "viewer": False, "policy-admin": False,
                       "acme-user": False, "superuser": True}
    assert not Group.objects.get(name="viewer").permissions.filter(codename="add_analysis").exists()
    client = APIClient()
    client.force_authenticate(users["operator"])
    r = client.post(URL, {"kind": "whatif_links", "params": {"failed_cables": [0], "ebb_patterns": 0}}, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["requested_by"] == "operator"
