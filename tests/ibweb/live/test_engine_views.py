"""The SHARP and storage endpoints (issue 6): the newest frame's sections, per fabric, tenant-filtered."""

import asyncio

import pytest

from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed.view import filter_sharp, filter_storage
from tests.support.tenancy_fixtures import operator_api

pytestmark = pytest.mark.django_db(transaction=True)


def test_sections_of_the_newest_frame():
    fabric, _ = ensure_demo()
    client = operator_api()
    assert client.get("/api/fabrics/fabrics/demo/sharp/").status_code in (200, 404)

    async def run():
        engine = FabricRunner(fabric)
        await engine.start()
        await engine.tick()
        await engine.tick()

    asyncio.run(run())
    r = client.get("/api/fabrics/fabrics/demo/sharp/")
    assert r.status_code == 200
    body = r.json()
    assert body["fabric"] == "demo" and body["seq"] >= 2
    sharp = body["sharp"]
    assert sharp["generation"] == "quantum2" and sharp["trees_in_use"] == 3
    assert {j["id"]: j["on"] for j in sharp["jobs"]}["diffusion-xl"] is False
    r = client.get("/api/fabrics/fabrics/demo/storage/")
    storage = r.json()["storage"]
    assert r.status_code == 200 and len(storage["servers"]) == 8
    assert client.get("/api/fabrics/fabrics/nope/storage/").status_code == 404


def test_tenant_filters_keep_fabric_wide_figures_and_drop_other_jobs():
    sharp = {"trees_in_use": 2, "jobs": [{"id": "a", "tenant": "acme"}, {"id": "b", "tenant": "globex"}],
             "switches": [{"name": "leaf01", "trees": 2, "jobs": ["a", "b"]}],
             "events": [{"job": "a", "kind": "allocated"}, {"job": "b", "kind": "fallback"}]}
    got = filter_sharp(sharp, {"acme"})
    assert [j["id"] for j in got["jobs"]] == ["a"] and got["switches"][0] == {"name": "leaf01", "trees": 2,
                                                                                "jobs": ["a"]}
    assert got["events"] == [{"job": "a", "kind": "allocated"}] and got["trees_in_use"] == 2
    storage = {"servers": [{"name": "stor001"}], "jobs": [{"id": "a", "tenant": "acme"}, {"id": "b", "tenant": "x"}],
               "tenants": [{"tenant": "acme"}, {"tenant": "x"}, {"tenant": "background"}]}
    got = filter_storage(storage, {"acme"})
    assert got["servers"] == storage["servers"] and [j["id"] for j in got["jobs"]] == ["a"]
    assert [t["tenant"] for t in got["tenants"]] == ["acme", "background"]
    assert filter_sharp(None, {"acme"}) is None
