"""The one alert renderer (:mod:`ibweb.access.alert_render`): its rules, and the feed and the event store reading an
alert alike for the same view (ibweb issue 36, item 2)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.topology import KIND_HOST
from fabric_engine.topology.generate import fat_tree
from ibweb.access import HIDDEN_NODE, AlertRenderer, Redaction
from ibweb.access.alert_objects import FabricNames, objects, slots
from ibweb.events.facts import fact_of
from ibweb.events.models import Event
from ibweb.events.visibility import redact
from ibweb.live.feed.view import FeedView

F = fat_tree(hosts=8, radix=4, name="render")
H = [int(h) for h in F.hosts]
SW = int(np.flatnonzero(F.kind != KIND_HOST)[0])
MINE = set(H[:4])  # the hosts of the tenant view's partitions


def name(n: int) -> str:
    return str(F.node_name[n])


def guid(n: int) -> str:
    return f"0x{int(F.guid[n]):016x}"


def port_guid(n: int) -> str:
    return f"0x{int(F.port_guid[F.port_offset[n]]):x}"


#: view -> (tenants whose jobs and gone hosts it sees, hosts it may name)
VIEWS = {"fabric": (frozenset(), set()), "acme": (frozenset({"acme"}), MINE)}


def feed(view: str) -> FeedView:
    tenants, shown = VIEWS[view]
    hidden = (F.kind == KIND_HOST) & ~np.isin(np.arange(F.num_nodes), sorted(shown))
    return FeedView(view, tenants, hidden, F)


def store(view: str) -> AlertRenderer:
    tenants, shown = VIEWS[view]
    return AlertRenderer(Redaction(tenants, frozenset(int(F.guid[n]) for n in shown)))


def alerts() -> list[dict]:
    a, b = H[1], H[5]  # one shown to acme, one hidden from it
    link = int(F.out_link(b, 1))
    return [
        {"kind": "sweep_failures", "message": f"no answer from {name(b)} ({port_guid(b)}), {name(a)} and {name(SW)}"},
        {"kind": "errors", "port": f"{name(b)} port 1", "link": link,
         "message": f"{name(b)} port 1: 12 symbol errors on the cable to {name(SW)}"},
        {"kind": "twin", "key": f"{guid(b)}/1", "hosts": [guid(b)], "link": link,
         "message": f"{guid(b)}/1 below its expected rate; {guid(a)}/1 too"},
        {"kind": "routing", "text": "re-routed after {0} vanished; {1} and {2} moved; {3} left",
         "nodes": [-1, b, a, -1],
         "message": f"re-routed after gone01 vanished; {name(b)} and {name(a)} moved; gone02 left",
         "gone": [{"slot": 0, "name": "gone01", "guid": "0x99", "tenants": ["acme"]}]},
        {"kind": "link_down", "text": "cable down: {0} port 1 - {1} port 3", "nodes": [b, SW],
         "message": f"cable down: {name(b)} port 1 - {name(SW)} port 3", "a": f"{name(b)} port 1",
         "b": f"{name(SW)} port 3"},
    ]


def stored_event(alert: dict) -> Event:
    fact = fact_of(alert, {}, names=FabricNames(F))
    return Event(kind=fact.kind, message=fact.message, hosts=fact.hosts, jobs=fact.jobs, resolved=fact.resolved,
                 parts=fact.parts, object_id=fact.object_id, node=fact.node)


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_the_feed_and_the_event_store_render_an_alert_alike(view):
    for alert in alerts():
        live = feed(view).alert(alert)["message"]
        assert redact(stored_event(alert), store(view))["message"] == live, alert["kind"]
        assert live != alert["message"], alert["kind"]  # every one names a host this view may not


def test_what_each_view_reads():
    free, errors, twin, routing, down = alerts()
    b, a = H[5], H[1]
    acme, fabric = store("acme"), store("fabric")
    read = {k: redact(stored_event(x), acme)["message"] for k, x in zip("fetrd", alerts(), strict=True)}
    assert read["f"] == f"no answer from host-{b} (hidden), {name(a)} and {name(SW)}"
    assert read["e"] == f"host-{b} port 1: 12 symbol errors on the cable to {name(SW)}"
    assert read["t"] == f"host-{b}/1 below its expected rate; {guid(a)}/1 too"
    # a gone host named to its tenants then; a node of no object hidden; the template is never parsed back
    assert read["r"] == f"re-routed after gone01 vanished; host-{b} and {name(a)} moved; {HIDDEN_NODE} left"
    assert redact(stored_event(routing), fabric)["message"] == \
        f"re-routed after {HIDDEN_NODE} vanished; host-{b} and host-{a} moved; {HIDDEN_NODE} left"
    assert read["d"] == f"cable down: host-{b} port 1 - {name(SW)} port 3"
    out = feed("acme").alert(twin)
    assert (out["key"], out["hosts"]) == (f"host-{b}/1", ["hidden"])
    assert feed("acme").alert(down)["a"] == f"host-{b} port 1" and feed("acme").alert(down)["b"] == down["b"]


def test_an_operator_reads_every_alert_as_raised():
    everything = AlertRenderer(Redaction(None, None))
    for alert in alerts():
        assert FeedView("all", None, None, F).alert(alert) == alert
        assert redact(stored_event(alert), everything)["message"] == alert["message"]


def test_slots_are_objects_or_switch_names_and_objects_list_each_host_once():
    _, _, twin, routing, down = alerts()
    names = FabricNames(F)
    assert slots(down, names) == [[H[5], name(H[5]), guid(H[5])], name(SW)]
    assert slots(routing, names)[0] == [-1, "gone01", "0x99", ["acme"]] and slots(routing, names)[3] == [-1, ""]
    assert slots({"message": "no template"}, names) is None
    hosts = {h[0]: h for h in objects(twin, names)}  # the key, the GUID, the link's host end, the message: once
    assert sorted(hosts) == sorted([H[1], H[5]]) and len(objects(twin, names)) == 2
    assert hosts[H[5]][:3] == [H[5], name(H[5]), guid(H[5])] and f"{guid(H[5])}/1" in hosts[H[5]][4]


def test_rows_stored_before_parts_and_unresolved_ones():
    routing = alerts()[3]
    event = stored_event(routing)
    legacy = Event(kind="routing", message=event.message, hosts=event.hosts, resolved=True)  # no parts
    shown = redact(legacy, store("acme"))["message"]
    assert name(H[5]) not in shown and name(H[1]) in shown  # relabelled by the objects it stored
    unresolved = Event(kind="errors", message=f"{name(H[5])} port 1 down", hosts=[], resolved=False)
    known = AlertRenderer(Redaction(frozenset(), frozenset()), fallback=lambda: {name(H[5]): f"host-{H[5]}"})
    assert redact(unresolved, known)["message"] == f"host-{H[5]} port 1 down"
    unknown = AlertRenderer(Redaction(frozenset(), frozenset()), fallback=lambda: None)
    assert redact(unresolved, unknown)["message"].startswith("errors: details hidden")


def test_a_view_without_a_fabric_names_no_node():
    alert = alerts()[1]
    out = AlertRenderer(Redaction(frozenset(), frozenset())).alert(alert)
    assert out["port"] == f"{HIDDEN_NODE} port 1" and name(H[5]) not in repr(out)
