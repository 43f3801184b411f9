"""Link health conditions end to end (issue 37, item 5): the demo's faults, sooner, judged by its runner's health
publisher into alerts of the same tick, stored as events the API lists, open while the evidence holds, and
redacted for a tenant's view."""

from __future__ import annotations

import asyncio
import copy

import pytest
from django.contrib.auth.models import User

from ibweb.events.models import Event
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.tenancy.models import Tenant
from tests.support.engine_fixtures import newest_v1_frame, settled_tick

pytestmark = pytest.mark.django_db(transaction=True)

#: The demo's faults, seconds after the start, and a cable down for 9 s (longer than the job-killing 7 s).
FAULTS = [
    {"kind": "ber_rising", "link": "leaf03 40", "from": 6e-5, "to": 3e-4, "over_s": 10, "start_s": 10},
    {"kind": "hot_module", "port": "spine07 12", "celsius": 78, "start_s": 5},
    {"kind": "flapping", "link": "gpu0512 1", "period_s": 6, "down_s": 2, "start_s": 3},
    {"kind": "flapping", "link": "gpu0100 1", "period_s": 100, "down_s": 9, "start_s": 2},
]
TICKS = 14


@pytest.fixture
def run(settings):
    """The demo fabric with :data:`FAULTS`, graded every tick for :data:`TICKS` ticks; the newest frame."""
    settings.IBWEB_HEALTH_INTERVAL_S = 0
    fabric, _ = ensure_demo()
    fabric.spec = {**copy.deepcopy(fabric.spec), "health": FAULTS}
    fabric.save()

    async def go():
        runner = FabricRunner(fabric)
        await runner.start()
        for _ in range(TICKS):
            await settled_tick(runner)
        await runner.stop()

    asyncio.run(go())
    return fabric, newest_v1_frame(fabric.pk)


def _events(client, fabric, kind: str) -> list[dict]:
    body = client.get(f"/api/fabrics/fabrics/{fabric.slug}/events/", {"kind": kind, "page_size": 100}).json()
    return [e for e in body["results"] if e["kind"] == kind]


def test_conditions_are_events_open_while_the_evidence_holds_and_alerts_of_the_frame(run, client):
    fabric, frame = run
    User.objects.create_superuser("root", password="pw")
    client.login(username="root", password="pw")
    [hot] = _events(client, fabric, "module_temperature")
    assert hot["object_id"] == "spine07 port 12" and hot["severity"] == "warning" and hot["active"]
    assert "78.0 °C" in hot["message"] and hot["details"]["evidence"]["warning_c"] == 70.0
    ber = {e["object_id"]: e for e in _events(client, fabric, "ber_high")}
    assert "leaf03 port 40" in ber and len(ber) == 2 and all(e["active"] for e in ber.values())
    assert {e["severity"] for e in ber.values()} == {"warning"}  # raw BER 1.3e-4 at 13 s: under its error 2.4e-4
    downs = {e["object_id"]: e for e in _events(client, fabric, "repeated_downs")}
    assert "gpu0512 port 1" in downs and len(downs) == 2 and all(e["active"] for e in downs.values())
    assert not any(k.startswith("gpu0100") for k in downs)  # one down only
    # the 9 s down: one critical event per cable end, over (one-shot) while the port is back up
    ends = {e["object_id"]: e for e in _events(client, fabric, "link_down_long")}
    assert len(ends) == 2 and "gpu0100 port 1" in ends
    long = ends["gpu0100 port 1"]
    assert long["severity"] == "critical" and not long["active"]
    assert long["details"]["duration_min_s"] > 7 and long["details"]["end"] is not None
    # the frame of the last tick carries the open conditions among its alerts
    shown = {(a["kind"], a.get("port")) for a in frame["alerts"]}
    assert {("module_temperature", "spine07 port 12"), ("ber_high", "leaf03 port 40"),
            ("repeated_downs", "gpu0512 port 1")} <= shown
    assert Event.objects.filter(fabric=fabric, kind="repeated_downs", cleared_at__isnull=True).count() == 2


def test_a_tenant_view_reads_the_conditions_with_hosts_redacted(run, client):
    fabric, _ = run
    from ibweb.tenancy.demo import ensure_demo_policy

    ensure_demo_policy(fabric)
    user = User.objects.create_user("alice", password="pw")
    Tenant.objects.get(slug="acme").users.add(user)
    client.force_login(user)
    body = client.get(f"/api/fabrics/fabrics/{fabric.slug}/events/", {"limit": 200})
    assert body.status_code == 200
    text = body.content.decode()
    assert "gpu0512" not in text and "0xb83fd20300002000" not in text  # another tenant's host, and its GUID
    events = body.json()["results"]
    assert {"module_temperature", "ber_high", "repeated_downs", "link_down_long"} <= {e["kind"] for e in events}
    [host] = [e for e in events if e["kind"] == "repeated_downs" and e["object_id"].startswith("host-")]
    assert host["message"] == f"{host['object_id']}: 2 downs in 24 h (condition at 2)" and host["active"]
    # acme's own host is named; switches are fabric-wide
    assert {e["object_id"] for e in events if e["kind"] == "link_down_long"} >= {"gpu0100 port 1"}
    assert any(e["message"].startswith("spine07 port 12: module at 78.0") for e in events)
