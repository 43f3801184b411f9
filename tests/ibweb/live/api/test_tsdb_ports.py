"""Several ports' series in one request (issue 40, ``ibweb.live.api.tsdb_ports``): the same values, names and cable
swaps as the single-port view, one store read per series, each port's access as the single-port view decides it,
and the caps answered 400 naming the parameter."""
# ruff: noqa: F811  (the fixtures imported below are redefined as test arguments)

from __future__ import annotations

import pytest

from fabric_engine.health.conditions import cable_swap_alerts
from ibweb.events.recorder import EventRecorder
from ibweb.live.api.tsdb_ports import MAX_PORTS, MAX_VALUES
from ibweb.live.health.report import port_end
from ibweb.tsdb.embedded import EmbeddedStore
from tests.ibweb.live.history.test_tsdb_api import T0, URL, stored, superuser  # noqa: F401
from tests.support.access_fixtures import public_read

pytestmark = pytest.mark.django_db

WINDOW = f"start={T0}&end={T0 + 60}&points=6"


def batch(client, ports: list[str], series: list[str], window: str = WINDOW):
    q = "&".join([*(f"port={p}" for p in ports), *(f"series={s}" for s in series), window])
    return client.get(f"{URL}/tsdb/ports/?{q}")


def test_ports_answered_as_the_single_port_view_answers_each(stored, client, superuser):
    row, f = stored
    client.force_login(superuser)
    guid = f"0x{int(f.guid[f.node('dgx0004')]):016x}"
    asked = ["dgx0004:1", "dgx0003:1", f"{guid}:1", "leaf01:1"]
    body = batch(client, asked, ["utilization", "tx_bytes_per_s"]).json()
    assert [p["asked"] for p in body["ports"]] == asked
    assert body["series"] == {"utilization": {"unit": "ratio", "agg": "mean"},
                              "tx_bytes_per_s": {"unit": "bytes/s", "agg": "mean"}}
    for p, a in zip(body["ports"], asked, strict=True):
        node, port = a.rsplit(":", 1)
        for name in ("utilization", "tx_bytes_per_s"):
            one = client.get(f"{URL}/ports/{node}/{port}/tsdb/?series={name}&{WINDOW}").json()
            assert p["node"] == one["node"] and p["port"] == one["port"] and p["swaps"] == one["swaps"]
            assert body["t"] == one["t"] and p["values"][name] == one["values"], (a, name)
    assert body["ports"][0]["values"]["utilization"][0] is not None
    assert body["ports"][1]["values"]["utilization"][1:] == [None] * 5  # missing is null, never zero
    assert body["ports"][2]["node"] == "dgx0004"  # a GUID asked, named as the single-port view names it


def test_one_store_read_per_series_whatever_the_number_of_ports(stored, client, superuser, monkeypatch):
    row, f = stored
    client.force_login(superuser)
    reads = []
    original = EmbeddedStore.ranges
    monkeypatch.setattr(EmbeddedStore, "ranges", lambda self, fabric, ports, series, *a: (
        reads.append((series, len(ports))), original(self, fabric, ports, series, *a))[1])
    leaf = f.node("leaf01")
    ports = [f"{f.node_name[i]}:1" for i in f.hosts.tolist()]
    ports += [f"leaf01:{p}" for p in range(1, int(f.nports[leaf]) + 1)]
    assert len(ports) > 20
    answer = batch(client, ports, ["utilization", "tx_bytes_per_s", "link_up"])
    assert answer.status_code == 200 and len(answer.json()["ports"]) == len(ports)
    assert reads == [("utilization", len(ports)), ("tx_bytes_per_s", len(ports)), ("link_up", len(ports))]


def test_each_port_s_access_is_the_single_port_view_s(stored, client):
    row, f = stored
    label = f"host-{f.node('dgx0004')}"
    asked = ["dgx0004:1", f"{label}:1", f"{label}:99", "nosuch:1", "leaf01:1", "leaf01:200"]
    for public in (True, False):
        with public_read(public):
            if not public:
                assert batch(client, asked, ["utilization"]).status_code == 403
                continue
            body = batch(client, asked, ["utilization"]).json()
            assert "dgx" not in str({**body, "ports": [p for p in body["ports"] if p["asked"] != "dgx0004:1"]})
            for p, a in zip(body["ports"], asked, strict=True):
                node, port = a.rsplit(":", 1)
                one = client.get(f"{URL}/ports/{node}/{port}/tsdb/?series=utilization&{WINDOW}")
                if one.status_code == 404:
                    assert p["error"] == {"status": 404, "detail": one.json()["detail"]} and "values" not in p, a
                else:
                    assert one.status_code == 200 and p["values"]["utilization"] == one.json()["values"], a
                    assert p["node"] == one.json()["node"]
            assert [("error" in p) for p in body["ports"]] == [True, False, True, True, False, True]
            assert body["ports"][1]["node"] == label


def test_a_swapped_port_s_cable_swaps_come_with_it(stored, client, superuser):
    row, f = stored
    node = f.node("dgx0004")
    swap = {**port_end(f, node, 1), "t": T0 + 35.0, "from": "MT2301FT00012", "to": "MT2317FT00456"}
    EventRecorder(row.pk).apply(cable_swap_alerts([swap], f.node_name), [], 1, T0 + 35.0, fabric=f)
    client.force_login(superuser)
    body = batch(client, ["dgx0004:1", "dgx0005:1", "leaf01:1"], ["utilization"]).json()
    assert [p["swaps"] for p in body["ports"]] == [
        [{"t": T0 + 35.0, "from": "MT2301FT00012", "to": "MT2317FT00456"}], [], []]
    later = batch(client, ["dgx0004:1"], ["utilization"], f"start={T0 + 40}&end={T0 + 60}").json()
    assert later["ports"][0]["swaps"] == []  # the window's swaps only


@pytest.mark.parametrize(("query", "field", "words"), [
    ("series=utilization", "port", "at least one port"),
    ("&".join(["series=utilization", *[f"port=dgx0004:{k % 4 + 1}" for k in range(MAX_PORTS + 1)]]), "port",
     f"at most {MAX_PORTS} a request"),
    ("port=dgx0004&series=utilization", "port", "expected <node>:<port number>"),
    ("port=dgx0004:x&series=utilization", "port", "expected <node>:<port number>"),
    ("port=dgx0004:1", "series", "at least one series"),
    ("port=dgx0004:1&series=utilization&series=nosuch", "series", "unknown series 'nosuch'"),
    ("port=dgx0004:1&series=utilization&start=10&end=5", "start", "end must be after start"),
    ("port=dgx0004:1&series=utilization&points=0", "points", "outside 1..4000"),
    ("&".join(["points=4000", *[f"series={s}" for s in ("utilization", "tx_bytes_per_s", "rx_bytes_per_s")],
               *[f"port=dgx0004:{k % 4 + 1}" for k in range(MAX_VALUES // 12000 + 1)]]), "points",
     f"than {MAX_VALUES:,} values a request"),
])
def test_bad_or_too_large_requests_are_400_naming_the_parameter(stored, client, superuser, query, field, words):
    client.force_login(superuser)
    answer = client.get(f"{URL}/tsdb/ports/?{query}")
    assert answer.status_code == 400, answer.content
    assert words in str(answer.json()[field])
