"""With Celery workers the engine's process only sends a task per write of the events recorder (the event ids):
the workers dispatch it, one at a time per fabric, and a task run late, twice or out of order sends each start and
clear once (issue 39: notification work never slows the engine's tick)."""

from __future__ import annotations

import threading

import pytest

from ibweb.notify import dispatcher, queue, tasks
from ibweb.notify.models import Delivery

from .helpers import Ticks, channel, lab, port_down, rule

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def workers(settings, monkeypatch):
    """Celery workers configured: the tasks the engine's process sends are kept (with the thread that sent them)
    to be run by the test as a worker would, and a channel's queue is sent at once."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent: list[tuple[int, list, list]] = []
    threads: set[str] = set()

    def delay(fabric_id, opened, closed):
        threads.add(threading.current_thread().name)
        sent.append((fabric_id, opened, closed))

    monkeypatch.setattr(tasks.dispatch_events, "delay", delay)
    monkeypatch.setattr(queue, "kick", lambda ids: [queue.deliver_channel(i) for i in ids])
    return sent, threads


def run(batch) -> int:
    return tasks.dispatch_events.apply(args=batch, throw=True).get()


def test_the_engine_process_only_sends_a_task(workers, webhook_receiver):
    sent, threads = workers
    fabric = lab()
    rule(channel("webhook", {"url": webhook_receiver.url}))
    ticks = Ticks(fabric)
    ticks.tick([port_down("leaf01", 1), port_down("leaf01", 2)])
    ticks.tick([], [port_down("leaf01", 1)])
    assert not Delivery.objects.exists()  # nothing dispatched in this process
    assert [(len(o), len(c)) for _, o, c in sent] == [(2, 0), (0, 1)]
    assert threads == {threading.current_thread().name}  # sent from the recorder's own call, no thread of its own


def test_tasks_run_late_twice_or_out_of_order_send_each_start_and_clear_once(workers, webhook_receiver):
    sent, _ = workers
    fabric = lab()
    rule(channel("webhook", {"url": webhook_receiver.url}))
    ticks = Ticks(fabric)
    ticks.tick([port_down("leaf01", p) for p in (1, 2, 3)])  # A, B and D
    ticks.tick([port_down("leaf02", 1)], [port_down("leaf01", 1)])  # C opens, A closes
    first, second = sent[0], sent[1]
    assert run(second) == 1  # before the first: A's start was never sent, so neither is its clear; C has opened
    bodies = webhook_receiver.bodies()
    assert [[n["labels"]["port"] for n in b["notices"]] for b in bodies] == [["leaf02 port 1"]]
    run(first)  # late: A closed since (not started), B and D still open (started, one message)
    run(first)  # twice
    _, b_pk, _ = first[1]
    run((fabric.pk, [b_pk], []))  # B alone (another message): its start was made already
    run(second)
    bodies = webhook_receiver.bodies()
    assert [[(n["labels"]["port"], n["state"]) for n in b["notices"]] for b in bodies] == [
        [("leaf02 port 1", "firing")], [("leaf01 port 2", "firing"), ("leaf01 port 3", "firing")]]
    ticks.tick([], [port_down("leaf01", 2)])
    run(sent[-1])
    run(sent[-1])
    states = [(n["labels"]["port"], n["state"]) for b in webhook_receiver.bodies() for n in b["notices"]]
    assert states[3:] == [("leaf01 port 2", "resolved")]


def test_a_fabric_dispatches_one_at_a_time(workers, webhook_receiver, monkeypatch):
    """A worker finding another dispatching the fabric's events waits for it; past its wait, the task is retried."""
    sent, _ = workers
    fabric = lab()
    rule(channel("webhook", {"url": webhook_receiver.url}))
    Ticks(fabric).tick([port_down("leaf01", 1)])
    inside = threading.Event()
    release = threading.Event()
    real = dispatcher.dispatch
    running = []

    def slow(*args, **kwargs):
        running.append(1)
        assert len(running) == 1, "two dispatches of one fabric at once"
        inside.set()
        release.wait(10)
        try:
            return real(*args, **kwargs)
        finally:
            running.pop()

    monkeypatch.setattr(dispatcher, "dispatch", slow)
    holder = threading.Thread(target=dispatcher.dispatch_in_turn, args=sent[0])
    holder.start()
    assert inside.wait(10)
    assert dispatcher.dispatch_in_turn(*sent[0], wait_s=0.2) is None  # its turn did not come
    monkeypatch.setattr(dispatcher, "TURN_WAIT_S", 0.2)
    retried = []

    def retry(countdown):
        retried.append(countdown)
        return RuntimeError("retried")

    monkeypatch.setattr(tasks.dispatch_events, "retry", retry)
    with pytest.raises(RuntimeError, match="retried"):
        tasks.dispatch_events.run(*sent[0])
    assert retried == [1.0]
    release.set()
    holder.join(10)
    assert len(webhook_receiver.bodies()) == 0  # the holder queued it; sent by the next kick
    assert Delivery.objects.filter(state="queued").count() == 1
