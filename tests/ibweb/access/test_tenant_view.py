"""A tenant's users see only their tenants' jobs in the feed and the jobs API (issue 9)."""

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from ibweb.asgi import application
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed.view import OTHER, FeedView
from ibweb.tenancy.models import Tenant
from tests.support.engine_fixtures import published

pytestmark = pytest.mark.django_db(transaction=True)


def test_filter_frame_keeps_only_the_tenants_jobs_and_sums_the_rest():
    frame = {"jobs": [{"id": "a", "tenant": "acme"}, {"id": "g", "tenant": "globex"}],
             "alerts": [{"kind": "isolation", "job": "g"}, {"kind": "no_route", "job": "a"}, {"kind": "stale"}],
             "hotspots": [{"link": 3, "jobs": [{"id": "a", "gbps": 1.0}, {"id": "g", "gbps": 2.0},
                                              {"id": "background", "gbps": 0.5}]}]}
    out = FeedView("t-1", frozenset({"acme"}), None).header(frame)
    assert [j["id"] for j in out["jobs"]] == ["a"]
    assert out["alerts"] == [{"kind": "no_route", "job": "a"}, {"kind": "stale"}]
    assert out["hotspots"][0]["jobs"] == [{"id": "a", "gbps": 1.0}, {"id": "background", "gbps": 0.5},
                                          {"id": OTHER, "gbps": 2.0}]


async def test_a_tenants_user_gets_filtered_frames():
    fabric, _ = await asyncio.to_thread(ensure_demo)

    def make_user():
        from ibweb.tenancy.demo import ensure_demo_policy

        ensure_demo_policy(fabric)
        user = User.objects.create_user("alice", password="pw")
        tenant, _ = Tenant.objects.get_or_create(slug="acme", defaults={"name": "Acme"})
        tenant.users.add(user)
        return user

    user = await asyncio.to_thread(make_user)
    engine = FabricRunner(fabric)
    await engine.start()
    await engine.tick()
    comm = WebsocketCommunicator(application, "/ws/fabrics/demo/live/")
    comm.scope["user"] = user
    assert (await comm.connect())[0]
    try:
        snap = json.loads(await comm.receive_from(timeout=5))
        assert {j["tenant"] for j in snap["frame"]["jobs"]} == {"acme"}
        nodes = snap["topology"]["nodes"]
        hosts = [i for i, k in enumerate(nodes["kind"]) if k == "host"]
        shown = [i for i in hosts if nodes["guid"][i] != "hidden"]
        acme_hosts = sum(j["hosts"] for j in snap["frame"]["jobs"])
        assert len(shown) == acme_hosts  # only the hosts of acme's partitions
        assert all(nodes["name"][i] == f"host-{i}" for i in hosts if i not in shown)
        await engine.tick()
        frame = json.loads(await comm.receive_from(timeout=5))
        assert frame["type"] == "frame" and {j["tenant"] for j in frame["jobs"]} == {"acme"}
        assert frame["sharp"]["jobs"] and {j["tenant"] for j in frame["sharp"]["jobs"]} == {"acme"}
        assert {j["tenant"] for j in frame["storage"]["jobs"]} <= {"acme"}
        assert len(frame["util"]) == 2 * fabric_links(snap)
    finally:
        await comm.disconnect()


def fabric_links(snapshot: dict) -> int:
    return len(snapshot["topology"]["links"]["a_node"])


@pytest.mark.django_db
def test_jobs_api_is_filtered_for_a_tenants_user(client):
    published(ensure_demo()[0])
    user = User.objects.create_user("bob", password="pw")
    Tenant.objects.get_or_create(slug="globex", defaults={"name": "Globex"})[0].users.add(user)
    assert client.get("/api/fabrics/fabrics/demo/jobs/").json()["jobs"] == []  # anonymous: no tenant (issue 14)
    client.force_login(user)
    assert {j["tenant"] for j in client.get("/api/fabrics/fabrics/demo/jobs/").json()["jobs"]} == {"globex"}
