"""Issue 26, item 4, through the push API: samples from the future are refused (400 naming the field); what is
stored is checked again before it becomes a rate, and a held read is an event whose host stays hidden."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from fabric_engine.telemetry import CounterSamples
from ibweb.access import AlertRenderer, Redaction
from ibweb.events.models import Event
from ibweb.events.recorder import EventRecorder
from ibweb.events.visibility import redact
from ibweb.live.engine.runner import FabricRunner
from ibweb.telemetry import store
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.models import Sweep
from tests.support.push_client import push_client

DATA = Path(__file__).parents[2] / "data" / "telemetry"
URL = "/api/telemetry/fabrics/pushed/samples/"
LINKINFO = (DATA / "iblinkinfo.txt").read_text()  # 4x SDR: 8 Gb/s per direction
THREE_YEARS = 3 * 365 * 86400.0
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client():
    yield from push_client()


def gpu8(t: float, words: int) -> dict:
    """A read of gpu0008 port 1 (LID 14), whose cable goes to leaf04 port 2."""
    return {"lid": 14, "port": 1, "t": t, "extended": True, "counters": {"PortXmitData": words}}


def push(client, *samples, linkinfo: bool = False):
    body = {"samples": list(samples), **({"iblinkinfo": LINKINFO} if linkinfo else {})}
    return client.post(URL, body, format="json")


def state_of(client, now: float):
    """The fabric's state from its two newest stored sweeps, as its engine computes it at ``now``."""
    runner = FabricRunner(client.config.fabric)
    asyncio.run(runner.start())
    prev, newest = store.sweeps(client.config.fabric_id)
    return runner.source, runner.source.state(prev, newest, now, runner.seq)


def out_link(source) -> int:
    f = source.fabric
    return int(f.out_link(f.node("gpu0008"), 1))


def test_a_sample_three_years_ahead_is_a_400_naming_the_field(client):
    now = time.time()
    r = push(client, gpu8(now, 1000), gpu8(now + THREE_YEARS, 2000), linkinfo=True)
    assert r.status_code == 400
    (message,) = r.json()["samples"]
    assert message.startswith(f"samples[1]: t: {now + THREE_YEARS!r} is ")
    assert "s ahead of this server's clock (at most 300 s)" in message
    assert not Sweep.objects.filter(config=client.config).exists()
    assert store.sweeps(client.config.fabric_id) == (None, None)
    # a collector's clock a minute ahead is within the margin
    assert push(client, gpu8(now + 60.0, 1000), linkinfo=True).status_code == 201


def test_a_normal_pushed_pair_gives_its_rate(client):
    now = time.time()
    assert push(client, gpu8(now - 10.0, 5_000), linkinfo=True).status_code == 201
    assert push(client, gpu8(now, 5_000 + 250_000_000)).status_code == 201  # 8e9 bits in 10 s
    source, state = state_of(client, now + 0.5)
    d = out_link(source)
    assert state.rate_gbps[d] == pytest.approx(0.8, rel=1e-6)
    assert not [a for a in state.alerts if a["kind"] == "counter_suspect"]


def test_a_pushed_64_bit_counter_1000_words_lower_is_held_and_stored_as_an_event_hiding_the_host(client):
    now = time.time()
    old = 1_667_000_001_000
    assert push(client, gpu8(now - 1.0, old), linkinfo=True).status_code == 201
    assert push(client, gpu8(now, old - 1000)).status_code == 201  # accepted: the engine decides what it means
    source, state = state_of(client, now + 0.5)
    d = out_link(source)
    assert state.rate_gbps[d] == 0.0 and state.rate_gbps.max() < 8.0  # not 53,344 Gb/s, nor 2**64 - old + new
    (alert,) = [a for a in state.alerts if a["kind"] == "counter_suspect"]
    assert (alert["port"], alert["counter"], alert["reason"], alert["reset"]) == \
        ("gpu0008 port 1", "PortXmitData", "over_capacity", True)
    assert alert["rate_gbps"] == pytest.approx(53_344.0)
    # the events app stores it, one event per port and counter, the host listed so that other views hide it
    EventRecorder(client.config.fabric_id).apply(state.alerts, [], seq=1, t=now, first=True, fabric=source.fabric)
    event = Event.objects.get(kind="counter_suspect")
    assert (event.severity, event.object_type, event.link) == ("warning", "port", d)
    assert event.key == f"counter_suspect|port=gpu0008 port 1|counter=PortXmitData|link={d}"
    host = int(source.fabric.node("gpu0008"))
    assert [h[:2] for h in event.hosts] == [[host, "gpu0008"]]
    shown = redact(event, AlertRenderer(Redaction(frozenset(), frozenset())))  # a view that names no host
    assert "gpu0008" not in shown["message"] and shown["message"].startswith(f"host-{host} port 1: PortXmitData held")
    assert "53,344 Gb/s" in shown["message"]


def test_a_stored_sample_from_the_future_is_held_by_the_engine(client):
    """Stored before the push API checked it (or from a drop directory's file times): held again in observe."""
    now = time.time()
    assert push(client, gpu8(now - 10.0, 1_000), linkinfo=True).status_code == 201
    sweep = Sweep.objects.create(config=client.config, source=CollectorSource.PUSH)
    ahead = CounterSamples.from_records([gpu8(now + THREE_YEARS, 1_000 + 250_000_000)])
    store.put_sweep(client.config.fabric_id, sweep.pk, now, LINKINFO, ahead, [], [])
    source, state = state_of(client, now + 0.5)
    d = out_link(source)
    assert state.rate_gbps[d] == 0.0
    (alert,) = [a for a in state.alerts if a["kind"] == "counter_suspect"]
    assert alert["reason"] == "future" and alert["read_at"] == pytest.approx(now + THREE_YEARS, abs=1e-3)
