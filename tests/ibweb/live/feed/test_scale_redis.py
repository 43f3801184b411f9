"""Several web processes on the Redis channel layer (issue 10); slow clients: ``test_slow_client.py``."""

import asyncio
import json

import pytest
import websockets

from tests.support.server import running_server
from tests.support.services import require_redis

# Real Redis and PostgreSQL in their own processes already; `make test-services` does not repeat them.
pytestmark = pytest.mark.services



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
