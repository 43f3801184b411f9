"""History ring and the live API (issue 8): link history, path, jobs (rollups: ``tests/ibweb/live/api``)."""

import asyncio
import time

import numpy as np
import pytest
from rest_framework.test import APIClient

from fabric_engine.scenario import build_emulator
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.history import layout, reads, ring
from tests.support.engine_fixtures import published
from tests.support.tenancy_fixtures import operator_api

pytestmark = pytest.mark.django_db

N = 2 * 1024  # the demo's directed links
T0 = float(int(time.time() // 60) * 60 - 600)  # a minute boundary, ten minutes ago


@pytest.fixture
def demo():
    fabric, _ = ensure_demo()
    ring.clear(fabric.pk)
    yield fabric
    ring.clear(fabric.pk)


def frame(i: int) -> tuple[np.ndarray, np.ndarray]:
    rate = np.zeros(N, dtype=np.float32)
    rate[5] = 10.0 * i
    rate[5 + N // 2] = 1.5 * i
    rate[N - 1] = 3.0
    return rate, rate / 400.0


async def fill(fabric_id: int, count: int, start: float = T0, first_seq: int = 1) -> None:
    for i in range(count):
        rate, util = frame(i)
        await ring.record(fabric_id, first_seq + i, start + i, rate, util)


async def test_series_returns_the_recorded_values_of_a_link_in_order(demo):
    await fill(demo.pk, 30)
    s = reads.series(demo.pk, [5, 5 + N // 2, N - 1])
    assert s.seq.tolist() == list(range(1, 31))
    assert s.rate[:, 0].tolist() == [10.0 * i for i in range(30)]
    assert np.allclose(s.rate[:, 1], [1.5 * i for i in range(30)], rtol=1e-3)
    assert np.allclose(s.util[:, 0], np.arange(30) * 10 / 400, rtol=1e-3)
    assert s.rate[:, 2].tolist() == [3.0] * 30
    recent = reads.series(demo.pk, [5], after=T0 + 24.5)
    assert recent.seq.tolist() == [26, 27, 28, 29, 30]
    with pytest.raises(IndexError, match="link 4096 is outside 0..2047"):
        reads.series(demo.pk, [N * 2])


async def test_record_says_when_a_minute_finished_issue_13():
    finished = [await ring.record(99, 1 + i, T0 + 59 + i * 30, *frame(i)) for i in range(4)]
    assert finished == [False, True, False, True]  # 59 s, 89 s (minute 1), 119 s, 149 s (minute 2)
    ring.clear(99)


async def test_ring_is_bounded_and_a_restarted_engine_starts_a_new_one(demo, monkeypatch):
    monkeypatch.setattr(ring, "KEEP_TICKS", 130)
    await fill(demo.pk, 140)
    idx = ring.index(demo.pk)
    assert idx["seq"][0] == 11 and len(idx["seq"]) == 130
    assert reads.series(demo.pk, [5]).seq[0] == 11
    assert ring.store().get(layout.chunk_key(demo.pk, 10, 0)) is None  # evicted ticks are deleted
    await fill(demo.pk, 3, start=T0 + 500, first_seq=1)  # seq went back: a new engine
    assert ring.index(demo.pk)["seq"] == [1, 2, 3]


def test_capacity_respects_the_byte_budget():
    assert ring.capacity(2048) == ring.KEEP_TICKS
    assert ring.capacity(10**7) == ring.MIN_TICKS


def test_history_api(demo):
    asyncio.run(fill(demo.pk, 70))
    get = APIClient().get
    r = get("/api/fabrics/fabrics/demo/links/5/history/?seconds=10")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["reverse"] == 5 + N // 2 and body["seq"] == list(range(61, 71))
    assert body["rate"] == [10.0 * i for i in range(60, 70)]
    assert len(body["reverse_rate"]) == 10
    r = get("/api/fabrics/fabrics/demo/links/5/history/?seconds=abc")
    assert r.status_code == 400 and "seconds" in r.json()
    r = get(f"/api/fabrics/fabrics/demo/links/{2 * N}/history/")
    assert r.status_code == 404


def test_path_api_follows_the_routing(demo):
    published(demo)
    emu = build_emulator(demo.scenario())
    f = emu.fabric
    src, dst = str(f.node_name[f.hosts[0]]), str(f.node_name[f.hosts[-1]])
    body = operator_api().get(f"/api/fabrics/fabrics/demo/path/?src={src}&dst={dst}").json()
    hops = body["hops"]
    assert hops[0]["name"] == src and hops[-1]["name"] == dst and len(hops) == 5  # host, leaf, spine, leaf, host
    assert body["links"] == [h["link"] for h in hops[:-1]]
    assert all(f.dl_dst[a] == f.dl_src[b] for a, b in zip(body["links"][:-1], body["links"][1:], strict=True))
    r = operator_api().get("/api/fabrics/fabrics/demo/path/?src=nope&dst=" + dst)
    assert r.status_code == 400 and "nope" in r.json()["src"]
    leaf = str(f.node_name[f.switches[0]])
    assert operator_api().get(f"/api/fabrics/fabrics/demo/path/?src={leaf}&dst={dst}").status_code == 400


def test_jobs_api_lists_each_jobs_hosts_and_links(demo):
    assert APIClient().get("/api/fabrics/fabrics/demo/jobs/").status_code == 503  # no engine published yet
    published(demo)
    emu = build_emulator(demo.scenario())
    body = operator_api().get("/api/fabrics/fabrics/demo/jobs/").json()
    assert [j["id"] for j in body["jobs"]] == [j.name for j in emu.jobs]
    first = body["jobs"][0]
    assert first["hosts"] == emu.jobs[0].hosts.tolist()
    f = emu.fabric
    links = np.array(first["links"])
    # every link starts or ends in the job's territory, and every host sends on its own cable
    assert set(f.dl_src[links]) >= set(first["hosts"])
    assert len(set(first["links"])) == len(first["links"])
