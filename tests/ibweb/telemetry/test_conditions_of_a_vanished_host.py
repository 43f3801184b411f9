"""Conditions naming a host gone from the discovery name it to its tenants (then) and to operators, never to others.

The ibsim fat tree's ``iblinkinfo`` without gpu0008 (tenant ``acme``'s) arrives through a drop directory: the
``node_missing`` condition, and a port condition of gpu0008 as the counter tracker raises it once the node is
gone (named by its GUID), carry gpu0008 as the reference cabling held it, with its tenants
(:func:`ibweb.telemetry.message_parts.held`). The live feed and the stored events render them alike (issue 35).
"""

from __future__ import annotations

import time

import pytest

from fabric_engine.telemetry.alerts import named
from fabric_engine.topology import KIND_HOST
from ibweb.access import AlertRenderer, Redaction
from ibweb.events.models import Event
from ibweb.events.recorder import EventRecorder
from ibweb.events.visibility import redact
from ibweb.live.feed.view import FeedView
from ibweb.telemetry import message_parts

from .test_lasting_cabling_conditions import edited, gpu8_line
from .test_reference_cabling import conditions, sweep, watched
from .test_telemetry_routing import _clean_cache  # noqa: F401 (autouse: a clean cache)

pytestmark = pytest.mark.django_db(transaction=True)

GPU8, GUID8 = "gpu0008", "0xb83fd20300000081"
#: view -> its tenants (None: every tenant, the operators' view)
VIEWS = {"operator": None, "acme": frozenset({"acme"}), "globex": frozenset({"globex"})}


@pytest.fixture
def acme_owned_gpu8(monkeypatch):
    """gpu0008 in acme's partition, as the reference cabling places it (the database's answer)."""
    monkeypatch.setattr(message_parts, "host_tenants", lambda row, topology, nodes: [
        ["acme"] if str(topology.node_name[n]) == GPU8 else [] for n in nodes])


def port_condition_of_gone_node() -> dict:
    """A port condition of gpu0008 as the counter tracker raises it once gpu0008 left the discovery."""
    return {"kind": "port_flapping", "severity": "warning", "condition": True, "port": f"{GUID8} port 1",
            "guid": GUID8, "ports": [1], "since": time.time(), "count": 1, "evidence": {},
            **named("{0} port 1: link went down or retrained in 2 of the last 5 sweeps", [-1], [GUID8])}


def test_the_owner_and_operators_read_a_vanished_host_others_read_hidden_node(tmp_path, acme_owned_gpu8):
    config, engine, t = watched(tmp_path)
    sweep(config, tmp_path, edited(tmp_path, "missing.txt", keep=lambda line: not gpu8_line(line)), t + 10)
    found = conditions(engine)
    (missing,) = [c for c in found if c["kind"] == "node_missing"]
    assert missing["nodes"] == [-1] and missing["gone"] == [{"slot": 0, "name": GPU8, "guid": GUID8,
                                                             "tenants": ["acme"]}]
    (port,) = engine.source._named_gone([port_condition_of_gone_node()])
    assert port["port"] == f"{GPU8} port 1" and port["message"].startswith(f"{GPU8} port 1: link went down")
    assert port["gone"][0]["tenants"] == ["acme"]
    alerts = [missing, port]

    f = engine.source.fabric
    assert GPU8 not in {str(n) for n in f.node_name}
    EventRecorder(engine.fabric_id).apply(alerts, [], seq=1, t=time.time(), first=True, fabric=f)
    stored = {e.kind: e for e in Event.objects.filter(kind__in=("node_missing", "port_flapping"))}
    assert set(stored) == {"node_missing", "port_flapping"}
    for e in stored.values():  # gpu0008 once, by name and GUID alike: the host that left, with its tenants then
        assert [h for h in e.hosts if h[0] == -1] == [[-1, GPU8, GUID8, ["acme"]]], e.hosts
    for view, tenants in VIEWS.items():
        sees = view in ("operator", "acme")
        hidden = None if tenants is None else f.kind == KIND_HOST  # no host of the discovery named either way
        live = [FeedView(view, tenants, hidden, f).alert(a) for a in alerts]
        assert live[0]["message"] == (f"{GPU8} missing" if sees else "hidden node missing"), view
        assert live[1]["port"] == (f"{GPU8} port 1" if sees else "hidden node port 1"), view
        assert live[1]["message"].startswith(f"{GPU8} port 1:" if sees else "hidden node port 1:"), view
        assert (live[1]["guid"] == GUID8) == sees and (live[0]["guid"] == GUID8) == sees, view
        assert (GPU8 in repr(live)) == sees and (GUID8 in repr(live)) == sees, view
        renderer = AlertRenderer(Redaction(tenants, None if tenants is None else frozenset()))
        out = {k: redact(e, renderer) for k, e in stored.items()}
        assert out["node_missing"]["message"] == (f"{GPU8} missing" if sees else "hidden node missing"), view
        assert out["port_flapping"]["message"].startswith(f"{GPU8} port 1:" if sees else "hidden node port 1:")
        assert out["port_flapping"]["object_id"] == (f"{GPU8} port 1" if sees else "hidden node port 1"), view
        assert (GPU8 in repr(out)) == sees, view
