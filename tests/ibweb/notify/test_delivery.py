"""From stored events to real receivers: one message at start and one at clear across many ticks, ports of one
switch grouped, a receiver down then back gets everything once and in order, silences recorded but not sent, a
failing channel raises its condition, Alertmanager gets its alerts and re-posts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ibweb.events.models import Event
from ibweb.notify import queue
from ibweb.notify.models import Attempt, Channel, Delivery, Silence
from ibweb.notify.senders.webhook import verify
from tests.support.notify_servers import wait_for

from .helpers import SECRET, Ticks, channel, lab, port_down, rule

pytestmark = pytest.mark.django_db(transaction=True)


def sync(ids) -> None:
    for cid in ids:
        queue.deliver_channel(cid)


def test_start_and_clear_make_two_notifications_across_many_ticks(webhook_receiver):
    fabric = lab()
    hook = channel("webhook", {"url": webhook_receiver.url, "secret": SECRET})
    rule(hook)
    ticks = Ticks(fabric)
    ticks.tick([port_down("leaf01", 3)])
    for _ in range(30):  # still raised: the runner's diff says nothing, frames come
        ticks.tick()
        ticks.recorder.on_frame({"t": ticks.t, "alerts": [port_down("leaf01", 3)]})
    ticks.tick([], [port_down("leaf01", 3)])
    for _ in range(5):
        ticks.tick()
    got = webhook_receiver.received
    assert [r.json()["status"] for r in got] == ["firing", "resolved"]
    for r in got:
        assert verify(SECRET, r.headers["x-ibweb-signature"], r.body)
    keys = [r.headers["idempotency-key"] for r in got]
    assert keys == list(Delivery.objects.filter(channel=hook).order_by("pk").values_list("key", flat=True))
    assert len(set(keys)) == 2
    notice = got[1].json()["notices"][0]
    assert notice["labels"]["switch"] == "leaf01" and notice["labels"]["port"] == "leaf01 port 3"
    assert notice["ends_at"] is not None and notice["state"] == "resolved"
    assert Attempt.objects.filter(delivery__channel=hook, ok=True).count() == 2


def test_ports_of_one_switch_are_one_message(webhook_receiver):
    fabric = lab()
    rule(channel("webhook", {"url": webhook_receiver.url}))
    ticks = Ticks(fabric)
    ticks.tick([port_down("leaf01", p) for p in range(1, 9)] + [port_down("leaf02", 1)])
    bodies = webhook_receiver.bodies()
    assert sorted(len(b["notices"]) for b in bodies) == [1, 8]
    eight = next(b for b in bodies if len(b["notices"]) == 8)
    assert {n["labels"]["switch"] for n in eight["notices"]} == {"leaf01"}


def test_receiver_down_then_back_gets_everything_once_in_order(webhook_receiver, monkeypatch):
    monkeypatch.setattr(queue, "BACKOFF_BASE_S", 0.01)
    monkeypatch.setattr(queue, "BACKOFF_MAX_S", 0.05)
    fabric = lab()
    hook = channel("webhook", {"url": webhook_receiver.url}, failing_after_s=0)
    other = channel("webhook", {"url": webhook_receiver.url.replace("/hook", "/other")}, name="other")
    rule(hook, other)
    webhook_receiver.stop()
    ticks = Ticks(fabric)
    ticks.tick([port_down("leaf01", 1)])
    ticks.tick([port_down("leaf02", 1)])
    ticks.tick([], [port_down("leaf01", 1)])
    ticks.tick([port_down("leaf03", 1)])
    queued = list(Delivery.objects.filter(channel=hook).order_by("pk"))
    assert len(queued) == 4 and {d.state for d in queued} == {"queued"}
    assert queued[0].attempts >= 1 and "127.0.0.1" in queued[0].detail
    assert all(d.attempts == 0 for d in queued[1:])  # nothing overtakes the head of the queue
    # failing longer than failing_after_s: the channel's condition is an event (a restart loses nothing either:
    # the pump finds the queued rows)
    queue.pump(run=lambda ids: None)
    condition = Event.objects.get(kind="notify_channel_failing", active=True)
    assert condition.details["channel"] == hook.pk and condition.fabric_id == fabric.pk
    for _ in range(3):  # attempts while down: retried, kept, still in order
        queue.pump(run=sync)
    webhook_receiver.start()
    wait_for(lambda: queue.pump(run=sync) and not Delivery.objects.filter(channel=hook, state="queued").exists(),
             what="the queue sent")
    queue.pump(run=sync)
    mine = [r for r in webhook_receiver.received if r.path == "/hook"]
    order = [(r.json()["status"], r.json()["notices"][0]["labels"]["switch"]) for r in mine]
    assert order[:4] == [("firing", "leaf01"), ("firing", "leaf02"), ("resolved", "leaf01"), ("firing", "leaf03")]
    keys = [r.headers["idempotency-key"] for r in mine]
    assert keys[:4] == [d.key for d in queued]
    assert len(mine[:4]) == len(set(keys[:4]))
    assert Attempt.objects.filter(delivery=queued[0], ok=False).count() >= 2  # every attempt kept
    assert not Event.objects.filter(kind="notify_channel_failing", active=True).exists()
    Channel.objects.filter(pk=hook.pk).update(failing_after_s=600)
    # the other channel was told that this one failed, and that it recovered
    def told() -> list[str]:
        queue.wait_idle(30)
        return [b["status"] for b in (r.json() for r in webhook_receiver.received if r.path == "/other")
                if b["notices"][0]["kind"] == "notify_channel_failing"]

    wait_for(lambda: len(told()) >= 2, what="the other channel told of the failure and the recovery")
    assert told() == ["firing", "resolved"]


def test_silence_records_but_does_not_send(webhook_receiver):
    fabric = lab()
    hook = channel("webhook", {"url": webhook_receiver.url})
    rule(hook)
    now = datetime.now(tz=UTC)
    Silence.objects.create(switches=["leaf01"], starts_at=now - timedelta(minutes=1), ends_at=now + timedelta(hours=1),
                           reason="recabling leaf01", author_name="op")
    Silence.objects.create(switches=["leaf02"], starts_at=now + timedelta(hours=1),  # a maintenance window later
                           ends_at=now + timedelta(hours=2), reason="leaf02 firmware", author_name="op")
    ticks = Ticks(fabric)
    ticks.tick([port_down("leaf01", 1), port_down("leaf02", 1)])
    ticks.tick([], [port_down("leaf01", 1)])
    rows = list(Delivery.objects.filter(channel=hook).order_by("pk"))
    assert sorted((d.group.rsplit(":", 1)[1], d.status, d.state) for d in rows) == [
        ("leaf01", "firing", "silenced"), ("leaf01", "resolved", "silenced"), ("leaf02", "firing", "sent")]
    silenced = next(d for d in rows if d.state == "silenced")
    assert silenced.silence.reason == "recabling leaf01" and not silenced.attempt_rows.exists()
    assert [b["notices"][0]["labels"]["switch"] for b in webhook_receiver.bodies()] == ["leaf02"]


def test_repeat_while_active_and_unacknowledged(webhook_receiver):
    fabric = lab()
    hook = channel("webhook", {"url": webhook_receiver.url}, repeat_interval_s=60)
    rule(hook)
    ticks = Ticks(fabric)
    ticks.tick([port_down("leaf01", 1)])
    later = datetime.now(tz=UTC) + timedelta(seconds=61)

    def at_later(ids) -> None:
        for cid in ids:
            queue.deliver_channel(cid, now=later)

    assert queue.pump(now=later, run=at_later)["repeats"] == 1
    assert queue.pump(now=later, run=at_later)["repeats"] == 0  # once per interval
    assert [d.reason for d in Delivery.objects.filter(channel=hook).order_by("pk")] == ["start", "repeat"]
    Event.objects.filter(fabric=fabric).update(acknowledged_at=later)
    assert queue.pump(now=later + timedelta(seconds=120), run=sync)["repeats"] == 0
    assert len(webhook_receiver.received) == 2


def test_rate_limit_holds_the_rest(webhook_receiver):
    fabric = lab()
    hook = channel("webhook", {"url": webhook_receiver.url}, rate_limit_per_min=2)
    rule(hook)
    ticks = Ticks(fabric)
    for s in range(4):
        ticks.tick([port_down(f"leaf0{s}", 1)])
    assert len(webhook_receiver.received) == 2
    held = Delivery.objects.filter(channel=hook, state="queued").order_by("pk")
    assert held.count() == 2 and held[0].next_attempt_at > datetime.now(tz=UTC)


def test_alertmanager_channel_start_refresh_clear(alertmanager):
    fabric = lab()
    am = channel("alertmanager", {"url": alertmanager.url, "resend_s": 10})
    rule(am)
    ticks = Ticks(fabric)
    ticks.tick([port_down("leaf01", 1), port_down("leaf01", 2)])
    alerts = wait_for(lambda: alertmanager.alerts(), what="alerts in Alertmanager")
    assert sorted(a["labels"]["port"] for a in alerts) == ["leaf01 port 1", "leaf01 port 2"]
    assert {a["labels"]["fabric"] for a in alerts} == {"lab"} and {a["labels"]["alertname"] for a in alerts} == {
        "link_down"}
    ends = max(a["endsAt"] for a in alerts)
    later = datetime.now(tz=UTC) + timedelta(seconds=11)
    assert queue.pump(now=later, run=sync)["refreshed"] == 2  # re-posted while active
    assert Attempt.objects.filter(refresh=True, ok=True).count() == 1
    assert max(a["endsAt"] for a in alertmanager.alerts()) > ends
    ticks.tick([], [port_down("leaf01", 1)])
    left = wait_for(lambda: (a := alertmanager.alerts()) and len(a) == 1 and a, what="one alert left")
    assert left[0]["labels"]["port"] == "leaf01 port 2"
    resolved = wait_for(lambda: [b for b in alertmanager.notified.bodies() if b["status"] == "resolved"],
                        what="Alertmanager's resolved notification")
    assert resolved[0]["alerts"][0]["labels"]["port"] == "leaf01 port 1"


def test_queued_rows_survive_a_restart(webhook_receiver):
    """The rows are the queue: what was queued while the receiver was down is sent by the Celery pump of a process
    that starts later (eager here: on its notify thread), nothing kept in memory needed."""
    from ibweb.notify import tasks

    fabric = lab()
    hook = channel("webhook", {"url": webhook_receiver.url})
    rule(hook)
    webhook_receiver.stop()
    ticks = Ticks(fabric)
    ticks.tick([port_down("leaf01", 1)])
    ticks.tick([], [port_down("leaf01", 1)])
    assert Delivery.objects.filter(channel=hook, state="queued").count() == 2
    Delivery.objects.filter(channel=hook).update(next_attempt_at=None)  # a later process: their backoff is over
    webhook_receiver.start()
    assert tasks.pump.apply().get()["channels"] == 1
    queue.wait_idle(30)
    assert [b["status"] for b in webhook_receiver.bodies()] == ["firing", "resolved"]
    assert tasks.deliver.apply(args=[hook.pk]).get() == 0  # nothing sent twice


def test_a_runner_outliving_the_lock_never_sends_a_row_twice(webhook_receiver, monkeypatch):
    """A slow send outlasts the channel's lock and a second runner starts meanwhile (issue 39): each queued row is
    claimed before it is sent, so every message goes once and each row keeps one attempt per send."""
    from django.core.cache import cache

    from ibweb.notify.senders import sender as real_sender

    fabric = lab()
    hook = channel("webhook", {"url": webhook_receiver.url})
    rule(hook)
    webhook_receiver.stop()
    ticks = Ticks(fabric)
    for s in range(3):
        ticks.tick([port_down(f"leaf0{s}", 1)])
    assert Delivery.objects.filter(channel=hook, state="queued").count() == 3
    Delivery.objects.filter(channel=hook).update(next_attempt_at=None)
    webhook_receiver.start()
    nested: list[int] = []

    class Slow:
        """The real webhook sender; during its first send the lock expires and another runner sends the queue."""

        def __init__(self, kind):
            self.real = real_sender(kind)

        def send(self, notices, config):
            if not nested:
                nested.append(1)
                cache.delete(f"notify:channel:{hook.pk}")  # the lock's 300 s passed
                nested.append(queue.deliver_channel(hook.pk))
            return self.real.send(notices, config)

    monkeypatch.setattr(queue, "sender", Slow)
    queue.deliver_channel(hook.pk)
    queue.deliver_channel(hook.pk)  # what the second runner left (if it stopped at the claimed head) goes now
    keys = [r.headers["idempotency-key"] for r in webhook_receiver.received]
    assert sorted(keys) == sorted(Delivery.objects.filter(channel=hook).values_list("key", flat=True))
    rows = Delivery.objects.filter(channel=hook).order_by("pk")
    assert [d.state for d in rows] == ["sent"] * 3
    assert [Attempt.objects.filter(delivery=d, ok=True).count() for d in rows] == [1, 1, 1]
    assert [d.attempts for d in rows] == [rows[0].attempts, 1, 1]
