"""History around an outage (issue 35): the ring says which ticks a cable was down, the embedded ring survives a
restart (the one-minute summaries of down and uncovered time: ``tests/ibweb/live/api/test_rollup_views.py``)."""

import asyncio
import json
import time

import numpy as np
import pytest
from django.core.cache.backends.locmem import LocMemCache
from rest_framework.test import APIClient

from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.history import layout, reads, ring
from ibweb.live.history import ring_files as history_disk
from ibweb.live.history.link_identity import identities
from ibweb.runtime import record

pytestmark = pytest.mark.django_db

T0 = float(int(time.time() // 60) * 60 - 900)  # a minute boundary, fifteen minutes ago
F_A = fat_tree(hosts=8, radix=4)
CUT = 8  # leaf01:3 - spine01:1
F_B = F_A.without_links([CUT])
N = 2 * F_A.num_links


def rates(f) -> np.ndarray:
    """A rate per directed link, unique per identity: 1 + its index in F_A (exact in float16)."""
    return (1.0 + np.searchsorted(np.sort(identities(F_A)), identities(f))).astype(np.float32)


@pytest.fixture
def row():
    fabric, _ = ensure_demo()
    ring.clear(fabric.pk)
    yield fabric
    ring.clear(fabric.pk)


def play(fabric, ticks: list[tuple[float, object, np.ndarray | None]]) -> None:
    """Record ``(t, engine fabric, missing mask)`` ticks, numbered from 1, each fabric under its own version."""
    versions = {id(f): record.publish(fabric.pk, record.row_identity(fabric), f, None) for f in {id(f): f for _, f, _ in
                                                                                               ticks}.values()}

    async def run() -> None:
        for seq, (t, f, missing) in enumerate(ticks, start=1):
            r = rates(f)
            await ring.record(fabric.pk, seq, t, r, r / 400, topology=versions[id(f)], fabric=f, missing=missing,
                              tick_s=1.0)

    asyncio.run(run())


def test_series_says_which_ticks_a_cable_was_down(row):
    play(row, [(T0 + i, F_A if i < 5 else F_B, None) for i in range(8)])
    d = int(record.fabric(row.pk, record.head_of(row)) is not None)  # published
    assert d == 1
    body = APIClient().get(f"/api/fabrics/fabrics/demo/ports/leaf01/{F_A.a_port[CUT]}/history/?seconds=60").json()
    assert body["down"] == [False] * 5 + [True] * 3 and body["tick_s"] == 1.0
    assert body["util"][5:] == [None] * 3 and body["util"][0] is not None


@pytest.fixture
def embedded(settings, tmp_path, monkeypatch):
    """The embedded default's history (a local-memory cache mirrored under ``tmp_path``), and a way to restart it."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.IBWEB_HISTORY_DIR = tmp_path
    monkeypatch.setattr(ring, "_private", None)
    monkeypatch.setattr(ring, "_disk", None)
    monkeypatch.setattr(ring, "_rings", {})

    def restart() -> None:  # what a new process has: nothing in memory
        ring._private, ring._disk = None, None
        ring._rings.clear()
        with ring._memo_lock:
            ring._memo.clear()

    return restart


def test_the_embedded_ring_survives_a_restart_bounded_on_disk(row, embedded, tmp_path, monkeypatch):
    monkeypatch.setattr(ring, "KEEP_TICKS", 130)
    monkeypatch.setattr(history_disk, "FLUSH_S", 0.0)  # every tick written (the default: every 3 s)
    play(row, [(T0 + i, F_A if i < 100 else F_B, None) for i in range(140)])
    assert isinstance(ring.store(), LocMemCache)
    files = sorted(p.name for p in (tmp_path / str(row.pk)).iterdir())
    assert len([f for f in files if f.endswith(".f16")]) == 130 and "10.f16" not in files and "11.f16" in files
    assert len([f for f in files if f.startswith("topo-")]) == 2 and not [f for f in files if f.endswith(".tmp")]
    before = reads.port_series(row.pk, int(F_A.guid[F_A.a_node[CUT]]), int(F_A.a_port[CUT]))
    embedded()
    assert ring.last_seq(row.pk) == 140 and ring.index(row.pk)["seq"] == list(range(11, 141))
    after = reads.port_series(row.pk, int(F_A.guid[F_A.a_node[CUT]]), int(F_A.a_port[CUT]))
    assert np.array_equal(after.seq, before.seq) and np.array_equal(after.down, before.down) and after.down.any()
    assert np.allclose(after.rate, before.rate, equal_nan=True)
    r = rates(F_B)
    asyncio.run(ring.record(row.pk, 141, T0 + 140, r, r / 400))  # the restarted engine continues the ring
    assert ring.index(row.pk)["seq"][-2:] == [140, 141]


def test_a_tick_lost_in_a_crash_is_left_out(row, embedded, tmp_path, monkeypatch):
    monkeypatch.setattr(history_disk, "FLUSH_S", 0.0)
    play(row, [(T0 + i, F_A, None) for i in range(5)])
    (tmp_path / str(row.pk) / "3.f16").write_bytes(b"torn")
    embedded()
    assert ring.index(row.pk)["seq"] == [1, 2, 4, 5]


def test_a_stop_writes_the_ticks_not_written_yet(row, embedded, tmp_path, settings):
    """The cause of issue 35's lost history: ticks are written every FLUSH_S seconds, and those of the last
    interval were lost at every stop; the restarted engine then numbered its ticks after the last one written,
    giving the stopped server's last numbers to other ticks. The server's stop (its lifespan's shutdown)
    writes them."""
    from ibweb.live.engine.lifespan import EngineLifespan

    settings.IBWEB_ENGINE_EMBEDDED, settings.REDIS_URL = False, ""
    assert history_disk.FLUSH_S >= 1  # the default interval: tick 1 written at once, 2-5 wait for the next write
    play(row, [(T0 + i, F_A, None) for i in range(5)])
    assert json.loads((tmp_path / str(row.pk) / "index.json").read_text())["seq"] == [1]
    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent = []

    async def receive() -> dict:
        return messages.pop(0)

    async def send(message: dict) -> None:
        sent.append(message["type"])

    asyncio.run(EngineLifespan()({"type": "lifespan"}, receive, send))
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    embedded()  # a new process
    assert ring.last_seq(row.pk) == 5 and ring.index(row.pk)["seq"] == [1, 2, 3, 4, 5]


def test_a_write_keeps_the_ticks_recorded_after_its_index_for_the_next(tmp_path):
    disk = history_disk.RingFiles(tmp_path)
    index = {"n": 2, "chunk": layout.CHUNK, "tick_s": 1.0, "seq": [1], "t": [T0], "runs": [[1, None, 2]]}
    disk.add(1, 1, [b"a" * 8])
    disk.add(1, 2, [b"b" * 8])  # recorded while the write of ``index`` (tick 1 only) was under way
    disk.flush(1, index, {})
    assert sorted(p.name for p in (tmp_path / "1").iterdir()) == ["1.f16", "index.json"] and disk.pending() == [1]
    disk.flush(1, {**index, "seq": [1, 2], "t": [T0, T0 + 1]}, {})
    assert (tmp_path / "1" / "2.f16").read_bytes() == b"b" * 8 and disk.pending() == []
    loaded, ticks, _ = disk.load(lambda n: [4 * n])[1]
    assert loaded["seq"] == [1, 2] and ticks[2] == [b"b" * 8]


def _disk_newest(root) -> int:
    """The newest tick of the (one) fabric's ring on disk, 0 before the first write."""
    found = [json.loads(p.read_text())["seq"] for p in root.glob("*/index.json")]
    return max(found[0], default=0) if found else 0


@pytest.mark.services
def test_a_restarted_embedded_server_keeps_the_recent_history(tmp_path):
    """A real server without Redis, stopped (SIGTERM) and started again on the same var dir: every tick it served
    is still served, the sequence continues after its last one, and the stop is a gap in time."""
    from tests.support.server import running_server

    path = "/api/fabrics/fabrics/demo/links/0/history/?seconds=3600"
    with running_server(tmp_path, {"REDIS_URL": ""}, name="first") as server:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # 8 ticks, the newest not on disk yet (written every 3 s): a stop then
            before = server.get_json(path)  # lost them, and the next server numbered its ticks over them
            if len(before["seq"]) >= 8 and before["seq"][-1] > _disk_newest(tmp_path / "history"):
                break
            time.sleep(0.2)
        server.proc.terminate()
        server.proc.wait(60)  # a graceful stop, however slow (a stop after 10 s would kill it)
    assert len(before["seq"]) >= 8 and "Application shutdown complete" in server.log.read_text()
    time.sleep(3)  # a gap the chart shows
    restarted = time.time()
    with running_server(tmp_path, {"REDIS_URL": ""}, name="second") as server:
        deadline = time.monotonic() + 30
        while (after := server.get_json(path))["t"][-1] <= restarted and time.monotonic() < deadline:
            time.sleep(0.5)  # until the second server's own ticks
        log = server.log.read_text()
    detail = (before["seq"], after["seq"], log[-6000:])
    served = dict(zip(after["seq"], after["t"], strict=True))
    assert [served.get(s) for s in before["seq"]] == before["t"], detail  # each tick kept, its number not reused
    assert after["seq"] == list(range(after["seq"][0], after["seq"][-1] + 1)), detail  # no number twice or skipped
    # the first server may still have ticked (and written, at its stop) after ``before`` was read: the stop is a
    # gap longer than 3 ticks after the last tick of ``before``, then the second server's ticks (new numbers)
    times = [t for s, t in zip(after["seq"], after["t"], strict=True) if s >= before["seq"][-1]]
    assert times[-1] > restarted and max(b - a for a, b in zip(times, times[1:], strict=False)) > 3 * after["tick_s"]
