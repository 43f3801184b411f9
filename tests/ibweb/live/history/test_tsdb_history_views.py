"""A port's history across a cable swap and a restart, a switch's ports side by side and a job's links over its run,
through the API (issue 40), with the leader's publisher writing the embedded store as it runs."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest
from django.contrib.auth.models import User

import ibweb.live.history.job_runs as job_runs_module
import ibweb.tsdb.open as tsdb_open
from fabric_engine.health.conditions import cable_swap_alerts
from fabric_engine.scenario import build_fabric
from fabric_engine.state import FabricState
from ibweb.events.recorder import recorder_for
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.publishing import Tick
from ibweb.live.health.report import port_end
from ibweb.live.history.job_runs import JobRuns
from ibweb.live.history.tsdb_publisher import TsdbPublisher
from ibweb.runtime import record
from ibweb.tsdb.embedded import EmbeddedStore
from tests.support.access_fixtures import public_read
from tests.support.cluster_spec import PLANE

pytestmark = pytest.mark.django_db

T0 = float(int(time.time() // 600) * 600 - 1800)
URL = "/api/fabrics/fabrics/pod"
F = build_fabric(PLANE)
N = 2 * F.num_links


def state(t: float) -> FabricState:
    rate = (np.arange(N, dtype=np.float32) % 50 + 1) * 4.0  # directed link d: (d % 50 + 1) * 4 Gb/s
    return FabricState(seq=int(t), t=t, tick_s=1.0, rate_gbps=rate, util=rate / 400, xmit_wait=rate)


def run(pub: TsdbPublisher, version: str, times) -> None:
    async def ticks() -> None:
        for t in times:  # each write done before the next tick: none dropped from the writer's queue
            await pub.publish(version, Tick(state(t), F, {}))
            assert pub.writer.drain(60)

    asyncio.run(ticks())
    assert pub.writer.failed == 0 and pub.writer.dropped == 0


@pytest.fixture
def pod(tmp_path, monkeypatch, settings):
    """The fabric published with a job ``llm`` on 3 directed links, the store and the job runs in ``tmp_path`` (the
    API's job runs are those beside ``IBWEB_TSDB_PATH``)."""
    row = Fabric.objects.create(name="Pod", slug="pod", spec={"topology": PLANE}, tick_s=1.0)
    catalog = [{"id": "llm", "tenant": "acme", "pattern": "ring", "hosts": [], "links": [0, 7, 9], "spec": {}}]
    version = record.publish(row.pk, record.row_identity(row), F, None, catalog)
    store = EmbeddedStore(tmp_path / "tsdb.sqlite3")
    settings.IBWEB_TSDB_PATH = tmp_path / "tsdb.sqlite3"
    runs = JobRuns(tmp_path / "job-runs.sqlite3")
    monkeypatch.setattr(tsdb_open, "_store", store)
    monkeypatch.setattr(job_runs_module, "_runs", runs)
    assert job_runs_module.job_runs() is runs
    yield row, version, store, runs, tmp_path, monkeypatch
    runs.close()


@pytest.fixture
def superuser():
    return User.objects.create_superuser("root", password="pw-root")


def test_a_port_s_history_goes_on_across_a_cable_swap_and_a_restart(pod, client, superuser):
    row, version, store, runs, tmp_path, monkeypatch = pod
    node, port = F.node("dgx0004"), 1
    d = int(F.out_link(node, port))
    run(TsdbPublisher(row, interval_s=10, store=lambda: store, job_runs=lambda: runs), version,
        [T0 + 1 + i for i in range(60)])
    swap = {**port_end(F, node, port), "t": T0 + 35.0, "from": "MT2301FT00012", "to": "MT2317FT00456"}
    recorder_for(row.pk).apply(cable_swap_alerts([swap], F.node_name), [], 1, T0 + 35.0, fabric=F)
    store.close()  # the engine restarts: a new store on the same file, a new publisher
    again = EmbeddedStore(tmp_path / "tsdb.sqlite3")
    monkeypatch.setattr(tsdb_open, "_store", again)
    run(TsdbPublisher(row, interval_s=10, store=lambda: again, job_runs=lambda: runs), version,
        [T0 + 61 + i for i in range(60)])
    client.force_login(superuser)
    body = client.get(f"{URL}/ports/dgx0004/1/tsdb/?series=tx_bytes_per_s&start={T0}&end={T0 + 120}"
                      f"&points=12").json()
    expected = (d % 50 + 1) * 4e9 / 8
    assert None not in body["values"]  # continuous: before and after the swap, before and after the restart
    np.testing.assert_allclose(body["values"], expected, rtol=1e-3)
    assert body["swaps"] == [{"t": T0 + 35.0, "from": "MT2301FT00012", "to": "MT2317FT00456"}]
    outside = client.get(f"{URL}/ports/dgx0004/1/tsdb/?series=tx_bytes_per_s&start={T0 + 60}&end={T0 + 120}").json()
    assert outside["swaps"] == []  # the window's swaps only
    other = client.get(f"{URL}/ports/dgx0005/1/tsdb/?series=tx_bytes_per_s&start={T0}&end={T0 + 120}").json()
    assert other["swaps"] == []  # that port's swaps only
    again.close()


def test_a_switch_s_ports_side_by_side(pod, client, superuser):
    row, version, store, runs, *_ = pod
    run(TsdbPublisher(row, interval_s=10, store=lambda: store, job_runs=lambda: runs), version,
        [T0 + 1 + 10 * i for i in range(6)])
    leaf = int(F.dl_dst[F.out_link(F.node("dgx0004"), 1)])
    name = str(F.node_name[leaf])
    client.force_login(superuser)
    body = client.get(f"{URL}/nodes/{name}/tsdb/?series=utilization&start={T0}&end={T0 + 60}&points=2").json()
    cabled = [p for p in range(1, int(F.nports[leaf]) + 1) if F.out_link(leaf, p) >= 0]
    assert [p["port"] for p in body["ports"]] == cabled and body["node"] == name and len(body["t"]) == 2
    for p in body["ports"]:
        d = int(F.out_link(leaf, p["port"]))
        np.testing.assert_allclose(p["values"], (d % 50 + 1) * 4 / 400, rtol=1e-3)
        assert p["peer"] == {"node": str(F.node_name[F.dl_dst[d]]), "port": int(F.dl_dst_port[d])}
    with public_read(True):  # anonymous: hosts' names hidden in the peers
        client.logout()
        shown = client.get(f"{URL}/nodes/{name}/tsdb/?series=utilization&start={T0}&end={T0 + 60}&points=2").json()
        assert "dgx" not in str(shown) and any(p["peer"]["node"].startswith("host-") for p in shown["ports"])
        assert client.get(f"{URL}/nodes/dgx0004/tsdb/?series=utilization").status_code == 404
    client.force_login(superuser)
    assert client.get(f"{URL}/nodes/nosuch/tsdb/?series=utilization").status_code == 404
    assert client.get(f"{URL}/nodes/{name}/tsdb/?series=nosuch").status_code == 400


def test_a_job_s_links_over_its_run_also_after_it_ended(pod, client, superuser):
    row, version, store, runs, *_ = pod
    pub = TsdbPublisher(row, interval_s=10, store=lambda: store, job_runs=lambda: runs)
    run(pub, version, [T0 + 1 + 10 * i for i in range(9)])  # the job noted from T0 + 1 on
    client.force_login(superuser)
    body = client.get(f"{URL}/jobs/llm/tsdb/?start={T0}&end={T0 + 90}&points=3").json()
    assert body["running"] and body["tenant"] == "acme" and body["count"] == 3 and body["first"] == T0 + 1
    ranked = sorted([0, 7, 9], key=lambda d: -(d % 50))
    assert [(lk["node"], lk["port"]) for lk in body["links"]] == [
        (str(F.node_name[F.dl_src[d]]), int(F.dl_src_port[d])) for d in ranked]  # highest utilization first
    for lk, d in zip(body["links"], ranked, strict=True):
        np.testing.assert_allclose(lk["values"], (d % 50 + 1) * 4 / 400, rtol=1e-3)
        assert lk["value"] == pytest.approx((d % 50 + 1) * 4 / 400, rel=1e-3)
    assert len(client.get(f"{URL}/jobs/llm/tsdb/?start={T0}&end={T0 + 90}&n=1").json()["links"]) == 1
    ended = record.publish_jobs(row.pk, version, [])  # the job ended: its run is still answered
    run(pub, ended, [T0 + 91])
    after = client.get(f"{URL}/jobs/llm/tsdb/?points=3").json()
    assert not after["running"] and after["count"] == 3 and after["start"] == T0 + 1
    assert after["end"] == T0 + 101  # [start, end): one bin (the store's interval) past the last sample
    assert all(lk["values"][0] is not None for lk in after["links"])  # the run's window by default
    with public_read(True):  # below ALL and no tenant: no job, and its name not repeated
        client.logout()
        missing = client.get(f"{URL}/jobs/llm/tsdb/")
        assert missing.status_code == 404 and "llm" not in missing.content.decode()
    client.force_login(superuser)
    assert client.get(f"{URL}/jobs/nosuch/tsdb/").status_code == 404


def test_a_job_name_reused_by_another_tenant_shows_none_of_the_old_run(pod, client, superuser):
    row, version, store, runs, *_ = pod
    pub = TsdbPublisher(row, interval_s=10, store=lambda: store, job_runs=lambda: runs)
    run(pub, version, [T0 + 1 + 10 * i for i in range(3)])  # llm of acme noted
    reused = record.publish_jobs(row.pk, version, [
        {"id": "llm", "tenant": "globex", "pattern": "ring", "hosts": [], "links": [3], "spec": {}}])
    client.force_login(superuser)
    stale = client.get(f"{URL}/jobs/llm/tsdb/")  # not noted yet: the run is acme's, the catalog's job globex's
    assert stale.status_code == 404 and "acme" not in stale.content.decode() and "llm" not in stale.content.decode()
    run(pub, reused, [T0 + 31])  # noted: a new run of globex's job, on its own links only
    body = client.get(f"{URL}/jobs/llm/tsdb/?start={T0}&end={T0 + 40}").json()
    assert body["tenant"] == "globex" and body["first"] == T0 + 31 and body["count"] == 1
    d = 3
    assert [(lk["node"], lk["port"]) for lk in body["links"]] == [(str(F.node_name[F.dl_src[d]]),
                                                                  int(F.dl_src_port[d]))]


def test_a_job_s_links_are_ranked_on_one_bin_and_charted_for_the_n_kept(pod, client, superuser, monkeypatch):
    import ibweb.live.api.job_tsdb_views as views

    row, version, store, runs, *_ = pod
    run(TsdbPublisher(row, interval_s=10, store=lambda: store, job_runs=lambda: runs), version,
        [T0 + 1 + 10 * i for i in range(9)])
    asked = []
    ranges = store.ranges
    monkeypatch.setattr(store, "ranges", lambda fid, ports, *a: asked.append((len(ports), a[-1])) or ranges(
        fid, ports, *a))
    monkeypatch.setattr(views, "MAX_JOB_PORTS", 2)  # a job past the cap: two of its three ports ranked
    client.force_login(superuser)
    body = client.get(f"{URL}/jobs/llm/tsdb/?start={T0}&end={T0 + 90}&points=400&n=1").json()
    assert asked == [(2, 1), (1, 400)]  # every port considered at one bin, the n kept at full resolution
    assert body["count"] == 3 and len(body["links"]) == 1 and len(body["links"][0]["values"]) == 400
    considered = sorted((int(F.guid[F.dl_src[d]]), int(F.dl_src_port[d]), d) for d in (0, 7, 9))[:2]
    best = max(considered, key=lambda g: g[2] % 50)[2]
    assert (body["links"][0]["node"], body["links"][0]["port"]) == (str(F.node_name[F.dl_src[best]]),
                                                                    int(F.dl_src_port[best]))


def test_an_ended_job_s_run_is_answered_without_a_published_record_with_its_last_sample(pod, client, superuser):
    row, version, store, runs, *_ = pod
    pub = TsdbPublisher(row, interval_s=10, store=lambda: store, job_runs=lambda: runs)
    run(pub, version, [T0 + 10 * i for i in range(10)])  # samples on the store's bucket edges
    run(pub, record.publish_jobs(row.pk, version, []), [T0 + 100])  # ended: last seen at T0 + 100
    record.forget(row.pk)  # then the engine stopped: no record
    client.force_login(superuser)
    body = client.get(f"{URL}/jobs/llm/tsdb/?points=11").json()
    assert not body["running"] and body["count"] == 3 and len(body["links"]) == 3
    assert (body["start"], body["end"]) == (T0, T0 + 110)  # [first, last + one interval): the last sample in
    assert all(None not in lk["values"] for lk in body["links"])
    assert all(lk["node"] is None and lk["guid"].startswith("0x") for lk in body["links"])  # no fabric to name them
    assert client.get(f"{URL}/jobs/nosuch/tsdb/").status_code == 503  # no run, no record: not published yet
