"""The one-minute rollup endpoints served from the time-series store (issue 40), on the embedded store and on a real
VictoriaMetrics: the leader's sweep writer fills the store, the history ring holds the recent recablings.

A fat tree (8 hosts, 4 leaves, 2 spines) runs three topologies, one minute each, 10 s sweeps: as built (A), with
cable 8 (leaf01:3 - spine01:1) cut (B), and with two spine ends swapped (C: leaf02:3 now goes to spine02:3). Every
directed link carries a rate unique to its identity, so a value read under the wrong cable shows.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import numpy as np
import pytest
from rest_framework.test import APIClient

import ibweb.tsdb.open as tsdb_open
from fabric_engine.topology import Fabric
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.history import ring
from ibweb.live.history.link_identity import IDENTITY, guid_text, identities, locate
from ibweb.live.history.tsdb_publisher import Sweep, SweepWriter
from ibweb.runtime import record
from ibweb.tsdb.embedded import EmbeddedStore
from ibweb.tsdb.victoria import VictoriaStore
from tests.support.victoria import Victoria

pytestmark = pytest.mark.django_db

T0 = float(int(time.time() // 60) * 60 - 600)  # a minute boundary, ten minutes ago
CUT = 8  # leaf01:3 - spine01:1
F_A = fat_tree(hosts=8, radix=4)
F_B = F_A.without_links([CUT])
_b_node, _b_port = np.array(F_B.b_node), np.array(F_B.b_port)
_b_node[[9, 12]], _b_port[[9, 12]] = _b_node[[12, 9]], _b_port[[12, 9]]  # leaf02:3 <-> leaf03:4's spine ends
F_C = Fabric.build(F_B.name, kind=F_B.kind, node_name=F_B.node_name, guid=F_B.guid, lid=F_B.lid, nports=F_B.nports,
                   role=F_B.role, tier=F_B.tier, group=F_B.group, port_lid=F_B.port_lid, port_guid=F_B.port_guid,
                   width=F_B.width, speed=F_B.speed, length_m=F_B.length_m, a_node=np.array(F_B.a_node),
                   a_port=np.array(F_B.a_port), b_node=_b_node, b_port=_b_port)
UNION = np.unique(np.concatenate([identities(F_A), identities(F_C)]))
MINUTES = [datetime.fromtimestamp(T0 + 60 * m, tz=UTC).isoformat() for m in range(5)]


def key(tx: str, tx_port: int, rx: str, rx_port: int) -> np.ndarray:
    f = F_A
    return np.array([(f.guid[f.node(tx)], tx_port, f.guid[f.node(rx)], rx_port)], dtype=IDENTITY)


def value(k: np.ndarray) -> float:
    """The rate (Gb/s) of the link of identity ``k``: unique per identity."""
    return float(1.0 + locate(UNION, k)[0])


def rates(f: Fabric) -> np.ndarray:
    return (1.0 + locate(UNION, identities(f))).astype(np.float32)


def near(values: list[float | None]) -> list:
    """``values`` as the store gives them back: float32 rounded to 10 mantissa bits in the embedded store."""
    return [None if v is None else pytest.approx(v, rel=1e-3) for v in values]


def end(name: str, port: int) -> dict:
    return {"guid": guid_text(F_A.guid[F_A.node(name)]), "port": port, "node": name}


@pytest.fixture(params=["embedded", "victoria"])
def store(request, tmp_path, monkeypatch):
    """The store the API reads, and how a test makes its writes readable."""
    if request.param == "embedded":
        s, settle, server = EmbeddedStore(tmp_path / "tsdb.sqlite3"), (lambda: None), None
    else:
        (tmp_path / "victoria").mkdir()
        server = Victoria(tmp_path / "victoria")  # one per test: fabric ids repeat across tests
        s, settle = VictoriaStore(server.url), server.flush
    monkeypatch.setattr(tsdb_open, "_store", s)
    yield s, settle
    s.close()
    if server is not None:
        server.stop()


def play(row, store, sweeps: list[tuple[float, Fabric, np.ndarray | None]]) -> None:
    """Each sweep ``(t, fabric, stale mask)`` into the history ring (its topology) and through the leader's sweep
    writer into the store."""
    versions = {id(f): record.publish(row.pk, record.row_identity(row), f, None)
                for f in {id(f): f for _, f, _ in sweeps}.values()}
    writer = SweepWriter(row.pk, row.slug, lambda: store[0], lambda sweep: None, capacity=len(sweeps) + 1)

    async def run() -> None:
        for seq, (t, f, stale) in enumerate(sweeps, start=1):
            r = rates(f)
            await ring.record(row.pk, seq, t, r, r / 400, topology=versions[id(f)], fabric=f, missing=stale)
            writer.put(Sweep(t, 1.0, f, versions[id(f)], r, r / 400, None, stale, []))
            assert writer.drain(30)

    asyncio.run(run())
    assert writer.failed == 0 and writer.dropped == 0
    store[1]()


@pytest.fixture
def row():
    fabric, _ = ensure_demo()
    ring.clear(fabric.pk)
    yield fabric
    ring.clear(fabric.pk)


def test_rollups_by_identity_across_a_cut_and_a_recabling(row, store):
    play(row, store, [(T0 + 60 * phase + 10 * i + 5, f, None)
                      for phase, f in enumerate((F_A, F_B, F_C)) for i in range(6)])
    get = APIClient().get
    moved = key("leaf01", 4, "spine02", 1)  # index 9 in A, 8 since the cut
    body = get(f"/api/fabrics/fabrics/demo/links/{CUT}/rollups/").json()
    assert body["minute"] == MINUTES[:3] and body["mean_rate_gbps"] == near([value(moved)] * 3)
    assert body["samples"] == [6, 6, 6] and body["coverage_s"] == [60.0] * 3 and body["down_s"] == [0.0] * 3
    assert body["mean_util"] == [pytest.approx(value(moved) / 400, rel=1e-3)] * 3
    assert body["tx"] == end("leaf01", 4) and body["rx"] == end("spine02", 1) and body["recabled"] == []
    cut = get("/api/fabrics/fabrics/demo/ports/leaf01/3/rollups/").json()
    # the cut cable is down, not idle (issue 35): no value, its minutes down
    assert cut["mean_rate_gbps"] == near([value(key("leaf01", 3, "spine01", 1)), None, None])
    assert cut["down_s"] == [0.0, 60.0, 60.0] and cut["coverage_s"] == [60.0, 0.0, 0.0] and cut["link"] is None
    assert cut["max_util"][1:] == [None, None] and cut["samples"] == [6, 0, 0]
    port = get("/api/fabrics/fabrics/demo/ports/leaf02/3/rollups/").json()
    assert port["mean_rate_gbps"] == near([value(key("leaf02", 3, "spine01", 2))] * 2 +
                                          [value(key("leaf02", 3, "spine02", 3))])
    assert port["recabled"] == [{"t": T0 + 125, "minute": MINUTES[2], "from": end("spine01", 2),
                                 "to": end("spine02", 3)}]
    linked = get("/api/fabrics/fabrics/demo/links/9/rollups/").json()  # leaf02:3 -> spine02:3, since minute C
    assert linked["minute"] == MINUTES[2:3]
    assert linked["mean_rate_gbps"] == near([value(key("leaf02", 3, "spine02", 3))])
    assert linked["recabled"] == port["recabled"]
    wide = get("/api/fabrics/fabrics/demo/links/-1/rollups/").json()
    assert wide["minute"] == MINUTES[:3] and wide["samples"] == [6, 6, 6] and wide["coverage_s"] == [60.0] * 3
    assert wide["down_s"] == [0.0, 60.0, 60.0]  # the cut cable's ports, down since minute B
    sums = [float(rates(f).astype(np.float64).sum()) for f in (F_A, F_B, F_C)]  # summed over the directed links
    assert wide["mean_rate_gbps"] == [pytest.approx(s, rel=1e-3) for s in sums]
    assert wide["max_util"] == [pytest.approx(float(rates(f).max()) / 400, rel=1e-3) for f in (F_A, F_B, F_C)]
    assert get("/api/fabrics/fabrics/demo/links/99/rollups/").status_code == 404
    assert get("/api/fabrics/fabrics/demo/ports/gpu0001/1/rollups/").status_code == 404  # a hidden host


def test_minutes_without_a_sweep_are_absent_and_unmeasured_links_are_not_coverage(row, store):
    stale = np.zeros(2 * F_A.num_links, dtype=bool)
    stale[0] = True
    # minute 0: 2 sweeps then the engine stopped; minute 1: none; minute 2: link 0 unmeasured in 3 sweeps of 6
    sweeps = [(T0 + 10 * i + 5, F_A, None) for i in range(2)]
    sweeps += [(T0 + 120 + 10 * i + 5, F_A, stale if i < 3 else None) for i in range(6)]
    play(row, store, sweeps)
    body = APIClient().get("/api/fabrics/fabrics/demo/links/0/rollups/?minutes=30").json()
    assert body["minute"] == [MINUTES[0], MINUTES[2]]  # the minute without a sweep is absent, not 0 %
    assert body["samples"] == [2, 3] and body["coverage_s"] == [20.0, 30.0] and body["down_s"] == [0.0, 0.0]
    assert body["mean_rate_gbps"] == [pytest.approx(float(rates(F_A)[0]), rel=1e-3)] * 2  # over the measured
    wide = APIClient().get("/api/fabrics/fabrics/demo/links/-1/rollups/?minutes=30").json()
    assert wide["minute"] == [MINUTES[0], MINUTES[2]] and wide["coverage_s"] == [20.0, 60.0]
    assert wide["samples"] == [2, 6] and wide["down_s"] == [0.0, 0.0]
    short = APIClient().get("/api/fabrics/fabrics/demo/links/0/rollups/?minutes=1").json()
    assert short["minute"] == []  # nothing in the last finished minute
    assert APIClient().get("/api/fabrics/fabrics/demo/links/0/rollups/?minutes=abc").status_code == 400
