"""The events API pages at most MAX_LIMIT events whatever ``limit`` asks, and redacts a page's messages with
one compiled pattern per set of hidden names, not one per event (issue 14)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

from datetime import UTC, datetime, timedelta

import pytest
from django.test import override_settings

from ibweb.access import alert_render
from ibweb.access.relabel import names_pattern
from ibweb.events.api import MAX_LIMIT
from ibweb.events.models import Event
from ibweb.tenancy.inventory import fabric_inventory
from tests.support.tenancy_fixtures import fabric  # noqa: F401

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
HOST = "gpu0003"


@pytest.fixture
def many(fabric):
    fabric_inventory(fabric)  # published, as the fabric's engine does (a read never builds it)
    n = MAX_LIMIT + 20
    Event.objects.bulk_create([
        Event(fabric=fabric, key=f"errors|port={HOST} port 1|{k}", kind="errors", severity="warning",
              object_type="port", object_id=f"{HOST} port 1", node=HOST, hosts=[[3, HOST, "0xb83fd20300000040"]],
              message=f"{HOST} port 1: SymbolErrorCounter at {k}/min", first_seen=T0 + timedelta(seconds=k),
              last_seen=T0 + timedelta(seconds=k)) for k in range(n)])
    return n


@override_settings(IBWEB_PUBLIC_READ=True)
def test_a_huge_limit_is_capped(client, many):
    body = client.get("/api/fabrics/fabrics/tiny/events/", {"limit": 10 ** 9}).json()
    assert body["count"] == many
    assert len(body["results"]) == MAX_LIMIT and body["next"]
    assert HOST not in str(body)


@override_settings(IBWEB_PUBLIC_READ=True)
def test_a_text_search_compiles_the_hidden_names_once(client, many, monkeypatch):
    calls = []

    def counting(names):
        calls.append(sorted(names))
        return names_pattern(names)

    monkeypatch.setattr(alert_render, "names_pattern", counting)  # the one renderer's, which the events page uses
    body = client.get("/api/fabrics/fabrics/tiny/events/", {"q": "SymbolErrorCounter", "limit": 100}).json()
    assert body["count"] == many and len(body["results"]) == 100
    assert HOST not in str(body)
    assert 1 <= len(calls) <= 2, len(calls)
