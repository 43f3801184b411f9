"""A receiver down for several minutes, then back (issue 39, "nothing lost"): every message reaches it once it is
back, in the order the events happened, each with its idempotency key; the only repeat is a message the receiver
got while its answer was lost, under the same key. Minutes pass on the notifications' clock
(:mod:`ibweb.notify.clock`), not in sleeps; the receiver is a real process (``receiver_process.py``), absent while
down (connections refused), then started on the same port."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ibweb.events.models import Event
from ibweb.notify import clock, queue
from ibweb.notify.models import Delivery
from tests.support.notify_servers import free_port
from tests.support.processes import stop_process

from .helpers import Ticks, channel, lab, port_down, rule

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[3]
STEP_S = 5.0


@pytest.fixture
def driven():
    """The notifications' clock, moved only by the test."""
    c = clock.DrivenClock()
    clock.use(c)
    yield c
    clock.reset()


def start_receiver(port: int, journal: Path, hang: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "tests.ibweb.notify.receiver_process", str(port), str(journal),
                             "--hang", str(hang)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready", "the receiver process did not start"
    return proc


def sync(ids) -> None:
    for cid in ids:
        queue.deliver_channel(cid)


def test_receiver_down_for_minutes_then_back_gets_everything_once_in_order(driven, tmp_path):
    port, journal = free_port(), tmp_path / "received.jsonl"
    fabric = lab()
    hook = channel("webhook", {"url": f"http://127.0.0.1:{port}/hook", "timeout_s": 1}, failing_after_s=180,
                   rate_limit_per_min=0)
    rule(hook)
    ticks = Ticks(fabric)
    # what happens while the receiver is down, minute by minute (steps of 5 s on the driven clock)
    plan = {0: ([port_down("leaf01", p) for p in (1, 2, 3)], []), 12: ([port_down("leaf02", 1)], []),
            24: ([], [port_down("leaf01", p) for p in (1, 2, 3)]), 36: ([port_down("leaf03", 1)], []),
            48: ([], [port_down("leaf02", 1)]), 60: ([port_down("leaf04", 1)], [])}
    back_at = 72  # six minutes down
    receiver = None
    try:
        step = 0
        while True:
            if step in plan:
                ticks.tick(*plan[step])
            if step == back_at:
                receiver = start_receiver(port, journal, hang=1)  # its first answer is lost: a timeout
                assert Event.objects.filter(kind="notify_channel_failing", active=True).exists(), \
                    "failing longer than failing_after_s is a condition"
            queue.pump(run=sync)
            queue.wait_idle(30)
            if step > back_at and not Delivery.objects.filter(channel=hook, state="queued").exists():
                break
            assert step < 720, "the queue never emptied within an hour of driven time"
            driven.advance(STEP_S)
            step += 1
        # while down: every attempt kept, nothing overtook the head of the queue
        rows = list(Delivery.objects.filter(channel=hook).order_by("pk"))
        assert len(rows) == 6 and {d.state for d in rows} == {"sent"}
        head_failures = list(rows[0].attempt_rows.filter(ok=False).values_list("detail", flat=True))
        assert len(head_failures) >= 7 and any("127.0.0.1" in d for d in head_failures)
        assert step * STEP_S >= 6 * 60  # minutes of outage, on the driven clock
        got = [json.loads(line) for line in journal.read_text().splitlines()]
        keys = [g["key"] for g in got]
        first_of = {}
        for i, key in enumerate(keys):
            first_of.setdefault(key, i)
        unique = [got[i] for i in sorted(first_of.values())]
        # nothing lost, in order, each with its delivery's idempotency key
        assert [g["key"] for g in unique] == [d.key for d in rows]
        order = [(g["body"]["status"], g["body"]["notices"][0]["labels"]["switch"], len(g["body"]["notices"]))
                 for g in unique]
        assert order == [("firing", "leaf01", 3), ("firing", "leaf02", 1), ("resolved", "leaf01", 3),
                         ("firing", "leaf03", 1), ("resolved", "leaf02", 1), ("firing", "leaf04", 1)]
        # nothing duplicated beyond the idempotency key: the one repeat is the message whose answer was lost
        assert len(got) == len(unique) + 1 and keys.count(rows[0].key) == 2
        assert got[0]["body"] == got[1]["body"]
        # the channel's condition closed when a send went through again
        failing = Event.objects.get(kind="notify_channel_failing")
        assert not failing.active and failing.cleared_at is not None
    finally:
        stop_process(receiver)

