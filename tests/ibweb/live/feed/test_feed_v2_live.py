"""Feed protocol v2 on a running server: real uvicorn, real websockets clients, the documented client (issue 15)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import websockets

from fabric_engine.feed_v2 import decode_frame
from tests.support.server import running_server

DOC = Path(__file__).resolve().parents[4] / "docs" / "feed-protocol.md"
SECTIONS = ("totals", "jobs", "alerts", "hotspots", "sharp", "storage", "twin", "congestion_tree")


def documented_client():
    """``decode_v2`` as docs/feed-protocol.md writes it."""
    code = DOC.read_text().split("A minimal client, numpy only")[1].split("```python\n")[1].split("```")[0]
    scope: dict = {}
    exec(compile(code, str(DOC), "exec"), scope)  # noqa: S102 - the doc's own example
    return scope["decode_v2"]


async def frames_of(server, query: str, cookie: str | None, count: int) -> tuple[dict, dict]:
    """The snapshot and ``count`` frames, by seq, of one socket (``query``: "" or "?v=2")."""
    headers = {"Cookie": cookie} if cookie else {}
    async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/{query}", max_size=None,
                                  origin=server.url, additional_headers=headers) as ws:
        snapshot = json.loads(await asyncio.wait_for(ws.recv(), 30))
        frames = {}
        while len(frames) < count:
            msg = await asyncio.wait_for(ws.recv(), 15)
            if isinstance(msg, bytes):
                frames[decode_frame(msg)[0]["seq"]] = msg
            elif json.loads(msg).get("type") == "frame":
                frame = json.loads(msg)
                frames[frame["seq"]] = frame
        return snapshot, frames


def test_v2_frames_on_a_real_server_decode_with_the_documented_client(tmp_path):
    decode_v2 = documented_client()

    async def clients(server):
        return await asyncio.gather(*(frames_of(server, query, cookie, 4) for cookie in (server.cookie, None)
                                      for query in ("", "?v=2")))

    with running_server(tmp_path) as server:
        (snap1, v1), (snap2, v2), (anon_snap1, anon_v1), (anon_snap2, anon_v2) = asyncio.run(clients(server))
    assert snap2["type"] == "snapshot" and snap2["v"] == 1 and snap2["frame"] is None  # frames follow, binary
    links = snap2["topology"]["links"]
    capacity = np.asarray(links["capacity_gbps"], dtype=np.float64)
    n = 2 * len(capacity)
    for text, binary in ((v1, v2), (anon_v1, anon_v2)):
        common = sorted(set(text) & set(binary))
        assert common, "the v1 and v2 sockets saw no frame of the same seq"
        for seq in common:
            header, arrays = decode_v2(binary[seq], capacity)
            frame = text[seq]
            assert header["v"] == 2 and header["seq"] == seq
            for key in SECTIONS:  # the same view's filter, whatever the encoding
                assert header.get(key) == frame.get(key), key
            assert len(arrays["util"]) == n
            np.testing.assert_allclose(arrays["util"], frame["util"], atol=1e-4)
            np.testing.assert_allclose(arrays["rate"], frame["rate"], atol=0.02)
            np.testing.assert_allclose(arrays["offered"], frame["offered"], rtol=2e-4, atol=0.01)
    # The anonymous view is the fabric's aggregates: no job, in v2 as in v1.
    assert all(decode_frame(m)[0]["jobs"] == [] for m in anon_v2.values())
    assert any(decode_frame(m)[0]["jobs"] for m in v2.values())
    assert anon_snap2["topology"]["nodes"]["name"] == anon_snap1["topology"]["nodes"]["name"]
