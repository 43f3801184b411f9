"""Several web processes on the Redis channel layer, and a slow client (issue 10)."""

import asyncio
import json
import time
from pathlib import Path

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
    with running_server(tmp_path, fabrics=[FAST]) as server:
        url = f"{server.ws_url}/ws/fabrics/fast/live/"

        async def scenario():
            stalled = await websockets.connect(url, max_size=None, max_queue=1)  # never read from
            await asyncio.sleep(3)  # let the socket buffers fill
            got = []
            async with websockets.connect(url, max_size=None) as ws:
                await ws.recv()
                # warm up first (this socket's buffers, the allocator's arenas of the server's threads)
                end = time.monotonic() + 4
                while time.monotonic() < end:
                    await asyncio.wait_for(ws.recv(), 5)
                before = rss_kib(server.proc.pid)
                end = time.monotonic() + 12
                while time.monotonic() < end:
                    text = await asyncio.wait_for(ws.recv(), 5)
                    frame = json.loads(text)
                    got.append((frame["seq"], time.time() - frame["t"], len(text)))
            after = rss_kib(server.proc.pid)
            stalled.transport.abort()
            return before, after, got

        before, after, got = asyncio.run(scenario())
    assert len(got) >= 40, f"the reading client got only {len(got)} frames in 12 s at 10 frames/s"
    assert max(lag for _, lag, _ in got[5:]) < 2.0
    # Queuing frames for the stalled client would hold every frame sent while it stalled; the server also keeps
    # a bounded history of recent ticks, so allow half of that queue's size.
    queued_kib = sum(size for *_, size in got) / 1024
    assert after - before < 0.5 * queued_kib, f"RSS grew {after - before} KiB; a queue would be {queued_kib:.0f} KiB"
