"""The routing report API: engine used, fallback, unreachable entries, balance, credit loops (issue 16)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from ibweb.fabrics.models import Fabric
from tests.support.access_fixtures import build, identifiers, leaks, public_read
from tests.support.engine_fixtures import published

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/fabrics/fabrics/{}/routing/"
#: A Dragonfly+: no switch qualifies as an updn root, so updn falls back to minhop, as OpenSM's does.
DRAGONFLY = {"topology": {"generator": "dragonfly_plus", "groups": 3, "leaves_per_group": 2, "spines_per_group": 2,
                          "hosts_per_leaf": 2, "radix": 8, "name": "dfp"}, "jobs": []}


def client_of(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


@pytest.fixture
def shared():
    built = build()
    published(built.fabric)  # the report is the one its engine published with the routing
    return built


def test_report_of_the_fabric_routing_for_every_level_that_may_view_it(shared):
    with public_read(True):
        for role in ("anonymous-public", "viewer", "acme-user", "operator"):
            r = client_of(shared.users[role]).get(URL.format("shared"))
            assert r.status_code == 200, role
            body = r.json()
            assert body["engine"] == body["engine_used"] == body["requested_engine"] == "minhop"
            assert body["fallback"] is None and body["unreachable_entries"] == 0 and body["entries"] > 0
            assert body["credit_loops"]["acyclic"] is True
            assert body["ports"]["max"] >= body["ports"]["min"] > 0
            assert "spine01" in body["per_switch"]
            if role != "operator":
                hidden = identifiers(shared, "globex") + ([] if role == "acme-user" else identifiers(shared, "acme"))
                assert not leaks(r.content.decode(), hidden), role
    with public_read(False):
        assert client_of(None).get(URL.format("shared")).status_code == 403
    assert client_of(shared.users["operator"]).post(URL.format("shared"), {}).status_code == 405
    assert client_of(shared.users["operator"]).get(URL.format("nope")).status_code == 404


def test_an_engine_that_falls_back_says_so(shared):
    published(Fabric.objects.create(name="Dfp", slug="dfp", spec=DRAGONFLY, routing_engine="updn", tick_s=1.0))
    body = client_of(shared.users["operator"]).get(URL.format("dfp")).json()
    assert body["requested_engine"] == body["engine"] == "updn"
    assert body["engine_used"] == "minhop" and body["fallback"]["engine"] == "minhop"
    assert "no switch qualifies as a root" in body["fallback"]["reason"]
    assert any("as OpenSM does" in w for w in body["warnings"])
    assert body["unreachable_entries"] == 0 and body["unreachable_pairs"] == 0
