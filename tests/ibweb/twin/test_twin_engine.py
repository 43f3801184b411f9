"""The twin inside a fabric's engine (issue 17): jobs, hotspots, alerts, overlay, plan events and the report."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.cache import cache

from fabric_engine.routing import route
from fabric_engine.state import FabricState
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin import SchedulerJob
from fabric_engine.twin.attribution import uplinks
from ibweb.events.recorder import EventRecorder
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.twin import fabric_twin, jobs, plans, report_cache
from ibweb.twin.choices import JobOrigin, JobSourceKind
from ibweb.twin.models import JobSource
from tests.support.tenancy_fixtures import tenants  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def clean_cache():
    cache.clear()
    yield
    cache.clear()


def state_of(f, rate: np.ndarray, seq: int = 1) -> FabricState:
    cap = f.capacity_gbps
    hot = [{"link": int(d), "util": float(rate[d] / cap[d]), "jobs": []} for d in np.argsort(-rate)[:5] if rate[d] > 0]
    return FabricState(seq, 100.0, 1.0, rate.astype(np.float32), (rate / cap).astype(np.float32),
                       hotspots=hot, capacity_gbps=cap)


def test_fabric_twin_fills_the_state_and_publishes_the_report():
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    r = route(f)
    row = Fabric.objects.create(name="Real", slug="real", mode=FabricMode.TELEMETRY)
    JobSource.objects.create(fabric=row, kind=JobSourceKind.PUSH, raise_after=2, clear_after=1)
    jobs.store_jobs(row, [SchedulerJob("4242", "acme", tuple(f"gpu{i:04d}" for i in (1, 2, 9, 10))),
                          SchedulerJob("4243", "globex", tuple(f"gpu{i:04d}" for i in (3, 4)))],
                    JobOrigin.PUSH, replace=True)
    twin = fabric_twin.FabricTwin(row.pk)
    empty = twin.step(r, state_of(f, np.zeros(2 * f.num_links)), 100.0)
    assert [j.name for j in empty.jobs] == ["4242", "4243"] and not any(j.active for j in empty.jobs)
    model = twin.twin._model[2]
    rate = model.link_rate * 0.5
    stray = int(np.flatnonzero(np.asarray(twin.twin._model[1].sum(axis=0)).ravel() == 0)[0])
    rate[stray] = 80.0
    out = twin.step(r, state_of(f, rate), 101.0)
    frame = out.frame_header({})
    assert [j["id"] for j in frame["jobs"]] == ["4242", "4243"] and frame["jobs"][0]["tenant"] == "acme"
    assert frame["jobs"][0]["achieved_gbps"] == pytest.approx(float(model.injection[0]) * 0.5, rel=1e-3)
    named = [h for h in frame["hotspots"] if h["link"] != stray]
    assert named and all(h["jobs"] for h in named)
    assert frame["twin"]["overlay"]["code"][stray] == 2 and frame["twin"]["deviations"] == 1
    assert frame["twin"]["plan"] is None and not [a for a in frame["alerts"] if a["kind"] == "twin"]
    out = twin.step(r, state_of(f, rate, 2), 102.0)  # the deviation persists: an alert, without job IDs
    (alert,) = [a for a in out.alerts if a["kind"] == "twin"]
    assert alert["deviation"] == "unexplained" and "jobs" not in alert and "; jobs" not in alert["message"]
    src = f"{f.node_name[f.dl_src[stray]]} port {int(f.dl_src_port[stray])}"
    assert alert["port"] == alert["a"] == src  # the event store names (and hides) hosts by these
    recorder = EventRecorder(row.pk)
    (event,) = recorder.apply(out.frame_header({})["alerts"], [], seq=2, t=102.0, fabric=f)  # as the runner's signal
    assert event.kind == "twin" and event.severity == "warning" and event.message == alert["message"]
    hosts_named = {f.node_name[n] for n in (f.dl_src[stray], f.dl_dst[stray]) if f.kind[n] == 0}
    assert {h[1] for h in event.hosts} == hosts_named
    report = report_cache.report(row.pk)
    assert [d["link"] for d in report["deviations"]] == [stray] and len(report["jobs"]) == 2
    links = report_cache.job_links(row.pk)
    assert set(links) == {"4242", "4243"}
    assert set(uplinks(f, np.array(links["4242"]["nodes"])).tolist()) <= set(links["4242"]["links"])
    # the stray traffic stops: the alert is cleared (clear_after=1)
    assert not [a for a in twin.step(r, state_of(f, model.link_rate * 0.5, 3), 103.0).alerts if a["kind"] == "twin"]
    # a job ends (pushed): the next tick lists one job
    jobs.end_jobs(row, ["4243"], JobOrigin.PUSH)
    assert [j.name for j in twin.step(r, state_of(f, model.link_rate * 0.5, 4), 104.0).jobs] == ["4242"]


def test_fabric_twin_checks_the_plan_and_tells_when_it_changes():
    design = fat_tree(hosts=8, radix=4)
    row = Fabric.objects.create(name="Real", slug="real", mode=FabricMode.TELEMETRY)
    from fabric_engine.formats import write

    plans.upload(row, "design.net", write(design, "ibsim"))
    twin = fabric_twin.FabricTwin(row.pk)
    r = route(design)
    zero = np.zeros(2 * design.num_links)
    out = twin.step(r, state_of(design, zero), 1.0)
    assert out.twin["plan"]["summary"] == "as planned" and not [a for a in out.alerts if a["kind"] == "plan"]
    cut = design.without_links([3])
    out = twin.step(route(cut), state_of(cut, np.zeros(2 * cut.num_links)), 2.0)
    (alert,) = [a for a in out.alerts if a["kind"] == "plan"]
    a, pa, b, pb = (design.node_name[design.a_node[3]], design.a_port[3], design.node_name[design.b_node[3]],
                    design.b_port[3])
    assert alert == {"kind": "plan", "deviation": "missing", "severity": "warning", "port": f"{a} port {pa}",
                     "a": f"{a} port {pa}", "b": f"{b} port {pb}",
                     "message": f"missing cable {a} port {pa} - {b} port {pb}"}
    assert report_cache.report(row.pk)["plan"]["issues"][0]["kind"] == "missing"
    assert out.twin["plan"]["counts"]["missing"] == 1
    recorder = EventRecorder(row.pk)
    (event,) = recorder.apply(out.frame_header({})["alerts"], [], seq=2, t=2.0, fabric=cut)  # as the runner's signal
    assert event.kind == "plan" and event.message == alert["message"] and event.active
    relinked = twin.step(r, state_of(design, zero, 3), 3.0)  # cabled as planned again: the event clears
    assert not [a for a in relinked.alerts if a["kind"] == "plan"]
    assert recorder.apply([], [alert], seq=3, t=3.0, fabric=design) == []
    event.refresh_from_db()
    assert not event.active and event.cleared_at is not None


def test_plan_alerts_one_per_difference_then_one_for_the_rest():
    issues = [{"kind": "missing", "planned": f"leaf01 port {p} - gpu{p:04d} port 1",
               "message": f"missing cable leaf01 port {p}"} for p in range(1, 6)]
    report = {"ok": False, "issues": issues, "counts": {"missing": 5}, "summary": "5 missing"}
    alerts = fabric_twin.plan_alerts(report, most=3)
    assert [a["port"] for a in alerts[:3]] == ["leaf01 port 1", "leaf01 port 2", "leaf01 port 3"]
    assert alerts[3]["message"] == "2 more differences from the plan (5 missing in all)"
    assert fabric_twin.plan_alerts({"ok": True, "issues": [], "counts": {}, "summary": "as planned"}) == []


@pytest.mark.django_db(transaction=True)  # the analysis task starts when its row is committed
def test_whatif_live_runs_todays_jobs_on_the_published_fabric(tenants):  # noqa: F811
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    from ibweb.runtime import record
    from ibweb.tenancy.models import Tenant
    from tests.support.tenancy_fixtures import user_in  # noqa: F811

    f = fat_tree(hosts=16, radix=8, speed="HDR")
    row = Fabric.objects.create(name="Real", slug="real", mode=FabricMode.TELEMETRY, routing_engine="minhop")
    root = APIClient()
    root.force_authenticate(User.objects.create_superuser("root", password="pw-root"))
    url = "/api/fabrics/fabrics/real/analyses/"
    r = root.post(url, {"kind": "whatif_live", "params": {"failed_switches": ["spine01"]}}, format="json")
    assert r.status_code == 400 and "not been discovered yet" in str(r.content)
    record.publish(row.pk, record.row_identity(row), f, route(f), [], {"source": "telemetry"})
    jobs.store_jobs(row, [SchedulerJob("4242", "acme", tuple(f"gpu{i:04d}" for i in (1, 2, 9, 10))),
                          SchedulerJob("4243", "globex", tuple(f"gpu{i:04d}" for i in (3, 4, 11, 12)))],
                    JobOrigin.PUSH, replace=True)
    bad = root.post(url, {"kind": "whatif_live", "params": {}}, format="json")
    assert bad.status_code == 400 and "fail a cable or a switch" in str(bad.content)
    r = root.post(url, {"kind": "whatif_live", "params": {"failed_switches": ["spine01"]}}, format="json")
    assert r.status_code == 201, r.content
    done = root.get(f"{url}{r.json()['id']}/").json()
    assert done["status"] == "done", done
    result = done["result"]
    assert [j["id"] for j in result["jobs"]] == ["4242", "4243"]
    assert all(j["slowdown"] is not None and j["slowdown"] >= 1 - 1e-9 for j in result["jobs"])
    assert {c["a"].split("/")[0] for c in result["failed"]} | {c["b"].split("/")[0] for c in result["failed"]} \
        >= {"spine01"} and result["summary"]["jobs"] == 2
    other = root.post(url, {"kind": "whatif_live", "params": {"engine": "updn"}}, format="json").json()
    assert root.get(f"{url}{other['id']}/").json()["result"]["alternative"]["engine"] == "updn"
    # acme's user sees acme's job only
    member = APIClient()
    member.force_authenticate(user_in(None, "m", Tenant.objects.get(slug="acme")))
    seen = member.get(f"{url}{r.json()['id']}/").json()["result"]
    assert [j["id"] for j in seen["jobs"]] == ["4242"] and [d["id"] for d in seen["delta"]] == ["4242"]
    assert all(j["id"].startswith("4242") for side in ("baseline", "alternative") for j in seen[side]["jobs"])


def test_the_twin_models_its_expected_values_with_the_fabrics_congestion_model_and_follows_a_change():
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    r = route(f, "ftree")
    row = Fabric.objects.create(name="Real", slug="real", mode=FabricMode.TELEMETRY)
    JobSource.objects.create(fabric=row, kind=JobSourceKind.PUSH, patterns={"4242": "all_to_all"})
    jobs.store_jobs(row, [SchedulerJob("4242", "acme", tuple(f"gpu{i:04d}" for i in (1, 2, 6, 7, 8, 10, 12, 14))),
                          SchedulerJob("4243", "globex", tuple(f"gpu{i:04d}" for i in (5, 9)))],
                    JobOrigin.PUSH, replace=True)
    twin = fabric_twin.FabricTwin(row.pk)
    twin.step(r, state_of(f, np.zeros(2 * f.num_links)), 100.0)
    assert twin.twin.congestion == "maxmin"
    ideal = twin.twin._model[2].comm_s.copy()
    row.congestion_model = "credit"
    row.save()  # the engine re-reads its settings at its next step
    twin.step(r, state_of(f, np.zeros(2 * f.num_links)), 101.0)
    assert twin.twin.congestion == "credit"
    assert twin.twin._model[2].comm_s[1] < 0.9 * ideal[1]
