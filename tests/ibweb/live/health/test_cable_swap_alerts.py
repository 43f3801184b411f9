"""A cable swap alert (fabric_engine.health.conditions.cable_swap_alerts): one-shot, one per swap, and read per view
by the one alert renderer like every other alert (a host's port as ``host-<index>``, a switch's as is)."""

from __future__ import annotations

import numpy as np

from fabric_engine.health.conditions import cable_swap_alerts
from fabric_engine.topology import KIND_HOST
from fabric_engine.topology.generate import fat_tree
from ibweb.access import AlertRenderer, Redaction
from ibweb.access.alert_objects import FabricNames
from ibweb.events.facts import alert_key, fact_of
from ibweb.events.models import Event
from ibweb.events.visibility import redact
from ibweb.live.engine.alerts import AlertDiff
from ibweb.live.feed.view import FeedView

F = fat_tree(hosts=8, radix=4, name="swaps")
HOST = int(F.hosts[5])
SW = int(np.flatnonzero(F.kind != KIND_HOST)[0])


def _swap(node: int, port: int, t: float, old: str, new: str) -> dict:
    return {"node": str(F.node_name[node]), "node_index": node, "guid": f"0x{int(F.guid[node]):016x}",
            "port": port, "kind": "host" if F.kind[node] == KIND_HOST else "switch", "t": t, "from": old, "to": new}


def test_each_swap_is_one_info_alert_with_its_port_end_and_serials():
    swaps = [_swap(SW, 3, 100.0, "MT2231{X}", "MT2231Y"), _swap(HOST, 1, 100.0, "A1", "B2")]
    sw, host = cable_swap_alerts(swaps, F.node_name)
    assert (sw["kind"], sw["severity"], sw["port"], sw["ports"], sw["t"]) == (
        "cable_swap", "info", f"{F.node_name[SW]} port 3", [3], 100.0)
    assert (sw["from"], sw["to"]) == ("MT2231{X}", "MT2231Y")  # braces of a serial kept, not read as a slot
    assert sw["message"] == f"{F.node_name[SW]} port 3: cable swapped (module serial MT2231{{X}} -> MT2231Y)"
    assert host["guid"] == f"0x{int(F.guid[HOST]):016x}" and host["nodes"] == [HOST]
    # one-shot: a second swap of the same port later is raised again, not taken for the first one still open
    again = cable_swap_alerts([_swap(HOST, 1, 160.0, "B2", "C3")], F.node_name)[0]
    diff = AlertDiff()
    diff.diff([host])
    raised, cleared, _ = diff.diff([again])
    assert raised == [again] and cleared == [host]
    assert fact_of(host, {}, names=FabricNames(F)).severity == "info"
    assert alert_key(host) == alert_key(again)  # one port's events: a later swap reopens or follows its event


def test_a_host_port_swap_reads_as_host_index_below_all_in_the_feed_and_the_events():
    [alert] = cable_swap_alerts([_swap(HOST, 1, 100.0, "A1", "B2")], F.node_name)
    hidden = F.kind == KIND_HOST  # a view of no tenant: every host hidden
    live = FeedView("fabric", frozenset(), hidden, F).alert(alert)
    label = f"host-{HOST}"
    assert live["port"] == f"{label} port 1" and live["guid"] == "hidden"
    assert live["message"] == f"{label} port 1: cable swapped (module serial A1 -> B2)"
    fact = fact_of(alert, {}, names=FabricNames(F))
    assert (fact.object_type, fact.object_id) == ("port", f"{F.node_name[HOST]} port 1")
    event = Event(kind=fact.kind, message=fact.message, hosts=fact.hosts, jobs=fact.jobs, resolved=fact.resolved,
                  parts=fact.parts, object_id=fact.object_id, node=fact.node)
    assert redact(event, AlertRenderer(Redaction(frozenset(), frozenset())))["message"] == live["message"]
    assert redact(event, AlertRenderer(Redaction(None, None)))["message"] == alert["message"]
