"""Twin and plan alerts through the feed and the events: no hidden host's name or GUID reaches another
tenant's view (issue 14).

The alerts are the twin's own (a deviation from :func:`fabric_engine.twin.compare` made an
alert by :func:`fabric_engine.twin.persistence.alert_of`, as the twin engine puts it in frames).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from fabric_engine.routing import route
from fabric_engine.topology import KIND_HOST
from fabric_engine.topology import Fabric as EngineFabric
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin import HostMap, SchedulerJob, compare, compare_plan, emulate, place_jobs
from fabric_engine.twin.attribution import job_links
from fabric_engine.twin.persistence import alert_of
from fabric_engine.twin.plan import plan_from_fabric
from ibweb.events.facts import fact_of
from ibweb.live.feed.view import HIDDEN_NODE, FeedView
from ibweb.twin.fabric_twin import plan_alerts, without_jobs


@pytest.fixture(scope="module")
def twin_alert():
    """A fat tree, the host whose uplink deviates, and the twin alert about it (as a frame carries it)."""
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    r = route(f)
    jobs = [SchedulerJob("101", "llm", ("gpu0001", "gpu0002", "gpu0009", "gpu0010"))]
    known, _ = place_jobs(jobs, HostMap().index(f))
    inc = job_links(r, [k.rails for k in known])
    traffic = emulate(r, known)
    obs = traffic.link_rate * 0.8
    up = next(int(d) for d in traffic.rates[0].indices if f.kind[f.dl_src[d]] == KIND_HOST)
    obs[up] = 0.0  # the host's uplink carries nothing: "below"
    dev = next(d for d in compare(traffic, obs, inc).deviations if d["link"] == up)
    return f, int(f.dl_src[up]), int(f.dl_dst[up]), without_jobs(alert_of(dev, state="raised"))


def _view(f, key: str, shown: set[int]) -> FeedView:
    hidden = (f.kind == KIND_HOST) & ~np.isin(np.arange(f.num_nodes), sorted(shown))
    return FeedView(key, frozenset() if key == "fabric" else frozenset({"acme"}), hidden, f)


def _leaks(f, host: int, alert: dict) -> list[str]:
    text = json.dumps(alert)
    guid = int(f.guid[host])
    return [s for s in (str(f.node_name[host]), f"{guid:016x}", f"{guid:x}") if s in text]


@pytest.mark.parametrize("key", ["fabric", "t-9"])
def test_twin_alert_names_no_hidden_host_nor_its_guid(twin_alert, key):
    f, host, switch, alert = twin_alert
    assert alert["hosts"] and alert["key"].startswith("0x")  # the twin names the host by GUID twice
    other_hosts = set(np.flatnonzero(f.kind == KIND_HOST).tolist()) - {host}
    out = _view(f, key, set() if key == "fabric" else other_hosts).header({"alerts": [alert]})["alerts"]
    assert len(out) == 1
    assert _leaks(f, host, out[0]) == []
    # the switch end keeps its name: only the host end is relabelled
    assert str(f.node_name[switch]) in out[0]["label"]
    assert out[0]["label"].startswith(f"host-{host} port ")
    assert HIDDEN_NODE not in out[0]["label"]


def test_own_tenant_view_sees_its_host_in_twin_alerts(twin_alert):
    f, host, _, alert = twin_alert
    out = _view(f, "t-1", {host}).header({"alerts": [alert]})["alerts"]
    assert out == [alert]


# ----------------------------------------------------------------- plan alerts
@pytest.fixture(scope="module")
def miswired():
    """A fabric whose host ends of cables 0 and 1 are swapped against its plan, and the plan's alerts."""
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    b_node, b_port = f.b_node.copy(), f.b_port.copy()
    b_node[[0, 1]], b_port[[0, 1]] = f.b_node[[1, 0]], f.b_port[[1, 0]]
    g = EngineFabric.build(f.name, kind=f.kind, node_name=f.node_name, guid=f.guid, lid=f.lid, nports=f.nports,
                           role=f.role, tier=f.tier, a_node=f.a_node, a_port=f.a_port, b_node=b_node, b_port=b_port,
                           width=f.width, speed=f.speed)
    report = compare_plan(plan_from_fabric(f), g).as_dict()
    report["summary"] = "2 miswired"
    alerts = [a for a in plan_alerts(report) if a.get("deviation") == "miswired"]
    hosts = [str(g.node_name[n]) for n in (f.b_node[0], f.b_node[1])]
    assert all(g.kind[n] == KIND_HOST for n in (f.b_node[0], f.b_node[1]))
    return g, alerts, hosts


def test_plan_alerts_name_no_hidden_host_they_found_cabled_instead(miswired):
    g, alerts, hosts = miswired
    assert alerts and any(h in a["message"] for a in alerts for h in hosts)
    for key, shown in (("fabric", set()), ("t-9", set())):
        out = _view(g, key, shown).header({"alerts": alerts})["alerts"]
        assert len(out) == len(alerts)
        assert not any(h in json.dumps(out) for h in hosts), out
        assert all(a["message"].startswith("miswired: planned ") for a in out)


def test_plan_alerts_become_events_that_hide_the_found_peer(miswired):
    g, alerts, hosts = miswired
    index = {str(g.node_name[n]): (int(n), int(g.guid[n])) for n in g.hosts}
    fact = fact_of(alerts[0], {}, lambda name: index.get(name))
    named = {entry[1] for entry in fact.hosts}
    assert set(hosts) <= named  # the peer found instead is listed, so views below ALL read it hidden


def test_a_view_of_a_fabric_not_known_yet_names_no_node_of_an_alert(twin_alert):
    f, host, switch, alert = twin_alert
    out = FeedView("t-1", frozenset({"acme"}), np.zeros(0, dtype=bool), None).alert(alert)
    assert _leaks(f, host, out) == [] and str(f.node_name[switch]) not in json.dumps(out)
    assert out["hosts"] == ["hidden"] and out["key"].startswith("hidden/")
