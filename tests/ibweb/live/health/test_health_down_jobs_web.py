"""Issue 37 on the emulated demo, sooner: each down names the jobs on its link as it went down (redacted to a
view's tenants), a cable swap is one stored ``info`` event per cable end, and ``/metrics`` counts the downs."""

from __future__ import annotations

import asyncio
import copy

import numpy as np
import pytest
from django.contrib.auth.models import User

from ibweb.events.models import Event
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.runtime import health as store
from ibweb.runtime import record
from ibweb.tenancy.models import Tenant
from tests.support.engine_fixtures import settled_tick

pytestmark = pytest.mark.django_db(transaction=True)

FAULTS = [
    # a leaf uplink that jobs of acme (rlhf-7b) and globex (eval-sweep) cross
    {"kind": "flapping", "link": "leaf09 57", "period_s": 6, "down_s": 2, "start_s": 3},
    {"kind": "cable_swap", "link": "leaf05 7", "at_s": 7},
]
TICKS = 11


@pytest.fixture
def run(settings):
    """The demo with :data:`FAULTS`, graded every tick; the fabric, its newest report and the runner's fabric and
    job catalog."""
    settings.IBWEB_HEALTH_INTERVAL_S = 0
    settings.IBWEB_HEALTH_JOB_KILLING_S = 0.5  # the flapping cable's 2 s downs (seen down for 1 s at least) kill jobs
    fabric, _ = ensure_demo()
    fabric.spec = {**copy.deepcopy(fabric.spec), "health": FAULTS}
    fabric.save()
    out = {}

    async def go():
        runner = FabricRunner(fabric)
        await runner.start()
        for _ in range(TICKS):
            await settled_tick(runner)
        out["fabric"] = runner.source.fabric
        await runner.stop()

    asyncio.run(go())
    h = record.head(fabric.pk)
    return fabric, store.read(fabric.pk), out["fabric"], record.jobs(fabric.pk, h)


def _port(report: dict, node: str, port: int) -> dict:
    return next(p for p in report["worst"] if p["node"] == node and p["port"] == port)


def _expected(f, catalog: list[dict], node: str, port: int) -> list[str]:
    """The catalog's jobs whose routes cross the cable at ``node`` ``port`` or that run on its node or peer."""
    n = f.node(node)
    d = f.out_link(n, port)
    ends = {n, int(f.dl_dst[d])}
    return sorted(j["id"] for j in catalog if {d, int(f.reverse(d))} & set(j["links"]) or ends & set(j["hosts"]))


def test_each_down_names_the_jobs_on_its_link_for_each_view(run, client):
    fabric, report, f, catalog = run
    want = _expected(f, catalog, "leaf09", 57)
    tenants = {j["id"]: j["tenant"] for j in catalog}
    assert {tenants[j] for j in want} >= {"acme", "globex"}, "the demo's jobs moved: pick another cable"
    flap = _port(report, "leaf09", 57)
    episodes = flap["downs"]["episodes"]
    assert len(episodes) == 2  # down at 3 s and at 9 s
    for ep in episodes:
        assert [j["id"] for j in ep["jobs"]] == want
        assert all(j["tenant"] for j in ep["jobs"])
    peer = _port(report, flap["peer"]["node"], flap["peer"]["port"])  # the leaf's end of the same cable
    assert [j["id"] for j in peer["downs"]["episodes"][0]["jobs"]] == want

    # the API: an operator reads them all; a tenant's user only its tenant's (and the host as host-<index>)
    from ibweb.tenancy.demo import ensure_demo_policy

    ensure_demo_policy(fabric)
    User.objects.create_superuser("root", password="pw")
    client.login(username="root", password="pw")
    body = client.get(f"/api/fabrics/fabrics/{fabric.slug}/health/").json()
    assert [j["id"] for j in _port(body, "leaf09", 57)["downs"]["episodes"][0]["jobs"]] == want
    for slug in ("acme", "globex"):
        user = User.objects.create_user(f"u-{slug}", password="pw")
        tenant = Tenant.objects.get(slug=slug)
        tenant.users.add(user)
        client.force_login(user)
        shown = client.get(f"/api/fabrics/fabrics/{fabric.slug}/health/").json()
        got = [[j["id"] for j in ep["jobs"]] for ep in _port(shown, "leaf09", 57)["downs"]["episodes"]]
        mine = [j for j in want if tenants[j] in (tenant.slug, tenant.name)]
        assert mine and got == [mine, mine]
        text = client.get(f"/api/fabrics/fabrics/{fabric.slug}/health/").content.decode()
        for other in (j for j in want if tenants[j] not in (tenant.slug, tenant.name)):
            assert f'"id": "{other}"' not in text and f'"id":"{other}"' not in text


def test_a_long_down_is_the_fabrics_event_listing_the_jobs_it_hit_for_each_view(run, client):
    fabric, _, f, catalog = run
    want = _expected(f, catalog, "leaf09", 57)
    tenants = {j["id"]: j["tenant"] for j in catalog}
    events = Event.objects.filter(fabric=fabric, kind="link_down_long", object_id="leaf09 port 57")
    assert events.count() == 1  # one event of the port (each later long down raises it again)
    event = events[0]
    assert event.severity == "critical" and event.tenant is None and event.job == ""  # not one tenant's event
    assert sorted(j for j, _ in event.jobs) == want and all(t for _, t in event.jobs)
    assert "; jobs" not in event.message  # listed apart, rendered per view

    User.objects.create_superuser("root", password="pw")
    client.login(username="root", password="pw")
    url = f"/api/fabrics/fabrics/{fabric.slug}/events/"
    listed = [e for e in client.get(url, {"kind": "link_down_long"}).json()["results"] if "leaf09" in e["message"]]
    assert len(listed) == 1 and listed[0]["message"].endswith("; jobs " + ", ".join(want[:5]))
    from ibweb.tenancy.demo import ensure_demo_policy

    ensure_demo_policy(fabric)
    user = User.objects.create_user("u-acme", password="pw")
    Tenant.objects.get(slug="acme").users.add(user)
    client.force_login(user)
    mine = [j for j in want if tenants[j] == "acme"]
    listed = [e for e in client.get(url, {"kind": "link_down_long"}).json()["results"] if "port 57" in e["message"]]
    assert len(listed) == 1 and listed[0]["message"].endswith("; jobs " + ", ".join(mine))
    assert not any(j in listed[0]["message"] for j in want if j not in mine)


def test_a_cable_swap_is_one_info_event_per_cable_end(run, client):
    fabric, report, _, _ = run
    swaps = report["swaps"]
    assert {(s["node"], s["port"]) for s in swaps} >= {("leaf05", 7)} and len(swaps) == 2
    events = Event.objects.filter(fabric=fabric, kind="cable_swap").order_by("object_id")
    assert events.count() == 2
    by_end = {e.object_id: e for e in events}
    leaf = by_end["leaf05 port 7"]
    swap = next(s for s in swaps if s["node"] == "leaf05")
    assert leaf.severity == "info" and not leaf.active  # one-shot: over at the next grading
    assert leaf.details["from"] == swap["from"] and leaf.details["to"] == swap["to"] == swap["from"] + "-R"
    assert leaf.message == f"leaf05 port 7: cable swapped (module serial {swap['from']} -> {swap['to']})"
    assert {e.object_id for e in events} == {f"{s['node']} port {s['port']}" for s in swaps}

    User.objects.create_superuser("root", password="pw")
    client.login(username="root", password="pw")
    listed = client.get(f"/api/fabrics/fabrics/{fabric.slug}/events/", {"kind": "cable_swap"}).json()["results"]
    assert len(listed) == 2 and {e["severity"] for e in listed} == {"info"}


def test_metrics_count_link_downs_per_fabric_and_per_port_seen_down(run, client):
    fabric, report, f, _ = run
    User.objects.create_superuser("root", password="pw")
    client.login(username="root", password="pw")
    metrics = client.get(f"/metrics?fabric={fabric.slug}").content.decode()
    for family in ("ibweb_fabric_link_downs_total", "ibweb_port_link_downs_total"):
        assert metrics.count(f"# TYPE {family} counter\n") == 1 and metrics.count(f"# HELP {family} ") == 1
    flap = _port(report, "leaf09", 57)
    assert flap["downs"]["downs_7d"] == 2
    assert f'ibweb_port_link_downs_total{{fabric="{fabric.slug}",node="leaf09",port="57"}} 2\n' in metrics
    peer = flap["peer"]
    assert (f'ibweb_port_link_downs_total{{fabric="{fabric.slug}",node="{peer["node"]}",port="{peer["port"]}"}} 2\n'
            in metrics)
    assert f'ibweb_fabric_link_downs_total{{fabric="{fabric.slug}"}} 4\n' in metrics  # both ends, twice
    assert metrics.count("ibweb_port_link_downs_total{") == 2  # only the ports seen down
    assert np.isfinite(report["t"])
