"""The daily digest (issue 38): what changed in a day, sent once a day through the channels of the rules that ask for
it, rendered for each recipient (a tenant's channel never names another tenant's host, job or tenant), sent now
from the API, scheduled by Celery beat."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from fabric_engine.scenario import build_emulator
from ibweb.notify import digest, queue
from ibweb.notify.models import Delivery
from tests.support.access_fixtures import build, identifiers, leaks, role_permissions, run_engine

from .helpers import Ticks, channel, lab, port_down, rule

pytestmark = pytest.mark.django_db(transaction=True)


def test_window_is_the_day_up_to_the_digest_hour(monkeypatch):
    monkeypatch.setenv("IBWEB_NOTIFY_DIGEST_HOUR", "7")
    start, end = digest.window(datetime(2026, 12, 6, 6, 59, tzinfo=UTC))
    assert (start, end) == (datetime(2026, 12, 4, 7, tzinfo=UTC), datetime(2026, 12, 5, 7, tzinfo=UTC))
    assert digest.window(datetime(2026, 12, 6, 7, 0, tzinfo=UTC))[1] == datetime(2026, 12, 6, 7, tzinfo=UTC)
    monkeypatch.setenv("IBWEB_NOTIFY_DIGEST_HOUR", "25")
    with pytest.raises(ValueError, match="IBWEB_NOTIFY_DIGEST_HOUR='25'"):
        digest.window(datetime(2026, 12, 6, tzinfo=UTC))


def test_digest_rules_get_one_digest_a_day_and_no_live_events(webhook_receiver, monkeypatch):
    fabric = lab()
    live = channel("webhook", {"url": webhook_receiver.url.replace("/hook", "/live")}, name="live")
    daily = channel("webhook", {"url": webhook_receiver.url.replace("/hook", "/daily")}, name="daily")
    am = channel("alertmanager", {"url": "http://127.0.0.1:9/"}, name="am")  # no digest: it is no alert
    rule(live)
    r = rule(daily, am)
    r.sends = "digest"
    r.save()
    ticks = Ticks(fabric)
    ticks.tick([port_down("leaf01", 1), port_down("leaf02", 7)])
    ticks.tick([], [port_down("leaf01", 1)])
    assert {x.path for x in webhook_receiver.received} == {"/live"}  # a digest rule sends no live events
    later = datetime.now(tz=UTC) + timedelta(hours=1)  # the digest hour comes after the events
    monkeypatch.setenv("IBWEB_NOTIFY_DIGEST_HOUR", str(later.hour))
    made = digest.send_due(later + timedelta(minutes=1))
    assert [d.channel_id for d in made] == [daily.pk]
    assert digest.send_due(later + timedelta(minutes=2)) == []  # once a day, whoever calls
    assert queue.pump(later + timedelta(minutes=3), run=lambda ids: None)["digests"] == 0
    queue.wait_idle(30)
    [body] = [x.json() for x in webhook_receiver.received if x.path == "/daily"]
    notice = body["notices"][0]
    assert notice["kind"] == "digest" and notice["summary"].endswith("2 opened, 1 closed, 1 open")
    text = notice["body"]
    assert "Lab (lab): 2 opened, 1 closed, 1 open at the end" in text
    assert "by kind: link_down 2 opened / 1 closed" in text
    assert "still open:" in text and "leaf02 port 7 is down" in text and "leaf01 port 1 is down" in text
    # sent now: a new message each time, over the last 24 hours
    assert len(digest.send_digest(rules=[r], manual=True)) == 1 and len(digest.send_digest(rules=[r],
                                                                                        manual=True)) == 1

def test_a_tenants_digest_names_only_what_it_may_see(webhook_receiver):
    shared = build()
    run_engine(shared.fabric)
    f = build_emulator(shared.fabric.scenario()).fabric
    g, a = shared.hosts["globex"][0], shared.hosts["acme"][0]
    gname, aname = str(f.node_name[g]), str(f.node_name[a])
    ops = channel("webhook", {"url": webhook_receiver.url.replace("/hook", "/ops")})
    acme = channel("webhook", {"url": webhook_receiver.url.replace("/hook", "/acme")}, name="acme",
                   tenant=shared.tenants["acme"])
    for r in (rule(ops), rule(acme, tenant=shared.tenants["acme"])):
        r.sends = "digest"
        r.save()
    ticks = Ticks(shared.fabric, topology=f, jobs=[{"id": "acme-train", "tenant": "acme"},
                                                   {"id": "globex-secret", "tenant": "globex"}])
    raised = [{"kind": "link_down", "severity": "critical", "port": f"{name} port 1",
               "message": f"{name} port 1 is down"} for name in (gname, aname)]
    raised += [{"kind": "isolation", "job": job, "partition": None, "reason": "not-member", "flows": 3}
               for job in ("globex-secret", "acme-train")]
    ticks.tick(raised)
    ticks.tick([], raised[:1])
    made = digest.send_digest(manual=True)
    assert len(made) == 2
    queue.wait_idle(30)
    by_path = {x.path: x.json()["notices"][0]["body"] for x in webhook_receiver.received}
    assert not leaks(by_path["/acme"], identifiers(shared, "globex")), leaks(by_path["/acme"],
                                                                             identifiers(shared, "globex"))
    assert aname in by_path["/acme"] and f"host-{g}" in by_path["/acme"]
    assert gname in by_path["/ops"] and "globex-secret" in by_path["/ops"]


def test_send_a_digest_now_from_the_api(webhook_receiver):
    fabric = lab()
    hook = channel("webhook", {"url": webhook_receiver.url})
    r = rule(hook)  # sends events: a digest may still be asked for
    Ticks(fabric).tick([port_down("leaf01", 1)])
    user = User.objects.create_user("op", password="pw-op")
    user.user_permissions.add(*role_permissions("operator"))
    op = APIClient()
    op.force_authenticate(User.objects.get(pk=user.pk))
    answer = op.post(f"/api/notify/rules/{r.pk}/digest/")
    assert answer.status_code == 200, answer.content
    [made] = answer.json()
    assert made["reason"] == "digest" and made["channel"] == hook.pk
    queue.wait_idle(30)
    assert Delivery.objects.get(pk=made["id"]).state == "sent"
    assert webhook_receiver.bodies()[-1]["notices"][0]["kind"] == "digest"
    viewer = User.objects.create_user("v", password="pw-v")
    other = APIClient()
    other.force_authenticate(viewer)
    assert other.post(f"/api/notify/rules/{r.pk}/digest/").status_code == 403


def test_beat_sends_the_digest_daily():
    from celery.schedules import crontab

    from ibweb.celery import app

    entry = app.conf.beat_schedule["notify-digest"]
    assert entry["task"] == "ibweb.notify.tasks.daily_digest" and isinstance(entry["schedule"], crontab)
    assert "notify-pump" in app.conf.beat_schedule  # the settings' entries are kept
    from ibweb.notify import tasks

    assert tasks.daily_digest.name == entry["task"] and entry["task"] in app.tasks


def test_still_open_is_what_was_open_at_the_windows_end():
    """Open at the end of the window (issue 39): an event open through it and cleared after it (between the digest
    hour and the send) is still open; one cleared before it and reopened after it is not."""
    from ibweb.events.models import Event
    from ibweb.notify.render import Renderers

    fabric = lab()
    Ticks(fabric).tick([port_down("leaf03", 1), port_down("leaf04", 2)])
    end = datetime.now(tz=UTC).replace(microsecond=0) - timedelta(hours=1)
    start = end - timedelta(days=1)
    through = Event.objects.get(message__startswith="leaf03 port 1")
    Event.objects.filter(pk=through.pk).update(first_seen=start - timedelta(hours=1), raised_at=None, active=False,
                                               cleared_at=end + timedelta(minutes=30))
    reopened = Event.objects.get(message__startswith="leaf04 port 2")
    Event.objects.filter(pk=reopened.pk).update(first_seen=start - timedelta(hours=2), active=True, cleared_at=None,
                                                raised_at=end + timedelta(minutes=20))
    r = rule(channel("webhook", {"url": "http://127.0.0.1:9/hook"}, name="daily"))
    text = digest.digest_notice(r.channels.get(), r, start, end, Renderers(), "k").body
    assert "Lab (lab): 0 opened, 0 closed, 1 open at the end" in text
    assert "leaf03 port 1 is down" in text and "leaf04 port 2" not in text
