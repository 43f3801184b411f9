"""The event recorder across restarts and failed writes (issue 35): wall time, never sequence numbers; one bad
row never drops the others; what fails is retried, bounded, logged and counted; a lost clear is found."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import logging
from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.db import IntegrityError, OperationalError

from ibweb.events import health
from ibweb.events.durations import human_duration
from ibweb.events.models import Event
from ibweb.events.recorder import MAX_ATTEMPTS, RECONCILE_S, EventRecorder
from tests.support.tenancy_fixtures import SPEC, fabric  # noqa: F401

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
DOWN = {"kind": "link_down", "severity": "critical", "condition": True, "a": "leaf03 port 5", "b": "spine01 port 3",
        "guids": ["0x0000000000000a03", "0x0000000000000b01"], "ports": [5, 3], "link": -1,
        "message": "link down: leaf03 port 5 - spine01 port 3"}
UP = {"kind": "link_up", "severity": "info", "a": "leaf03 port 5", "b": "spine01 port 3", "link": 7,
      "message": "link up: leaf03 port 5 - spine01 port 3"}


def at(seconds: float) -> float:
    return (T0 + timedelta(seconds=seconds)).timestamp()


def port_alert(n: int) -> dict:
    return {"kind": "errors", "severity": "warning", "port": f"leaf{n:02d} port 1", "counter": "SymbolErrorCounter",
            "link": n, "message": f"leaf{n:02d} port 1: symbol errors"}


@pytest.fixture(autouse=True)
def fresh_counts(fabric):
    cache.delete_many([f"ibweb:events:writes:{w}:{fabric.pk}" for w in ("failed", "dropped")])


def test_a_restart_mid_outage_keeps_one_event_timed_by_the_clock_whatever_the_sequence(fabric):
    """The reported case: seq 500 raised it, the new process numbers from 1, the relink clears it at seq 30."""
    EventRecorder(fabric.pk).apply([DOWN], [], seq=500, t=at(0), first=True)
    after = EventRecorder(fabric.pk)  # the restarted server: a new recorder, its engine numbering from 1
    after.apply([DOWN], [], seq=1, t=at(300), first=True)
    assert Event.objects.get().raised_at == T0, "raised again by the new engine: the same stretch goes on"
    after.apply([UP], [DOWN], seq=30, t=at(727))  # relinked: the condition clears, the cable comes back
    down = Event.objects.get(kind="link_down")
    assert not down.active and (down.first_seen, down.cleared_at) == (T0, T0 + timedelta(seconds=727))
    assert down.count == 727 and down.duration_s(T0 + timedelta(days=1)) == 727.0
    assert human_duration(down.duration_s(T0)) == "12 min 7 s"
    assert Event.objects.get(kind="link_up").active, "the link_up of the same tick is stored too"
    assert after.pending == 0 and health.write_failures(fabric.pk) == {"failed": 0, "dropped": 0}


def test_the_first_tick_after_a_restart_closes_what_it_no_longer_raises_even_numbered_1(fabric):
    EventRecorder(fabric.pk).apply([DOWN, port_alert(1)], [], seq=900, t=at(0), first=True)
    EventRecorder(fabric.pk).apply([port_alert(1)], [], seq=1, t=at(60), first=True)
    ghost = Event.objects.get(kind="link_down")
    assert not ghost.active and ghost.cleared_at == T0 + timedelta(seconds=60) and ghost.count == 60
    assert Event.objects.get(kind="errors").active


def test_a_leader_that_leads_again_reads_what_the_other_one_wrote_meanwhile(fabric):
    a, b = EventRecorder(fabric.pk), EventRecorder(fabric.pk)  # the recorders of two engine processes
    a.apply([DOWN], [], seq=1, t=at(0), first=True)
    b.apply([DOWN, port_alert(1)], [], seq=2, t=at(10), first=True)  # b takes over
    b.apply([], [DOWN], seq=3, t=at(20))
    a.apply([port_alert(1)], [], seq=4, t=at(30), first=True)  # a leads again
    assert Event.objects.filter(kind="errors").count() == 1, "no second event for what b opened"
    down = Event.objects.get(kind="link_down")
    assert (down.active, down.cleared_at, down.count) == (False, T0 + timedelta(seconds=20), 20)


def test_a_clock_set_back_never_makes_a_negative_count_or_duration(fabric):
    rec = EventRecorder(fabric.pk)
    rec.apply([DOWN], [], seq=1, t=at(100), first=True)
    rec.apply([], [DOWN], seq=2, t=at(40))
    event = Event.objects.get()
    assert (event.count, event.cleared_at, event.duration_s(T0)) == (1, T0 + timedelta(seconds=100), 0.0)


def test_one_row_that_fails_never_drops_the_others_and_is_written_on_a_later_tick(fabric, monkeypatch, caplog):
    rec = EventRecorder(fabric.pk)
    rec.apply([port_alert(n) for n in range(3)], [], seq=1, t=at(0), first=True)
    bad = "errors|port=leaf01 port 1|counter=SymbolErrorCounter|link=1"
    close = EventRecorder._close

    def refuse_one(self, ops):
        if any(op.key == bad for op in ops):
            raise IntegrityError("CHECK constraint failed: count")
        return close(self, ops)

    monkeypatch.setattr(EventRecorder, "_close", refuse_one)
    with caplog.at_level(logging.WARNING, logger="ibweb.events"):
        rec.apply([DOWN], [port_alert(n) for n in range(3)], seq=2, t=at(10))
    assert set(Event.objects.filter(active=True).values_list("kind", "link")) == {("errors", 1), ("link_down", None)}
    assert rec.pending == 1 and bad in caplog.text, "the failed write is logged with the event's key"
    assert health.write_failures(fabric.pk)["failed"] == 1
    monkeypatch.setattr(EventRecorder, "_close", close)
    rec._retry_at = 0.0  # due (the back-off is a second after the first failure)
    rec.on_frame({"t": at(11), "alerts": [DOWN]})
    event = Event.objects.get(key=bad)
    assert not event.active and event.cleared_at == T0 + timedelta(seconds=10), "closed at the tick that cleared it"
    assert rec.pending == 0


def test_a_database_that_cannot_be_read_keeps_the_signal_to_retry(fabric, monkeypatch):
    rec = EventRecorder(fabric.pk)
    load = EventRecorder._load

    def down(self):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(EventRecorder, "_load", down)
    rec.apply([DOWN], [], seq=1, t=at(0), first=True)
    assert rec.pending == 2 and not Event.objects.exists()  # the first tick's sweep, and the raise
    monkeypatch.setattr(EventRecorder, "_load", load)
    rec.apply([UP], [], seq=2, t=at(5))  # the next signal writes what waited first, in order
    assert Event.objects.get(kind="link_down").first_seen == T0 and Event.objects.filter(active=True).count() == 2
    assert rec.pending == 0


def test_a_write_that_keeps_failing_is_given_up_after_its_attempts_logged_and_counted(fabric, monkeypatch, caplog):
    rec = EventRecorder(fabric.pk)

    def refuse(self, ops):
        raise IntegrityError("refused")

    monkeypatch.setattr(EventRecorder, "_raise", refuse)
    with caplog.at_level(logging.WARNING, logger="ibweb.events"):
        rec.apply([DOWN], [], seq=1, t=at(0), first=True)
        for k in range(MAX_ATTEMPTS + 2):
            rec._retry_at = 0.0
            rec.on_frame({"t": at(k + 1), "alerts": [DOWN]})
    assert rec.pending == 0 and not Event.objects.exists()
    assert health.write_failures(fabric.pk) == {"failed": MAX_ATTEMPTS, "dropped": 1}
    assert "given up after" in caplog.text and "link_down|" in caplog.text


def test_an_open_event_whose_clear_was_lost_is_closed_by_a_newer_frame(fabric):
    rec = EventRecorder(fabric.pk)
    rec.apply([DOWN, port_alert(1)], [], seq=1, t=at(0), first=True)
    rec.on_frame({"t": at(40), "alerts": [port_alert(1)]})
    assert Event.objects.filter(active=True).count() == 2, "checked every RECONCILE_S only"
    rec._reconciled -= RECONCILE_S
    rec.on_frame({"t": at(-5), "alerts": []})  # older than the newest signal: says nothing
    assert Event.objects.filter(active=True).count() == 2
    rec.on_frame({"t": at(40), "alerts": [port_alert(1)]})
    ghost = Event.objects.get(kind="link_down")
    assert not ghost.active and ghost.cleared_at == T0 + timedelta(seconds=40)
    assert Event.objects.get(kind="errors").active


def test_durations_read_in_human_units():
    assert [human_duration(s) for s in (0.2, 59.9, 247, 7380, 90000)] == ["< 1 s", "59 s", "4 min 7 s", "2 h 3 min",
                                                                         "1 d 1 h"]
    with pytest.raises(ValueError, match="finite number of seconds"):
        human_duration(-1)


def test_the_events_api_and_page_show_durations(client, fabric, django_user_model):
    from django.contrib.auth.models import Permission

    rec = EventRecorder(fabric.pk)
    rec.apply([DOWN], [], seq=1, t=at(0), first=True)
    rec.apply([], [DOWN], seq=2, t=at(247))
    user = django_user_model.objects.create_user("op", password="pw")
    user.user_permissions.add(Permission.objects.get(codename="view_all_tenants"))
    client.force_login(user)
    [row] = client.get("/api/fabrics/fabrics/tiny/events/").json()["results"]
    assert (row["duration_s"], row["count"], row["active"]) == (247.0, 247, False)
    page = client.get("/fabrics/tiny/events/").content.decode()
    assert "4 min 7 s" in page and 'data-duration-s="247.0"' in page
    health.count_failure(fabric.pk, 2, 1)
    page = client.get("/fabrics/tiny/events/").content.decode()
    assert "2 event writes of this fabric failed" in page and "1 given up" in page
    metrics = client.get("/metrics").content.decode()
    assert 'ibweb_event_write_failures_total{fabric="tiny"} 2' in metrics
    assert 'ibweb_event_writes_dropped_total{fabric="tiny"} 1' in metrics
