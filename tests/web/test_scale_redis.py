"""Several web processes on the Redis channel layer, and a slow client (issue 10)."""

import asyncio
import json
import time
from pathlib import Path

import numpy as np
import pytest
import websockets

from tests.server import running_server
from tests.services import require_redis

# Real Redis and PostgreSQL in their own processes already; `make test-services` does not repeat them.
pytestmark = pytest.mark.services

FAST = {"name": "Fast 2048", "slug": "fast", "tick_s": 0.1,
        "spec": {"topology": {"generator": "fat_tree", "hosts": 2048, "radix": 64},
                 "jobs": [{"name": "big", "tenant": "acme", "hosts": 1024, "placement": "scattered"}],
                 "background": {"fraction": 0.5, "gbps": 50}}}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def frames(url: str, count: int) -> list[dict]:
    """The first ``count`` frames after the snapshot (progress messages, e.g. of a standby's start, skipped)."""
    async with websockets.connect(url, max_size=None) as ws:
        snap = json.loads(await asyncio.wait_for(ws.recv(), 30))
        while snap["type"] == "progress":
            snap = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert snap["type"] == "snapshot"
        got = []
        while len(got) < count:
            msg = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if msg["type"] == "frame":
                got.append(msg)
        return got


def test_clients_on_two_web_processes_receive_the_same_frames(tmp_path):
    env = {"REDIS_URL": require_redis(db=8)}
    with running_server(tmp_path, extra_env=env, name="web1") as one, \
            running_server(tmp_path, extra_env=env, name="web2") as two:

        async def both():
            return await asyncio.gather(frames(f"{one.ws_url}/ws/fabrics/demo/live/", 4),
                                        frames(f"{two.ws_url}/ws/fabrics/demo/live/", 4))

        a, b = asyncio.run(both())
    by_seq_a = {f["seq"]: f for f in a}
    common = [s for s in (f["seq"] for f in b) if s in by_seq_a]
    assert len(common) >= 3, ([f["seq"] for f in a], [f["seq"] for f in b])
    for seq in common:
        other = next(f for f in b if f["seq"] == seq)
        assert other["util"] == by_seq_a[seq]["util"] and other["t"] == by_seq_a[seq]["t"]


def test_a_client_that_reads_nothing_does_not_grow_server_memory_or_slow_others(tmp_path):
    # The shortest history ring (120 ticks, 12 s at this fabric's 0.1 s tick), so that it is full before measuring.
    with running_server(tmp_path, fabrics=[FAST], extra_env={"IBWEB_HISTORY_TICKS": "120"}) as server:
        url = f"{server.ws_url}/ws/fabrics/fast/live/"

        async def scenario():
            stalled = await websockets.connect(url, max_size=None, max_queue=1)  # never read from
            got, rss = [], []
            async with websockets.connect(url, max_size=None) as ws:
                await ws.recv()
                # warm up: the history ring full, this socket's buffers and the server threads' arenas allocated
                seq, end = 0, time.monotonic() + 4
                while seq < 150 or time.monotonic() < end:
                    seq = json.loads(await asyncio.wait_for(ws.recv(), 5)).get("seq", seq)
                start = time.monotonic()
                while time.monotonic() < start + 20:
                    text = await asyncio.wait_for(ws.recv(), 5)
                    frame = json.loads(text)
                    got.append((frame["seq"], time.time() - frame["t"], len(text)))
                    if not rss or time.monotonic() - rss[-1][0] >= 0.5:
                        rss.append((time.monotonic() - start, rss_kib(server.proc.pid)))
            stalled.transport.abort()
            return got, rss

        got, rss = asyncio.run(scenario())
    assert len(got) >= 80, f"the reading client got only {len(got)} frames in 20 s at 10 frames/s"
    assert max(lag for _, lag, _ in got[5:]) < 2.0
    # Queuing frames for the stalled client would grow the server by every frame sent; a bounded server's RSS
    # only fluctuates (allocator, rollups). The fitted slope is robust to those swings, the end points are not.
    queue_kib_s = sum(size for *_, size in got) / 1024 / 20
    slope_kib_s = float(np.polyfit(*np.array(rss, dtype=float).T, 1)[0])
    assert slope_kib_s < 0.5 * queue_kib_s, f"RSS grew {slope_kib_s:.0f} KiB/s; a queue would grow {queue_kib_s:.0f}"
