"""Events about hosts that left the fabric keep their names hidden below ``ALL`` (issue 14, fail-closed).

``node_vanished`` and ``link_down`` name a node that is no longer in the fabric's discovery: the feed calls
it ``hidden node``; the event store must too, for anonymous visitors and other tenants' users.
"""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

from datetime import UTC, datetime

import pytest
from django.test import override_settings

from fabric_engine.scenario import build_fabric
from ibweb.events.recorder import EventRecorder
from tests.support.tenancy_fixtures import SPEC, fabric, partitions, tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db
TINY = build_fabric(SPEC["topology"])
SWITCH = str(TINY.node_name[TINY.switches[0]])
GONE = "gpu-gone-0042"
VANISHED = {"kind": "node_vanished", "severity": "critical", "node": GONE, "guid": "0xb83fd20300009990",
            "message": f"{GONE} vanished"}
DOWN = {"kind": "link_down", "severity": "critical", "a": f"{GONE} port 1", "b": f"{SWITCH} port 3", "link": -1,
        "message": f"link down: {GONE} port 1 - {SWITCH} port 3"}


@pytest.fixture
def gone_events(fabric, partitions):
    EventRecorder(fabric.pk).apply([VANISHED, DOWN], [], seq=1, t=datetime(2026, 5, 1, tzinfo=UTC).timestamp(),
                                   first=True, fabric=TINY)


def events(client) -> list[dict]:
    return client.get("/api/fabrics/fabrics/tiny/events/").json()["results"]


def assert_hidden(rows: list[dict]) -> None:
    assert {r["kind"] for r in rows} == {"node_vanished", "link_down"}
    assert GONE not in str(rows)
    down = next(r for r in rows if r["kind"] == "link_down")
    assert down["message"] == f"link down: hidden node port 1 - {SWITCH} port 3"  # the switch keeps its name


@override_settings(IBWEB_PUBLIC_READ=True)
def test_anonymous_visitors_never_read_the_name_of_a_host_gone_from_the_fabric(client, gone_events):
    assert_hidden(events(client))


def test_other_tenants_never_read_the_name_of_a_host_gone_from_the_fabric(client, gone_events, tenants):
    client.force_login(user_in(None, "gina", tenants[1]))
    assert_hidden(events(client))


def test_operators_read_it(client, gone_events):
    client.force_login(user_in("operator", "olga"))
    assert GONE in str(events(client))
