"""Link history that follows the cable, not array positions: identities across cabling changes.

A fat tree (8 hosts, 4 leaves, 2 spines) runs three topologies, one minute each: as built (A), with
cable 8 (leaf01:3 - spine01:1) cut (B: every later cable's index drops by one), and with two spine
ends swapped (C: leaf02:3 now goes to spine02:3 instead of spine01:2). Every directed link carries a
rate unique to its identity, so any value read under the wrong cable shows.
"""

import asyncio
import json
import time

import numpy as np
import pytest
from rest_framework.test import APIClient

from fabric_engine.topology import Fabric
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.history import layout, reads, ring
from ibweb.live.history.link_identity import IDENTITY, LinkIdentities, guid_text, identities, locate
from ibweb.runtime import record
from tests.support.engine_fixtures import published, settled_tick
from tests.support.tenancy_fixtures import operator_api

pytestmark = pytest.mark.django_db

T0 = float(int(time.time() // 60) * 60 - 600)  # a minute boundary, ten minutes ago
CUT = 8  # leaf01:3 - spine01:1


def rebuild(f: Fabric, **cables) -> Fabric:
    """``f`` with other cable arrays (``a_node``, ``a_port``, ``b_node``, ``b_port``)."""
    ends = {k: np.array(getattr(f, k)) for k in ("a_node", "a_port", "b_node", "b_port")} | cables
    return Fabric.build(f.name, kind=f.kind, node_name=f.node_name, guid=f.guid, lid=f.lid, nports=f.nports,
                        role=f.role, tier=f.tier, group=f.group, port_lid=f.port_lid, port_guid=f.port_guid,
                        width=f.width, speed=f.speed, length_m=f.length_m, **ends)


F_A = fat_tree(hosts=8, radix=4)
F_B = F_A.without_links([CUT])
_b_node, _b_port = np.array(F_B.b_node), np.array(F_B.b_port)
# swap the spine ends of leaf02:3 - spine01:2 and leaf03:4 - spine02:3
_b_node[[9, 12]], _b_port[[9, 12]] = _b_node[[12, 9]], _b_port[[12, 9]]
F_C = rebuild(F_B, b_node=_b_node, b_port=_b_port)
UNION = np.unique(np.concatenate([identities(F_A), identities(F_C)]))


def node(name: str) -> int:
    return F_A.node(name)


def key(tx: str, tx_port: int, rx: str, rx_port: int) -> np.ndarray:
    """The identity ``[1]`` of the directed link from ``tx:tx_port`` to ``rx:rx_port``."""
    return np.array([(F_A.guid[node(tx)], tx_port, F_A.guid[node(rx)], rx_port)], dtype=IDENTITY)


def value(k: np.ndarray) -> np.ndarray:
    """The rate (Gb/s) every tick gives the links of identities ``k``: unique per identity, exact in float16."""
    return (1.0 + locate(UNION, k)).astype(np.float32)


def end(name: str, port: int) -> dict:
    return {"guid": guid_text(F_A.guid[node(name)]), "port": port, "node": name}


@pytest.fixture
def recorded():
    """The demo fabric row with three topologies recorded (10 ticks each, 6 s apart, and one more of C), and
    the record's current fabric C; yields the row and the versions of A, B, C."""
    row, _ = ensure_demo()
    ring.clear(row.pk)
    versions = [record.publish(row.pk, record.row_identity(row), f, None) for f in (F_A, F_B, F_C)]

    async def play() -> None:
        seq = 0
        for phase, (version, f) in enumerate(zip(versions, (F_A, F_B, F_C), strict=True)):
            rate = value(identities(f))
            for i in range(11 if phase == 2 else 10):
                seq += 1
                await ring.record(row.pk, seq, T0 + 60 * phase + 6 * i, rate, rate / 400, topology=version,
                                  fabric=f)

    asyncio.run(play())
    yield row, versions
    ring.clear(row.pk)


def test_identities_and_their_lookup():
    ids = identities(F_A)
    assert ids.shape == (32,) and ids.dtype == IDENTITY
    assert ids[0].tolist() == (F_A.guid[node("leaf01")], 1, F_A.guid[node("gpu0001")], 1)
    assert ids[16].tolist() == (F_A.guid[node("gpu0001")], 1, F_A.guid[node("leaf01")], 1)  # the reverse
    found = locate(identities(F_B), ids)
    assert found[CUT] == found[CUT + 16] == -1  # the cut cable, both directions
    assert found[9] == 8 and found[9 + 16] == 8 + 15 and found[1] == 1 and found[17] == 16
    assert (found[:CUT] == np.arange(CUT)).all()
    c = LinkIdentities.decode(LinkIdentities.of(F_C).encode())
    assert (c.keys == identities(F_C)).all() and c.node_name.tolist() == F_C.node_name.tolist()
    assert c.find(key("leaf02", 3, "spine02", 3)).tolist() == [9]
    assert c.find_ports(key("leaf02", 3, "spine01", 2)).tolist() == [9]  # by the transmitting port only
    assert c.find(key("leaf02", 3, "spine01", 2)).tolist() == [-1]
    assert c.node_index(np.array([F_A.guid[3], 12345], dtype=np.uint64)).tolist() == [3, -1]


def test_a_topology_change_keeps_the_ring_and_each_cable_s_series(recorded):
    row, versions = recorded
    idx = ring.index(row.pk)
    assert idx["seq"] == list(range(1, 32)) and [r[1] for r in idx["runs"]] == versions
    host = key("leaf03", 2, "gpu0006", 1)  # index 5 in every topology
    spine = key("spine02", 1, "leaf01", 4)  # index 9 + 16, then 8 + 15
    s = reads.series(row.pk, np.concatenate([host, spine]))
    assert s.seq.tolist() == list(range(1, 32))
    assert s.rate[:, 0].tolist() == [value(host)[0]] * 31
    assert s.rate[:, 1].tolist() == [value(spine)[0]] * 31
    assert np.allclose(s.util[:, 1], value(spine)[0] / 400, rtol=1e-3)


def test_a_cut_cable_has_gaps_and_its_index_shows_the_cable_there_now(recorded):
    row, _ = recorded
    cut = key("leaf01", 3, "spine01", 1)
    s = reads.series(row.pk, cut)
    assert s.rate[:10, 0].tolist() == [value(cut)[0]] * 10
    assert np.isnan(s.rate[10:, 0]).all() and np.isnan(s.util[10:, 0]).all()
    # index 8 now is leaf01:4 -> spine02:1 (index 9 before the cut): its own values in every tick, never the cut's
    now = reads.series(row.pk, [CUT])
    assert now.rate[:, 0].tolist() == [value(key("leaf01", 4, "spine02", 1))[0]] * 31
    body = APIClient().get(f"/api/fabrics/fabrics/demo/links/{CUT}/history/?seconds=3600").json()
    assert body["rate"] == [value(key("leaf01", 4, "spine02", 1))[0]] * 31 and value(cut)[0] not in body["rate"]
    assert body["reverse"] == CUT + 15 and body["reverse_rate"] == [value(key("spine02", 1, "leaf01", 4))[0]] * 31
    assert body["tx"] == end("leaf01", 4) and body["rx"] == end("spine02", 1) and body["recabled"] == []


def test_a_recabled_port_lists_the_recabling(recorded):
    row, _ = recorded
    before, after = key("leaf02", 3, "spine01", 2), key("leaf02", 3, "spine02", 3)
    body = APIClient().get("/api/fabrics/fabrics/demo/ports/leaf02/3/history/?seconds=3600").json()
    assert body["recabled"] == [{"t": T0 + 120, "from": end("spine01", 2), "to": end("spine02", 3)}]
    assert body["rate"] == [value(before)[0]] * 20 + [value(after)[0]] * 11  # the port, whatever its peer
    assert body["reverse_rate"] == [value(key("spine01", 2, "leaf02", 3))[0]] * 20 + \
        [value(key("spine02", 3, "leaf02", 3))[0]] * 11
    assert body["tx"] == end("leaf02", 3) and body["rx"] == end("spine02", 3) and body["link"] == 9
    # the cable leaf02:3 - spine02:3 exists since the recabling: a gap before
    body = APIClient().get("/api/fabrics/fabrics/demo/links/9/history/?seconds=3600").json()
    assert body["rate"] == [None] * 20 + [value(after)[0]] * 11
    assert body["recabled"] == [{"t": T0 + 120, "from": end("spine01", 2), "to": end("spine02", 3)}]
    assert body["reverse_recabled"] == [{"t": T0 + 120, "from": end("leaf03", 4), "to": end("leaf02", 3)}]
    assert reads.recablings(row.pk, F_A.guid[node("leaf02")], 3, after=T0 + 121) == []  # outside the window
    cut = APIClient().get("/api/fabrics/fabrics/demo/ports/leaf01/3/history/").json()  # cut, never re-cabled
    assert cut["link"] is None and cut["recabled"] == [] and cut["rx"] == end("spine01", 1)
    assert cut["rate"][:10] == [value(key("leaf01", 3, "spine01", 1))[0]] * 10 and cut["rate"][10:] == [None] * 21
    assert APIClient().get("/api/fabrics/fabrics/demo/ports/leaf01/5/history/").status_code == 404


def test_hidden_hosts_are_not_named_below_all(recorded):
    gpu = node("gpu0001")
    text = APIClient().get("/api/fabrics/fabrics/demo/links/0/history/?seconds=3600").content.decode()
    anonymous = json.loads(text)
    assert anonymous["rx"] == {"guid": "hidden", "port": 1, "node": f"host-{gpu}"} and "gpu0001" not in text
    assert f"{int(F_A.guid[gpu]):016x}" not in text
    assert anonymous["tx"] == end("leaf01", 1)
    assert operator_api().get("/api/fabrics/fabrics/demo/links/0/history/").json()["rx"] == end("gpu0001", 1)
    assert APIClient().get("/api/fabrics/fabrics/demo/ports/gpu0001/1/rollups/").status_code == 404
    assert APIClient().get(f"/api/fabrics/fabrics/demo/ports/{guid_text(F_A.guid[gpu])}/1/history/").status_code == 404
    by_label = APIClient().get(f"/api/fabrics/fabrics/demo/ports/host-{gpu}/1/history/").json()
    assert by_label["node"] == f"host-{gpu}" and by_label["tx"]["guid"] == "hidden"
    assert by_label["rx"] == end("leaf01", 1)


async def test_topologies_no_tick_uses_leave_the_cache(monkeypatch):
    monkeypatch.setattr(ring, "KEEP_TICKS", ring.MIN_TICKS)
    rate = value(identities(F_A))
    for seq in range(1, 11):
        await ring.record(77, seq, T0 + seq, rate, rate / 400, topology="old", fabric=F_A)
    assert ring.store().get(layout.topo_key(77, "old")) is not None
    rate = value(identities(F_B))
    for seq in range(11, 11 + ring.MIN_TICKS):
        await ring.record(77, seq, T0 + seq, rate, rate / 400, topology="new", fabric=F_B)
    assert [r[1] for r in ring.index(77)["runs"]] == ["new"]
    assert ring.store().get(layout.topo_key(77, "old")) is None
    ring.clear(77)
    assert ring.store().get(layout.topo_key(77, "new")) is None


@pytest.mark.django_db(transaction=True)  # the tick's receivers write events from worker threads
def test_the_runner_records_each_tick_with_its_topology():
    row, _ = ensure_demo()
    ring.clear(row.pk)
    runner = published(row)
    asyncio.run(settled_tick(runner))
    assert reads.newest(row.pk) == (runner.fabric_version, 2 * runner.source.fabric.num_links)
    assert ring.topology(row.pk, runner.fabric_version).num_links == 2 * runner.source.fabric.num_links
    asyncio.run(runner.stop())
    ring.clear(row.pk)


async def test_a_restarted_engine_starts_a_new_ring_that_keeps_its_first_tick():
    for seq in range(1, 6):
        rate = value(identities(F_A)) * seq
        await ring.record(78, seq, T0 + seq, rate, rate / 400, topology="before", fabric=F_A)
    rate = value(identities(F_B))
    await ring.record(78, 1, T0 + 100, rate, rate / 400, topology="after", fabric=F_B)  # sequence numbers restart
    s = reads.series(78, [CUT])
    assert s.seq.tolist() == [1] and s.rate[:, 0].tolist() == [value(key("leaf01", 4, "spine02", 1))[0]]
    assert [r[1] for r in ring.index(78)["runs"]] == ["after"]
    assert ring.store().get(layout.topo_key(78, "before")) is None
    ring.clear(78)
