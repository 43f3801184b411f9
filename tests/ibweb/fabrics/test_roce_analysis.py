"""The RoCEv2 what-if as an analysis (issue 16): API, eager task, per-tenant view of its per-job rows."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from ibweb.fabrics.analyses import summary
from tests.support.access_fixtures import build, identifiers, leaks

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/fabrics/fabrics/shared/analyses/"


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_roce_whatif_through_the_api_with_each_tenant_seeing_its_own_jobs():
    shared = build()
    operator = shared.users["operator"]
    operator.user_permissions.add(Permission.objects.get(codename="add_analysis", content_type__app_label="fabrics"))
    api = client_of(operator)
    r = api.post(URL, {"kind": "whatif_roce", "params": {"qps": 4, "seed": 3}}, format="json")
    assert r.status_code == 201, r.json()
    got = api.get(f"{URL}{r.json()['id']}/").json()
    assert got["status"] == "done", got
    res = got["result"]
    assert res["params"] == {"engine": "minhop", "qps": 4, "seed": 3, "same_seed": False, "jobs": 2,
                             "flows": res["params"]["flows"]}
    assert [s["kind"] for s in res["sides"]] == ["lft", "adaptive", "ecmp"]
    assert {j["id"] for j in res["summary"]} == {"acme-train", "globex-secret"}
    assert "RoCEv2 ECMP (4 QP/conn)" in summary("whatif_roce", res)
    mine = client_of(shared.users["acme-user"]).get(f"{URL}{r.json()['id']}/")
    assert mine.status_code == 200
    body = mine.json()["result"]
    assert [j["id"] for j in body["summary"]] == ["acme-train"]
    assert all([j["id"] for j in s["jobs"]] == ["acme-train"] for s in body["sides"])
    assert not leaks(mine.content.decode(), identifiers(shared, "globex"))


@pytest.mark.parametrize(("params", "field"), [({"qps": 0}, "qps"), ({"qps": 129}, "qps"),
                                               ({"same_seed": "yes"}, "same_seed"), ({"engine": "ftree"}, "engine")])
def test_bad_roce_params_are_400_naming_the_field(params, field):
    shared = build()
    operator = shared.users["operator"]
    operator.user_permissions.add(Permission.objects.get(codename="add_analysis", content_type__app_label="fabrics"))
    r = client_of(operator).post(URL, {"kind": "whatif_roce", "params": params}, format="json")
    assert r.status_code == 400 and list(r.json()["params"]) == [field], r.json()
