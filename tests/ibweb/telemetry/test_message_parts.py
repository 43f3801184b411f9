"""A routing event made of parts: the changes it quotes, vanished hosts as objects with their tenants (issue 42).

:mod:`ibweb.telemetry.message_parts` (the producer), :mod:`ibweb.access.alert_objects` (what the event store
keeps) and :class:`ibweb.access.alert_render.AlertRenderer` (the one renderer, of the event store and through
:meth:`ibweb.live.feed.view.FeedView.alert` of the feed): what each view reads of a host gone from the fabric, from
the objects the event carries, fail-closed.
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError

from fabric_engine.telemetry import diff_topology
from fabric_engine.topology import KIND_HOST
from fabric_engine.topology.generate import fat_tree
from ibweb.access import AlertRenderer, Redaction
from ibweb.access.alert_objects import FabricNames, objects, slots
from ibweb.live.feed.view import FeedView
from ibweb.telemetry import message_parts
from ibweb.telemetry.lft_tracker import RoutingTracker
from ibweb.telemetry.message_parts import held, shifted, templated
from tests.support.access_fixtures import without_nodes

F = fat_tree(hosts=8, radix=4, name="parts")
GONE = [int(F.hosts[1]), int(F.hosts[6])]  # one host of each tenant
OWNER = {GONE[0]: "acme", GONE[1]: "globex"}
AFTER = without_nodes(F, GONE)
NAMES = {n: str(F.node_name[n]) for n in GONE}


class Row:
    pk = 7


@pytest.fixture
def tenants_then(monkeypatch):
    """The tenants' partitions as the discovery the hosts were in places them (the database's answer)."""
    monkeypatch.setattr(message_parts, "host_tenants", lambda row, topology, nodes: [
        [OWNER[n]] if n in OWNER and topology is F else [] for n in nodes])


def routing_event(changes: list[dict]) -> dict:
    tracker = RoutingTracker(None)
    tracker.on_topology(F)
    return tracker.on_topology(AFTER, changes)


def test_the_routing_event_quotes_its_changes_as_parts_and_formats_back_to_its_message(tenants_then):
    event = routing_event(held(diff_topology(F, AFTER), F, Row()))
    names = [NAMES[GONE[0]], NAMES[GONE[1]]]
    assert event["message"].startswith(f"re-routed with minhop after {names[0]} vanished; {names[1]} vanished; ")
    gone = {g["slot"]: g for g in event["gone"]}
    labels = [gone[k]["name"] if n == -1 else str(AFTER.node_name[n]) for k, n in enumerate(event["nodes"])]
    assert event["text"].format(*labels) == event["message"]
    assert [(g["name"], g["tenants"]) for g in event["gone"][:2]] == [(names[0], ["acme"]), (names[1], ["globex"])]
    assert all(event["nodes"][k] == -1 for k in gone) and all(g["guid"].startswith("0x") for g in gone.values())


def test_braces_and_words_around_the_changes_stay_literal():
    change = {"kind": "node_vanished", "text": "{0} vanished", "nodes": [-1], "message": "gpu{9} vanished",
              "gone": [{"slot": 0, "name": "gpu{9}", "guid": "0x1", "tenants": []}]}
    parts = templated("after {x} gpu{9} vanished: {y}", [change])
    assert parts["text"] == "after {{x}} {0} vanished: {{y}}" and parts["text"].format("gpu{9}") == \
        "after {x} gpu{9} vanished: {y}"
    assert templated("nothing quoted", [change]) == {} and shifted("{0} - {1}", 2) == "{2} - {3}"


def test_without_the_tenants_then_a_vanished_host_has_none(monkeypatch):
    def down(*args):
        raise DatabaseError("locked")

    monkeypatch.setattr(message_parts, "host_tenants", down)
    event = routing_event(held(diff_topology(F, AFTER), F, Row()))
    assert event["gone"] and all(g["tenants"] == [] for g in event["gone"])


VIEWS = {"all": None, "acme": frozenset({"acme", "Acme"}), "globex": frozenset({"globex"}), "none": frozenset()}


def reads(view: str, name: str) -> str:
    owner = next(OWNER[n] for n in GONE if NAMES[n] == name)
    return name if view == "all" or (VIEWS[view] and owner in VIEWS[view]) else "hidden node"


def test_the_feed_and_the_store_name_a_vanished_host_to_its_tenants_then_only(tenants_then):
    from ibweb.events.models import Event
    from ibweb.events.visibility import redact

    event = routing_event(held(diff_topology(F, AFTER), F, Row()))
    hosts = objects(event, FabricNames(AFTER))
    assert {tuple(h[1:2]) + tuple(h[3]) for h in hosts if h[0] == -1} == {(NAMES[n], OWNER[n]) for n in GONE}
    parts = {"text": event["text"], "slots": slots(event, FabricNames(AFTER))}
    stored = Event(kind="routing", message=event["message"], hosts=hosts, jobs=[], resolved=True, parts=parts)
    legacy = Event(kind="routing", message=event["message"], hosts=hosts, jobs=[], resolved=True)
    for view, tenants in VIEWS.items():
        expected = event["message"]
        for n in GONE:
            expected = expected.replace(NAMES[n], reads(view, NAMES[n]))
        hidden = None if tenants is None else AFTER.kind == KIND_HOST  # no present host named (switches are)
        out = FeedView(view, tenants, hidden, AFTER).alert(event)
        assert out["message"] == expected, view
        for n in GONE:
            assert (NAMES[n] in out["message"]) == (reads(view, NAMES[n]) == NAMES[n]), (view, out["message"])
            assert (NAMES[n] in repr(out["gone"])) == (reads(view, NAMES[n]) == NAMES[n]), view
        renderer = AlertRenderer(Redaction(tenants, None if tenants is None else frozenset()))
        assert redact(stored, renderer)["message"] == expected, view
        message = redact(legacy, renderer)["message"]  # stored before parts: relabelled by its objects
        for n in GONE:
            assert (NAMES[n] in message) == (reads(view, NAMES[n]) == NAMES[n]), (view, message)


@pytest.mark.parametrize("gone", [None, "acme", [{"slot": "0", "name": "x"}], [{"slot": 0, "tenants": "acme"}],
                                  [{"slot": 0, "name": "gpu9", "tenants": "acme"}], [7]])
def test_malformed_objects_read_as_hidden_node(gone):
    alert = {"kind": "routing", "text": "after {0} vanished", "nodes": [-1], "message": "after gpu9 vanished",
             "gone": gone}
    fv = FeedView("t", frozenset({"acme"}), AFTER.kind == KIND_HOST, AFTER)
    out = fv.alert(alert)
    assert out["message"] == "after hidden node vanished" and "gpu9" not in repr(out)
    from ibweb.events.models import Event
    from ibweb.events.visibility import redact

    names = FabricNames(AFTER)  # the event store renders it from the parts it keeps, never parsing the message
    stored = Event(kind="routing", message=alert["message"], hosts=objects(alert, names), resolved=True,
                   parts={"text": alert["text"], "slots": slots(alert, names)})
    assert redact(stored, AlertRenderer(Redaction(frozenset({"acme"}), frozenset())))["message"] == \
        "after hidden node vanished"


def test_a_switch_gone_from_the_fabric_is_named_to_every_view():
    alert = {"kind": "routing", "text": "after {0} vanished", "nodes": [-1], "message": "after spine9 vanished",
             "gone": [{"slot": 0, "name": "spine9", "guid": "0x9", "tenants": [], "switch": True}]}
    for tenants in (frozenset(), frozenset({"acme"})):
        assert FeedView("t", tenants, AFTER.kind == KIND_HOST, AFTER).alert(alert)["message"] == alert["message"]
    assert objects(alert, FabricNames(AFTER)) == []  # fabric-wide: no host to hide
    assert slots(alert, FabricNames(AFTER)) == ["spine9"]
