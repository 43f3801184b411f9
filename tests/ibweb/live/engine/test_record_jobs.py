"""A new job catalog alone (a scheduler started or ended a job) costs the tick a catalog, not a whole record.

The runner publishes it with :func:`ibweb.runtime.record.publish_jobs`: a new record version whose
head keeps the fabric, LFT and report parts of the version before (``base``); readers keyed by
version see the new jobs, and decode the fabric and its routing no more.
"""

import asyncio

import numpy as np
import pytest
from rest_framework.test import APIClient

from fabric_engine.routing import quality, route
from fabric_engine.topology.generate import fat_tree
from ibweb.live.engine import record_publisher
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed import publisher as feed_publisher
from ibweb.runtime import record
from ibweb.runtime.cache import shared_cache
from tests.support.access_fixtures import build

FID = 987_654


@pytest.fixture
def clean():
    record.forget(FID)
    yield
    record.forget(FID)


def test_publish_jobs_keeps_the_fabric_parts_and_readers_keyed_by_version_see_the_new_jobs(clean, monkeypatch):
    r = route(fat_tree(hosts=16, radix=8), "minhop")
    v0 = record.publish(FID, "row", r.fabric, r, [{"id": "a"}, {"id": "b"}], report={"engine": "minhop"})
    record.publish_tenants(FID, v0, 7, {1: {"slug": "acme", "name": "Acme", "nodes": [0, 1], "guids": [5, 6]}})
    h0 = record.head(FID, "row")
    assert [j["id"] for j in record.jobs(FID, h0)] == ["a", "b"]  # decoded and kept under v0
    f0, r0 = record.fabric(FID, h0), record.routing(FID, h0)
    touched = []
    cache = shared_cache()
    monkeypatch.setattr(type(cache), "touch", lambda self, key, timeout=None, version=None: touched.append(key))
    monkeypatch.setattr(record, "encode_fabric", lambda f: pytest.fail("the fabric was encoded again"))
    monkeypatch.setattr(record, "encode_lft", lambda lft: pytest.fail("the LFTs were encoded again"))

    v1 = record.publish_jobs(FID, v0, [{"id": "c"}])
    h1 = record.head(FID, "row")
    assert v1 is not None and h1["version"] == v1 != v0 and record.fabric_version(h1) == v0 and h1["jobs"] == 1
    assert [j["id"] for j in record.jobs(FID, h1)] == ["c"]
    assert [j["id"] for j in record.jobs(FID, h0)] == ["a", "b"]  # a reader of the old head still finds its jobs
    assert record.fabric(FID, h1) is f0 and record.routing(FID, h1) is r0  # decoded once per base
    assert record.routing_report(FID, h1) == {"engine": "minhop"}
    assert np.array_equal(np.asarray(record.full_routing(FID, h1).lft), r.lft)
    sets = record.tenant_hosts(FID, h1, 7)  # the tenant host sets carried over to the new version
    assert sets is not None and sets[1].nodes.tolist() == [0, 1]
    assert sorted(touched) == sorted([f"ibweb:rt:{FID}:{v0}:jobs", f"ibweb:rt:{FID}:{v0}:tenants"])  # base kept

    assert record.publish_jobs(FID, v0, [{"id": "d"}]) is None  # not the newest version: nothing written
    assert record.head(FID, "row")["version"] == v1
    touched.clear()
    v2 = record.publish_jobs(FID, v1, [])
    assert record.fabric_version(record.head(FID, "row")) == v0 and record.jobs(FID, record.head(FID, "row")) == []
    assert not any(f":{v0}:" in k for k in touched)
    monkeypatch.undo()
    touched.clear()
    monkeypatch.setattr(type(cache), "touch", lambda self, key, timeout=None, version=None: touched.append(key))
    v3 = record.publish(FID, "row", r.fabric, r, [])  # a whole new record retires the base's parts too
    assert f"ibweb:rt:{FID}:{v0}:fabric" in touched and f"ibweb:rt:{FID}:{v0}:lft:0" in touched
    assert f"ibweb:rt:{FID}:{v2}:jobs" in touched and record.fabric_version(record.head(FID, "row")) == v3


@pytest.mark.django_db(transaction=True)
def test_a_new_job_catalog_publishes_no_fabric_or_lft_part_and_the_apis_see_the_new_jobs(monkeypatch):
    shared = build()
    fid = shared.fabric.pk
    encoded, reports = [], []

    async def run():
        runner = FabricRunner(shared.fabric)
        await runner.start()
        await runner.tick()
        before = record.head(fid, record.row_identity(shared.fabric))
        assert sorted(j["id"] for j in record.jobs(fid, before)) == ["acme-train", "globex-secret"]
        monkeypatch.setattr(record, "encode_fabric", lambda f: encoded.append("fabric"))
        monkeypatch.setattr(record, "encode_lft", lambda lft: encoded.append("lft"))
        monkeypatch.setattr(quality, "report", lambda routing: reports.append(routing))
        monkeypatch.setattr(feed_publisher, "to_json", lambda f: encoded.append("topology"))
        kept = [j for j in runner.source.jobs() if j.name == "acme-train"]
        monkeypatch.setattr(runner.source, "jobs", lambda: kept)  # globex's job ended
        runner.source.catalog_version = "a job ended"
        assert await runner.tick() > 0
        return runner, before

    runner, before = asyncio.run(run())
    assert encoded == [] and reports == []  # neither the fabric, its LFTs, its topology nor its report again
    h = record.head(fid, record.row_identity(shared.fabric))
    assert h["version"] == runner.record_version != before["version"] and record.fabric_version(h) == before["version"]
    api = APIClient()
    api.force_authenticate(shared.users["operator"])
    body = api.get(f"/api/fabrics/fabrics/{shared.fabric.slug}/jobs/").json()
    assert [j["id"] for j in body["jobs"]] == ["acme-train"]
    f = record.fabric(fid, h)
    src, dst = str(f.node_name[f.hosts[0]]), str(f.node_name[f.hosts[-1]])
    r = api.get(f"/api/fabrics/fabrics/{shared.fabric.slug}/path/?src={src}&dst={dst}")
    assert r.status_code == 200 and r.json()["hops"][-1]["name"] == dst  # the kept LFTs still answer
    assert api.get(f"/api/fabrics/fabrics/{shared.fabric.slug}/routing/").status_code == 200


def test_the_routing_report_is_computed_once_per_routing(monkeypatch):
    r = route(fat_tree(hosts=16, radix=8), "minhop")
    calls = []
    real = quality.report
    monkeypatch.setattr(quality, "report", lambda routing: calls.append(routing) or real(routing))
    first = record_publisher.routing_report(r)
    assert record_publisher.routing_report(r) is first and calls == [r]
    other = route(r.fabric, "minhop")
    record_publisher.routing_report(other)
    assert calls == [r, other]
