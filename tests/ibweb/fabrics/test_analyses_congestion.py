"""The congestion what-if as an analysis (issue 41): API, eager task with progress, settings and per-tenant view."""

from __future__ import annotations

import dataclasses

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from fabric_engine.backpressure.cc_params import CongestionControl
from ibweb.fabrics import analyses
from ibweb.fabrics.analyses import AnalysisKind, summary
from ibweb.fabrics.api.params import clean_params
from ibweb.fabrics.models import Analysis
from tests.support.access_fixtures import build, identifiers, leaks

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/fabrics/fabrics/shared/analyses/"
SIDES = ["maxmin", "credit", "vl_separation", "congestion_control"]


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def operator_of(shared):
    operator = shared.users["operator"]
    operator.user_permissions.add(Permission.objects.get(codename="add_analysis", content_type__app_label="fabrics"))
    return operator


def test_congestion_whatif_through_the_api_with_each_tenant_seeing_its_own_jobs():
    shared = build()
    api = client_of(operator_of(shared))
    r = api.post(URL, {"kind": "whatif_congestion", "params": {"vls": 2}}, format="json")
    assert r.status_code == 201, r.json()
    got = api.get(f"{URL}{r.json()['id']}/").json()
    assert got["status"] == "done", got
    assert got["params"] == {"vls": 2}
    res = got["result"]
    assert [s["key"] for s in res["sides"]] == SIDES
    assert res["params"]["vls"] == 2 and res["params"]["jobs"] == 2
    assert res["congestion_control"] == {"source": "default", "settings": CongestionControl.typical().as_dict()}
    assert {j["id"] for j in res["summary"]} == {"acme-train", "globex-secret"}
    assert all(len(j["comm_s"]) == 4 and j["vs_maxmin"][0] == 1.0 for j in res["summary"])
    cc = res["sides"][3]
    assert {"fecn_marks_per_s", "becn_per_s", "throttled_flows", "held_by", "roots", "held", "converged",
            "iterations"} <= set(cc)
    line = summary(AnalysisKind.WHATIF_CONGESTION, res)
    assert line.startswith("VL separation (2 lanes): worst job ") and "congestion control (default settings)" in line
    assert Analysis.objects.get(pk=r.json()["id"]).kind == "whatif_congestion"
    mine = client_of(shared.users["acme-user"]).get(f"{URL}{r.json()['id']}/")
    assert mine.status_code == 200
    body = mine.json()["result"]
    assert [j["id"] for j in body["summary"]] == ["acme-train"]
    assert all([j["id"] for j in s["jobs"]] == ["acme-train"] for s in body["sides"])
    assert all(s["worst_slowdown"] == s["jobs"][0]["slowdown"] for s in body["sides"])
    assert not leaks(mine.content.decode(), identifiers(shared, "globex"))


def test_a_sides_worst_slowdown_is_over_the_jobs_the_view_sees():
    from ibweb.fabrics.api.analysis_views import _visible_side

    side = {"key": "credit", "worst_slowdown": 11.25,
            "jobs": [{"id": "mine", "slowdown": 2.25}, {"id": "theirs", "slowdown": 11.25}]}
    assert _visible_side(side, frozenset({"mine"})) == {"key": "credit", "worst_slowdown": 2.25,
                                                         "jobs": [{"id": "mine", "slowdown": 2.25}]}
    assert _visible_side(side, frozenset())["worst_slowdown"] is None


def test_limiting_links_name_no_hidden_host():
    result = {"sides": [{"key": "credit", "jobs": [
        {"id": "a", "limiting_link": {"link": 3, "label": "leaf01/1 -> gpu0005/1"}},
        {"id": "b", "limiting_link": None}]}]}
    shown = analyses.relabel_links(result, {"gpu0005": "host-5"})
    assert shown["sides"][0]["jobs"][0]["limiting_link"] == {"link": 3, "label": "leaf01/1 -> host-5/1"}
    assert shown["sides"][0]["jobs"][1]["limiting_link"] is None
    assert analyses.relabel_links(result, None)["sides"][0]["jobs"][0]["limiting_link"] == {"link": 3}
    assert result["sides"][0]["jobs"][0]["limiting_link"]["label"] == "leaf01/1 -> gpu0005/1"  # not changed


def test_the_fabric_settings_are_used_when_the_request_gives_none(monkeypatch):
    shared = build()
    settings = dict(CongestionControl.typical().as_dict(), marking_rate=7)
    monkeypatch.setattr(analyses, "fabric_congestion_control", lambda fabric: settings)
    api = client_of(operator_of(shared))
    got = api.post(URL, {"kind": "whatif_congestion", "params": {}}, format="json").json()
    assert got["status"] == "done", got
    assert got["result"]["congestion_control"] == {"source": "fabric", "settings": settings}
    given = {"enabled": False}
    got = api.post(URL, {"kind": "whatif_congestion", "params": {"congestion_control": given}}, format="json").json()
    assert got["status"] == "done", got
    assert got["result"]["congestion_control"]["source"] == "params"
    assert got["result"]["congestion_control"]["settings"]["enabled"] is False


def test_the_fabrics_congestion_control_policy_is_the_what_ifs_switched_on():
    from ibweb.tenancy.cc_settings import to_json
    from ibweb.tenancy.models import CongestionControlPolicy

    shared = build()
    assert analyses.fabric_congestion_control(shared.fabric) is None, "no policy: the default profile"
    configured = dataclasses.replace(CongestionControl.typical(), enabled=False, marking_rate=3)
    CongestionControlPolicy.objects.create(fabric=shared.fabric, enabled=False, settings=to_json(configured))
    got = analyses.fabric_congestion_control(shared.fabric)
    assert got == {**configured.as_dict(), "enabled": True}
    api = client_of(operator_of(shared))
    result = api.post(URL, {"kind": "whatif_congestion", "params": {}}, format="json").json()
    assert result["status"] == "done", result
    assert result["result"]["congestion_control"] == {"source": "fabric", "settings": got}


def test_progress_is_reported_at_each_side():
    shared = build()
    seen = []
    out = analyses.run("whatif_congestion", {"vls": 4}, shared.fabric.scenario(), lambda f, m: seen.append((f, m)),
                       analyses.inputs_of(shared.fabric), fabric=shared.fabric)
    messages = [m for _, m in seen]
    for side in out["sides"]:
        assert any(m.startswith(side["label"]) for m in messages), (side["label"], messages)
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)


def test_a_refused_fabric_fails_the_task_naming_the_field(monkeypatch):
    shared = build()
    monkeypatch.setattr("fabric_engine.analysis.run.CONGESTION_MAX_HOSTS", 4)
    got = client_of(operator_of(shared)).post(URL, {"kind": "whatif_congestion"}, format="json").json()
    assert got["status"] == "failed" and got["error"].startswith("fabric: the congestion what-if runs on fabrics of "
                                                                 "at most 4 hosts"), got


def test_params_defaults_and_normalized_settings():
    assert clean_params("whatif_congestion", {}, 64) == {"vls": 4}
    got = clean_params("whatif_congestion", {"congestion_control": {"threshold": 4, "ccti_timer": [20] * 16}}, 64)
    assert got["congestion_control"]["threshold"] == 4 and got["congestion_control"]["ccti_timer"] == [20] * 16
    assert clean_params("whatif_congestion", {"congestion_control": None}, 64) == {"vls": 4}


@pytest.mark.parametrize(("params", "field"), [({"vls": 0}, "vls"), ({"vls": 16}, "vls"), ({"vls": "4"}, "vls"),
                                               ({"congestion_control": {"threshold": 16}}, "congestion_control"),
                                               ({"congestion_control": {"bogus": 1}}, "congestion_control"),
                                               ({"congestion_control": [1]}, "congestion_control"),
                                               ({"congestion_control_source": "fabric"}, "congestion_control_source"),
                                               ({"engine": "ftree"}, "engine")])
def test_bad_congestion_params_are_400_naming_the_field(params, field):
    shared = build()
    r = client_of(operator_of(shared)).post(URL, {"kind": "whatif_congestion", "params": params}, format="json")
    assert r.status_code == 400 and list(r.json()["params"]) == [field], r.json()
