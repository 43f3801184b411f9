"""The live feed: the consumer in-process, then a real server and a real websocket client."""

import asyncio
import json

import pytest
import websockets
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from ibweb.asgi import application
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed import view_registry as viewreg
from ibweb.live.feed.consumers import CLOSE_FORBIDDEN, CLOSE_NOT_FOUND, CLOSE_UNAVAILABLE
from tests.support.server import running_server

pytestmark = pytest.mark.django_db(transaction=True)


async def _connect(path: str) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, path)
    connected, _ = await comm.connect()
    assert connected
    return comm


async def _demo_engine_and_socket() -> tuple[FabricRunner, WebsocketCommunicator]:
    """The demo's runner after its first tick, and a socket connected to its feed."""
    fabric, _ = await asyncio.to_thread(ensure_demo)
    engine = FabricRunner(fabric)
    await engine.start()
    await engine.tick()
    return engine, await _connect("/ws/fabrics/demo/live/")


async def test_snapshot_then_frames_in_process():
    engine, comm = await _demo_engine_and_socket()
    try:
        snap = json.loads(await comm.receive_from(timeout=5))
        assert snap["v"] == 1 and snap["type"] == "snapshot"
        n_links = len(snap["topology"]["links"]["a_node"])
        assert n_links == 1072 and snap["frame"]["seq"] == 1  # 1024 GPU-side cables + 8 servers x 2 + 32 sleaf up
        for expected in (2, 3):
            await engine.tick()
            frame = json.loads(await comm.receive_from(timeout=5))
            assert frame["type"] == "frame" and frame["seq"] == expected
            assert len(frame["util"]) == len(frame["rate"]) == 2 * n_links
    finally:
        await comm.disconnect()


async def test_slow_client_gets_the_newest_frame_not_a_queue():
    engine, comm = await _demo_engine_and_socket()
    try:
        await comm.receive_from(timeout=5)  # snapshot
        for _ in range(5):  # published faster than the client reads
            await engine.tick()
        await asyncio.sleep(0.2)
        seqs = []
        while not await comm.receive_nothing(timeout=0.3):
            seqs.append(json.loads(await comm.receive_from())["seq"])
        assert seqs[-1] == 6 and seqs == sorted(seqs)
    finally:
        await comm.disconnect()


async def test_frames_reach_sockets_without_a_thread_hop_per_socket(monkeypatch):
    """channels checks the database connections in its one worker thread before every message it dispatches;
    frames skip that (one hop per socket and frame, in series), the socket's own messages keep it."""
    import channels.consumer

    checked = []

    async def counting_check():
        checked.append(1)

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", counting_check)
    engine, comm = await _demo_engine_and_socket()
    try:
        await comm.receive_from(timeout=5)  # snapshot
        before = len(checked)
        for expected in (2, 3):
            await engine.tick()
            assert json.loads(await comm.receive_from(timeout=5))["seq"] == expected
        assert len(checked) == before
        await comm.send_to(text_data=json.dumps({"type": "ping"}))
        assert json.loads(await comm.receive_from(timeout=5))["type"] == "pong"
        assert len(checked) == before + 1
    finally:
        await comm.disconnect()


async def test_a_view_whose_last_socket_closes_is_no_longer_encoded():
    viewreg.clear()
    engine, comm = await _demo_engine_and_socket()
    other = await _connect("/ws/fabrics/demo/live/?v=2")
    try:
        await comm.receive_from(timeout=5)
        await other.receive_from(timeout=5)
        assert await viewreg.active(engine.fabric_id) == {("fabric", "v1"), ("fabric", "v2")}
        await other.disconnect()
        assert await viewreg.active(engine.fabric_id) == {("fabric", "v1")}
    finally:
        await comm.disconnect()
    assert await viewreg.active(engine.fabric_id) == set()


async def test_unknown_fabric_is_closed_with_4404():
    comm = await _connect("/ws/fabrics/nope/live/")
    out = await comm.receive_output(timeout=5)
    assert out == {"type": "websocket.close", "code": CLOSE_NOT_FOUND}
    await comm.disconnect()


async def test_fabric_without_running_engine_is_closed_with_4503(monkeypatch):
    from ibweb.fabrics.models import Fabric
    from ibweb.live.feed import consumers

    monkeypatch.setattr(consumers, "START_GRACE_S", 0.5)

    await Fabric.objects.acreate(name="Idle", slug="idle", spec={"topology": {"generator": "fat_tree", "hosts": 8,
                                                                              "radix": 4}})
    comm = await _connect("/ws/fabrics/idle/live/")
    assert (await comm.receive_output(timeout=5))["code"] == CLOSE_UNAVAILABLE
    await comm.disconnect()


@override_settings(IBWEB_PUBLIC_READ=False)
async def test_anonymous_is_refused_without_public_read():
    await asyncio.to_thread(ensure_demo)
    comm = await _connect("/ws/fabrics/demo/live/")
    assert (await comm.receive_output(timeout=5))["code"] == CLOSE_FORBIDDEN
    await comm.disconnect()


def test_real_server_and_real_client(tmp_path):
    async def client(server):
        async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/", max_size=None,
                                      origin=server.url) as ws:
            snap = json.loads(await asyncio.wait_for(ws.recv(), 20))
            while snap["type"] == "progress":  # the engine may still be starting: progress comes first
                snap = json.loads(await asyncio.wait_for(ws.recv(), 20))
            frames = []
            while len(frames) < 2:  # the engine's own snapshot or progress when it finishes starting may come first
                msg = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if msg["type"] == "frame":
                    frames.append(msg)
            return snap, frames

    with running_server(tmp_path) as server:
        snap, frames = asyncio.run(client(server))
    assert snap["type"] == "snapshot" and snap["v"] == 1
    n = 2 * len(snap["topology"]["links"]["a_node"])
    assert frames[0]["seq"] < frames[1]["seq"]
    assert all(len(f["util"]) == len(f["rate"]) == n for f in frames)


def test_real_server_rejects_foreign_browser_origin(tmp_path):
    async def client(server):
        with pytest.raises(websockets.exceptions.InvalidStatus) as err:
            async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/", origin="http://evil.example"):
                pass
        return err.value.response.status_code

    with running_server(tmp_path) as server:
        assert asyncio.run(client(server)) == 403
