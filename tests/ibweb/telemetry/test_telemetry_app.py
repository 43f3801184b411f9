"""The telemetry app: sweeps (drop directory, commands through Celery with shards), engine, push API, /metrics."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import stat
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from rest_framework.test import APIClient

from fabric_engine.state import FabricState
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed.frame_store import snapshot_parts
from ibweb.runtime import record
from ibweb.runtime.metrics import CounterRecorder
from ibweb.telemetry import store
from ibweb.telemetry.choices import CollectorSource, SweepStatus
from ibweb.telemetry.models import CollectorConfig, PushToken, Sweep
from ibweb.telemetry.sweeps import run_sweep
from ibweb.telemetry.tasks import schedule_sweeps, sweep_fabric
from tests.support.engine_fixtures import newest_v1_frame
from tests.support.tenancy_fixtures import operator_api

DATA = Path(__file__).parents[2] / "data" / "telemetry"
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()
    yield
    cache.clear()


def make_config(slug: str, **kw) -> CollectorConfig:
    fabric = Fabric.objects.create(name=slug, slug=slug, mode=FabricMode.TELEMETRY, tick_s=1.0)
    return CollectorConfig.objects.create(fabric=fabric, **kw)


def bump(text: str, counter: str, port: int, by: int) -> str:
    """The perfquery text with ``counter`` of ``port`` raised by ``by``."""
    blocks = re.split(r"(?=^# Port)", text, flags=re.M)
    out = []
    for b in blocks:
        if re.match(rf"# Port .*port {port} ", b):
            b = re.sub(rf"^({counter}:\.+)(\d+)$", lambda m: m.group(1) + str(int(m.group(2)) + by), b, flags=re.M)
        out.append(b)
    return "".join(out)


def drop(dirpath: Path, t: float, extra_words: int = 0) -> None:
    dirpath.mkdir(exist_ok=True)
    shutil.copy(DATA / "iblinkinfo.txt", dirpath / "iblinkinfo.txt")
    ext = bump((DATA / "perfquery_ext_loop.txt").read_text(), "PortXmitData", 3, extra_words)
    (dirpath / "perfquery-x-2.txt").write_text(ext)
    (dirpath / "perfquery-2.txt").write_text((DATA / "perfquery_loop.txt").read_text())
    for p in dirpath.glob("perfquery*.txt"):
        os.utime(p, (t, t))


def test_a_sweep_keeps_the_lines_its_readers_skipped(tmp_path):  # issue 22: captured terminal text
    config = make_config("cap", source=CollectorSource.DIRECTORY, drop_dir=str(tmp_path / "drop"))
    drop(tmp_path / "drop", time.time() - 2.0)
    pq = tmp_path / "drop" / "perfquery-x-2.txt"
    pq.write_text("[root@ufm01 ~]# perfquery -x 2 255\n" + pq.read_text() + "[root@ufm01 ~]# ")
    sweep = run_sweep(config)
    assert sweep.status == SweepStatus.OK and sweep.ports == 4
    assert [(w["line"], w["reason"]) for w in sweep.warnings][:1] == [(1, "shell prompt")]
    assert len(sweep.warnings) == 2 and sweep.warnings[0]["source"].endswith("perfquery-x-2.txt")


def test_drop_directory_sweeps_feed_the_engine(tmp_path):
    config = make_config("lab", source=CollectorSource.DIRECTORY, drop_dir=str(tmp_path / "drop"))
    now = time.time()
    drop(tmp_path / "drop", now - 2.0)
    first = run_sweep(config)
    assert first.status == SweepStatus.OK and first.ports == 4 and first.failures == [] and first.warnings == []
    engine = FabricRunner(config.fabric)
    asyncio.run(engine.start())
    assert engine.source.fabric.num_links == 16
    assert record.head(config.fabric_id)["name"] == "lab" and asyncio.run(snapshot_parts(config.fabric_id))
    # 125e6 more words in 2 s out of leaf01 port 3 = 250 MB/s = 2 Gb/s of an SDR 4x (8 Gb/s) link
    drop(tmp_path / "drop", now, extra_words=125_000_000)
    second = run_sweep(config)
    assert second.status == SweepStatus.OK
    seq = asyncio.run(engine.tick())
    frame = newest_v1_frame(config.fabric_id)
    assert seq == 1 and frame["seq"] == 1 and len(frame["rate"]) == 32
    prev, newest = store.sweeps(config.fabric_id)
    state = engine.source.state(prev, newest, now + 0.5, engine.seq)
    d = engine.source.fabric.out_link(engine.source.fabric.node("leaf01"), 3)
    # ibsim's own MAD traffic is in the captured counters; the bump dominates
    assert state.rate_gbps[d] == pytest.approx(2.0, rel=1e-6)
    assert state.util[d] == pytest.approx(0.25, rel=1e-6)
    stale = [a for a in state.alerts if a["kind"] == "stale"]
    assert stale and stale[0]["count"] > 0  # the other switches were not in the drop directory
    # metrics: the newest raw counters
    text = APIClient().get("/metrics", {"fabric": "lab"}).content.decode()
    assert re.search(r'infiniband_port_transmit_data_bytes_total\{fabric="lab",guid="0x98039b0300000001",port="3",'
                     r'name="leaf01",remote_guid="0x98039b0300000005",remote_port="1",remote_name="spine01"\} \d+',
                     text)


class CountingCache:
    """The cache as :mod:`ibweb.telemetry.store` sees it, recording each read's keys."""

    def __init__(self, real) -> None:
        self.real, self.reads = real, []

    def get(self, key, *a, **kw):
        self.reads.append([key])
        return self.real.get(key, *a, **kw)

    def get_many(self, keys, *a, **kw):
        self.reads.append(list(keys))
        return self.real.get_many(keys, *a, **kw)

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_an_unchanged_sweep_costs_one_small_cache_read_per_tick(tmp_path, monkeypatch):
    """Issue 15: the source reads the two sweep entries (15-30 MB at 32,768 GPUs) only when a new sweep landed."""
    config = make_config("ticks", source=CollectorSource.DIRECTORY, drop_dir=str(tmp_path / "drop"))
    now = time.time()
    drop(tmp_path / "drop", now - 2.0)
    run_sweep(config)
    drop(tmp_path / "drop", now, extra_words=125_000_000)
    run_sweep(config)
    engine = FabricRunner(config.fabric)
    asyncio.run(engine.start())
    counting = CountingCache(cache)
    monkeypatch.setattr(store, "cache", counting)
    asyncio.run(engine.tick())  # the source has no entries yet: it reads them
    ids_key = f"ibweb:telemetry:{config.fabric_id}:sweep_ids"
    assert counting.reads[0] == [ids_key] and len(counting.reads) == 2 and len(counting.reads[1]) == 2
    first = newest_v1_frame(config.fabric_id)
    counting.reads.clear()
    for _ in range(3):
        asyncio.run(engine.tick())
    assert counting.reads == [[ids_key]] * 3  # one key of a few bytes per tick
    assert newest_v1_frame(config.fabric_id)["rate"] == first["rate"]  # the same sweeps, the same rates
    monkeypatch.setattr(store, "cache", cache)
    third = run_sweep(config)  # a new sweep: the next tick reads the entries again
    monkeypatch.setattr(store, "cache", counting)
    counting.reads.clear()
    asyncio.run(engine.tick())
    assert counting.reads[0] == [ids_key] and len(counting.reads) == 2
    assert engine.source._entries[1]["id"] == third.pk


def test_old_data_is_published_as_stale(tmp_path):
    config = make_config("old", source=CollectorSource.DIRECTORY, drop_dir=str(tmp_path / "d"), stale_after_s=5.0)
    drop(tmp_path / "d", time.time() - 100)
    run_sweep(config)
    run_sweep(config)
    engine = FabricRunner(config.fabric)
    asyncio.run(engine.start())
    prev, newest = store.sweeps(config.fabric_id)
    state = engine.source.state(prev, newest, newest["t"] + 60.0, engine.seq)
    assert (state.rate_gbps == 0).all() and state.stale.all()  # no rate, and said so link by link
    assert any(a["kind"] == "stale" and "old" in a["message"] for a in state.alerts)


FAKE_TOOLS = """#!/bin/sh
# Stands in for iblinkinfo/perfquery: prints captured ibsim outputs; LID 6 hangs.
tool="$1"; shift
case "$tool" in
  iblinkinfo) cat "$DATA/iblinkinfo.txt" ;;
  perfquery)
    if [ "$1" = "-x" ]; then ext=1; shift; else ext=0; fi
    lid="$2"
    if [ "$lid" = "6" ]; then exec sleep 30; fi
    if [ "$lid" != "2" ]; then echo "ibwarn: no such lid" >&2; exit 255; fi
    if [ "$ext" = 1 ]; then cat "$DATA/perfquery_ext_loop.txt"; else cat "$DATA/perfquery_loop.txt"; fi ;;
  *) exit 2 ;;
esac
"""


def test_command_sweep_in_shards_with_failures_and_a_hanging_tool(tmp_path):
    script = tmp_path / "fake-diags"
    script.write_text(FAKE_TOOLS)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    config = make_config("cmd", command_prefix=[str(script)], environment={"DATA": str(DATA)}, timeout_s=1.0,
                         shard_size=2)
    t0 = time.monotonic()
    pk = sweep_fabric.delay(config.pk).get()
    took = time.monotonic() - t0
    sweep = Sweep.objects.get(pk=pk)
    assert sweep.shards == 3 and sweep.status == SweepStatus.PARTIAL and sweep.ports == 4
    by_lid = {f["target"]: f["error"] for f in sweep.failures}
    assert set(by_lid) == {3, 4, 5, 6, 7}
    assert "no answer within 1 s" in by_lid[6] and "exit 255" in by_lid[3]
    assert took < 10
    assert sweep.duration_s is not None and sweep.age_s is not None
    _, newest = store.sweeps(config.fabric_id)
    assert newest["id"] == pk and sorted(newest["samples"].port.tolist()) == [1, 2, 3, 4]
    api = operator_api().get("/api/telemetry/sweeps/", {"fabric": "cmd"}).json()
    assert api["results"][0]["status"] == "partial" and len(api["results"][0]["failures"]) == 5


def test_discovery_failure_is_recorded(tmp_path):
    config = make_config("nodisc", command_prefix=[sys.executable, "-c", "import sys; sys.exit(3)"])
    sweep = Sweep.objects.get(pk=sweep_fabric.delay(config.pk).get())
    assert sweep.status == SweepStatus.FAILED and sweep.failures[0]["shard"] == "discovery"


def test_beat_starts_only_due_sweeps(tmp_path):
    due = make_config("due", source=CollectorSource.DIRECTORY, drop_dir=str(tmp_path / "a"))
    drop(tmp_path / "a", time.time())
    make_config("pushed", source=CollectorSource.PUSH)
    emulated = Fabric.objects.create(name="emu", slug="emu")
    CollectorConfig.objects.create(fabric=emulated, source=CollectorSource.DIRECTORY, drop_dir=str(tmp_path / "a"))
    assert schedule_sweeps() == [due.pk]
    assert schedule_sweeps() == []  # just swept
    assert Sweep.objects.filter(config=due).count() == 1


def test_push_endpoint_authenticates_and_validates():
    config = make_config("pushed", source=CollectorSource.PUSH)
    other = make_config("other", source=CollectorSource.PUSH)
    token, raw = PushToken.issue(config, "collector-1")
    _, raw_other = PushToken.issue(other, "x")
    assert token.digest != raw and len(raw) > 30
    url = "/api/telemetry/fabrics/pushed/samples/"
    linkinfo = (DATA / "iblinkinfo.txt").read_text()
    sample = {"lid": 2, "port": 3, "t": time.time(), "extended": True, "counters": {"PortXmitData": 1000}}
    client = APIClient()
    assert client.post(url, {"samples": [sample]}, format="json").status_code == 401
    client.credentials(HTTP_AUTHORIZATION="Bearer nope")
    assert client.post(url, {"samples": [sample]}, format="json").status_code == 401
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_other}")
    assert client.post(url, {"samples": [sample]}, format="json").status_code == 403
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    r = client.post(url, {"samples": [sample]}, format="json")
    assert r.status_code == 400 and "iblinkinfo" in r.json()
    bad = {**sample, "counters": {"Bogus": 1}}
    r = client.post(url, {"samples": [bad], "iblinkinfo": linkinfo}, format="json")
    assert r.status_code == 400 and "unknown counter" in r.json()["samples"][0]
    r = client.post(url, {"samples": [sample], "iblinkinfo": linkinfo}, format="json")
    assert r.status_code == 201 and r.json()["source"] == "push" and r.json()["ports"] == 1
    r = client.post(url, {"samples": [{**sample, "t": sample["t"] + 1, "counters": {"PortXmitData": 3000}}]},
                    format="json")
    assert r.status_code == 201
    prev, newest = store.sweeps(config.fabric_id)
    assert prev is not None and newest["id"] == r.json()["id"]
    token.refresh_from_db()
    assert token.last_used is not None


def test_push_is_rate_limited_per_token(monkeypatch):
    from django.core.cache import cache

    from ibweb.telemetry.api.views import PushRateThrottle

    cache.clear()
    monkeypatch.setattr(PushRateThrottle, "THROTTLE_RATES", {"push": "3/min"})
    config = make_config("limited", source=CollectorSource.PUSH)
    _, raw = PushToken.issue(config, "collector-1")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    url = "/api/telemetry/fabrics/limited/samples/"
    codes = [client.post(url, {"samples": []}, format="json").status_code for _ in range(5)]
    assert 429 not in codes[:3] and codes[3:] == [429, 429]
    assert "Retry-After" in client.post(url, {"samples": []}, format="json")


def test_metrics_for_an_emulated_fabric_integrate_engine_rates():
    fabric = Fabric.objects.create(name="emu", slug="emu")
    f = fat_tree(hosts=8, radix=4)
    version = record.publish(fabric.pk, record.row_identity(fabric), f, None)
    rate = np.full(2 * f.num_links, 8.0, np.float32)  # 1 GB/s on every directed link
    recorder = CounterRecorder(fabric.pk)
    for k in range(3):
        recorder.add(f, FabricState(k + 1, time.time(), 1.0, rate, rate / 400), version=version)
    r = APIClient().get("/metrics")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/plain; version=0.0.4")
    text = r.content.decode()
    first = next(ln for ln in text.splitlines() if ln.startswith("infiniband_port_transmit_data_bytes_total{"))
    assert 'fabric="emu"' in first
    # the first tick is written at once; the next two within the throttle interval only in process
    assert first.endswith(" 1000000000")
    assert "# TYPE infiniband_port_transmit_wait_total counter" not in text or "transmit_wait_total{" in text
    assert 'infiniband_counters_age_seconds{fabric="emu"}' in text


def test_metrics_serve_no_counters_of_another_record_version():
    """The counters follow the directed links of one record version; a newer topology is not served with them."""
    fabric = Fabric.objects.create(name="emu", slug="emu")
    row = record.row_identity(fabric)
    f = fat_tree(hosts=8, radix=4)
    version = record.publish(fabric.pk, row, f, None)
    rate = np.full(2 * f.num_links, 8.0, np.float32)
    recorder = CounterRecorder(fabric.pk)
    recorder.add(f, FabricState(1, time.time(), 1.0, rate, rate / 400), version=version)
    text = APIClient().get("/metrics").content.decode()
    before = [ln for ln in text.splitlines() if ln.startswith("infiniband_port_transmit_data_bytes_total{")]
    assert before
    bigger = fat_tree(hosts=16, radix=8)
    newer = record.publish(fabric.pk, row, bigger, None)  # the topology changed; no tick counted it yet
    text = APIClient().get("/metrics").content.decode()
    assert 'fabric="emu"' not in text and "infiniband_port_transmit_data_bytes_total{" not in text
    rate = np.full(2 * bigger.num_links, 8.0, np.float32)
    recorder.add(bigger, FabricState(2, time.time(), 1.0, rate, rate / 400), version=newer)  # written at once
    text = APIClient().get("/metrics").content.decode()
    ports = [ln for ln in text.splitlines() if ln.startswith("infiniband_port_transmit_data_bytes_total{")]
    assert len(ports) == 2 * len(before) and all(ln.endswith(" 1000000000") for ln in ports)


def test_config_validation():
    fabric = Fabric.objects.create(name="v", slug="v", mode=FabricMode.TELEMETRY)
    with pytest.raises(ValidationError, match="command_prefix"):
        CollectorConfig(fabric=fabric, command_prefix="sudo").clean()
    with pytest.raises(ValidationError, match="thresholds"):
        CollectorConfig(fabric=fabric, thresholds={"PortXmitData": 1}).clean()
    with pytest.raises(ValidationError, match="drop_dir"):
        CollectorConfig(fabric=fabric, source=CollectorSource.DIRECTORY).clean()
    ok = CollectorConfig(fabric=fabric, thresholds={"SymbolErrorCounter": 50})
    ok.clean()
    assert ok.alert_thresholds().per_minute["SymbolErrorCounter"] == 50.0
