"""Counter conditions through a telemetry source: one lasting event per occurrence, cleared only after recovery.

Samples of gpu0008 port 1 arrive through the push API; the fabric's runner advances its
counter conditions with each new sweep and the events app stores what each state raises.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission, User
from rest_framework.test import APIClient

from ibweb.events.models import Event
from ibweb.events.recorder import EventRecorder
from ibweb.live.engine.runner import FabricRunner
from ibweb.telemetry import store

from . import test_push_counter_checks as pushed

push = pushed.push
client = pushed.client  # the fixture: a push-fed fabric and its collector's API client

pytestmark = pytest.mark.django_db(transaction=True)


def gpu8(t: float, symbol: int) -> dict:
    return {"lid": 14, "port": 1, "t": t, "extended": False, "counters": {"SymbolErrorCounter": symbol}}


class Watch:
    """A started runner and a recorder, fed one pushed sweep at a time."""

    def __init__(self, client) -> None:
        self.client = client
        self.runner = FabricRunner(client.config.fabric)
        self.recorder = EventRecorder(client.config.fabric_id)
        self.before: list[dict] = []
        self.seq = 0

    def sweep(self, t: float, symbol: int, linkinfo: bool = False) -> list[dict]:
        assert push(self.client, gpu8(t, symbol), linkinfo=linkinfo).status_code == 201
        if self.seq == 0:
            asyncio.run(self.runner.start())
        self.seq += 1
        prev, newest = store.sweeps(self.client.config.fabric_id)
        self.sweep_t = round(newest["t"], 3)  # the sweep's time: when a condition it starts is "since"
        state = self.runner.source.state(prev, newest, t + 0.5, self.runner.seq)
        found = [a for a in state.alerts if a.get("condition")]
        self.recorder.apply(found, self.before, seq=self.seq, t=self.sweep_t, first=self.seq == 1,
                            fabric=self.runner.source.fabric)
        self.before = found
        return found


def kinds(found: list[dict]) -> list[str]:
    return sorted(c["kind"] for c in found)


def test_an_error_rate_stays_one_active_event_across_sweeps_and_clears_after_the_quiet_sweeps(client):
    w = Watch(client)
    t = time.time() - 200
    assert w.sweep(t, 0, linkinfo=True) == []
    assert w.sweep(t + 10, 0) == []
    first = None
    for k in range(3):  # 600 symbol errors in 10 s: far above 10 a minute; rising after two sweeps
        found = w.sweep(t + 20 + 10 * k, 600 * (k + 1))
        (rate,) = [c for c in found if c["kind"] == "error_rate"]
        if first is None:
            first, since = rate, w.sweep_t
        assert rate["since"] == first["since"] == since and rate["count"] == 1
        assert rate["port"] == "gpu0008 port 1" and rate["severity"] == "critical"
        assert rate["nodes"] == [int(w.runner.source.fabric.node("gpu0008"))]
    assert kinds(found) == ["error_rate", "symbol_errors_rising"]
    assert not [a for a in w.runner.source.state(*store.sweeps(client.config.fabric_id), t + 41, w.runner.seq).alerts
                if a["kind"] == "errors"], "the per-sweep alert gives way to the condition"
    (event,) = Event.objects.filter(kind="error_rate")
    assert event.active and event.key == "error_rate|port=gpu0008 port 1|guid=" + first["guid"]
    for k in range(2):  # calm, but not yet for three sweeps in a row: still active, the same event
        assert kinds(w.sweep(t + 50 + 10 * k, 1800)) == ["error_rate", "symbol_errors_rising"]
    assert Event.objects.filter(kind="error_rate").count() == 1 and Event.objects.get(kind="error_rate").active
    assert w.sweep(t + 70, 1800) == []
    event.refresh_from_db()
    assert not event.active and event.cleared_at is not None

    # it comes back: a second occurrence of the same condition
    found = w.sweep(t + 80, 2400)
    (rate,) = [c for c in found if c["kind"] == "error_rate"]
    assert rate["count"] == 2 and rate["since"] == w.sweep_t > since


def test_a_restarted_source_keeps_the_since_of_an_open_condition(client):
    w = Watch(client)
    t = time.time() - 200
    w.sweep(t, 0, linkinfo=True)
    (rate,) = w.sweep(t + 10, 600)
    event = Event.objects.get(kind="error_rate")
    assert event.active and rate["since"] == pytest.approx(event.first_seen.timestamp(), abs=1e-3)
    # open for an hour already when the engine restarts: the event's first_seen is the condition's since
    Event.objects.filter(pk=event.pk).update(first_seen=event.first_seen - timedelta(hours=1))
    event.refresh_from_db()
    w2 = Watch(client)
    w2.seq, w2.before = 1, w.before
    asyncio.run(w2.runner.start())
    (again,) = w2.sweep(t + 20, 1200)
    assert again["since"] == pytest.approx(event.first_seen.timestamp(), abs=1e-3)
    assert again["since"] == pytest.approx(rate["since"] - 3600, abs=1e-3) and again["count"] == 1


def test_the_conditions_api_lists_active_conditions_and_hides_hosts_from_tenant_views(client):
    w = Watch(client)
    t = time.time() - 200
    w.sweep(t, 0, linkinfo=True)
    w.sweep(t + 10, 600)
    url = "/api/telemetry/fabrics/pushed/conditions/"
    op = User.objects.create_user("op", password="pw")
    op.user_permissions.add(*Permission.objects.filter(codename="view_all_tenants"))
    viewer = User.objects.create_user("viewer", password="pw")
    answers = {}
    for user in (op, viewer):
        api = APIClient()
        api.force_authenticate(user)
        r = api.get(url)
        assert r.status_code == 200, r.content
        answers[user.username] = r.json()
    (c,) = answers["op"]["conditions"]
    assert (c["kind"], c["severity"], c["count"]) == ("error_rate", "critical", 1)
    event = Event.objects.get(kind="error_rate")
    assert c["since"] == pytest.approx(event.first_seen.timestamp(), abs=1e-3) and c["ends"] == ["gpu0008 port 1"]
    assert "gpu0008" in c["message"]
    assert c["evidence"]["counter"] == "SymbolErrorCounter" and c["evidence"]["threshold_per_min"] == 10.0
    assert c["evidence"]["rate_per_min"] > 10.0 * 10  # critical: ten times the threshold
    (v,) = answers["viewer"]["conditions"]
    assert "gpu0008" not in str(v) and v["kind"] == "error_rate" and v["since"] == c["since"]
    assert v["evidence"] == c["evidence"]
    assert APIClient().get("/api/telemetry/fabrics/nope/conditions/").status_code in (403, 404)
