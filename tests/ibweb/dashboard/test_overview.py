"""The fabrics overview: engine state, the newest frame header, hottest link named as the viewer may see it,
active alerts by the events' tenant rules (issue 18)."""

import asyncio
import time

import pytest
from rest_framework.test import APIClient

from ibweb.events.models import Event
from ibweb.live.feed.frame_store import set_starting, store_newest
from ibweb.runtime import record
from tests.support.access_fixtures import build, public_read
from tests.support.engine_fixtures import published

pytestmark = pytest.mark.django_db(transaction=True)


def cards(user) -> dict[str, dict]:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    answer = client.get("/api/fabrics/overview/")
    assert answer.status_code == 200, answer.content
    return {c["slug"]: c for c in answer.json()["fabrics"]}


def summary(fabric_id: int, **header) -> None:
    """Store a frame header as the runner does (with no per-link arrays)."""
    header = {"seq": 9, "t": time.time(), "tick_s": 1.0, **header}
    asyncio.run(store_newest(fabric_id, header["seq"], header, b""))


def test_the_runner_frame_header_makes_the_card_live():
    shared = build()
    runner = published(shared.fabric)
    assert cards(shared.users["operator"])["shared"]["state"] == "idle", "started, no frame yet"
    seq = asyncio.run(runner.tick())
    card = cards(shared.users["operator"])["shared"]
    assert card["state"] == "live" and card["seq"] == seq and card["hosts"] == 16
    assert card["throughput_gbps"] is not None and card["congested_links"] is not None
    assert card["hottest"]["label"] and " → " in card["hottest"]["label"]


def test_starting_stale_and_idle_states():
    shared = build()
    asyncio.run(set_starting(shared.fabric.pk, {"task": "engine", "fraction": 0.4, "message": "routing"}))
    card = cards(shared.users["operator"])["shared"]
    assert card["state"] == "starting" and card["progress"] == {"fraction": 0.4, "message": "routing"}
    asyncio.run(set_starting(shared.fabric.pk, None))
    summary(shared.fabric.pk, t=time.time() - 60, totals={"hosts": 16})
    assert cards(shared.users["operator"])["shared"]["state"] == "stale"
    assert cards(shared.users["operator"])["lab"]["state"] == "idle"


def test_hottest_link_and_alerts_follow_the_viewer():
    shared = build()
    published(shared.fabric)
    f = record.fabric(shared.fabric.pk, record.head(shared.fabric.pk))
    globex = shared.hosts["globex"][0]
    d = int(f.out_link(globex, 1))  # globex's host -> its leaf
    summary(shared.fabric.pk, totals={"throughput_gbps": 5.0, "hottest": {"link": d, "util": 0.9},
                                      "congested_links": 1})
    name = str(f.node_name[globex])
    assert cards(shared.users["operator"])["shared"]["hottest"]["label"].startswith(f"{name}:1 → ")
    for role in ("acme-user", "viewer"):
        label = cards(shared.users[role])["shared"]["hottest"]["label"]
        assert label.startswith(f"host-{globex}:1 → ") and name not in label, role
    with public_read(True):
        assert cards(None)["shared"]["hottest"]["label"].startswith(f"host-{globex}:1")
    open_events = Event.objects.filter(fabric=shared.fabric, active=True)
    assert open_events.count() >= 2
    everything = cards(shared.users["operator"])["shared"]["alerts"]
    assert sum(everything.values()) == open_events.count()
    wide = cards(shared.users["viewer"])["shared"]["alerts"]
    assert sum(wide.values()) == open_events.filter(tenant__isnull=True, job="").count() < sum(everything.values())


def test_overview_page_lists_a_card_per_fabric(client):
    shared = build()
    client.force_login(shared.users["acme-user"])
    body = client.get("/").content.decode()
    assert body.count('class="card fabric-card"') == 2 and 'data-slug="shared"' in body and "Globex" not in body
