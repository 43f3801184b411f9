"""Clients that connect while the engine starts get progress, then the snapshot (long operations show progress)."""

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator

from ibweb.asgi import application
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.runner import FabricRunner

pytestmark = pytest.mark.django_db(transaction=True)

BIG = {"topology": {"generator": "fat_tree", "hosts": 2048, "radix": 64},
       "jobs": [{"name": "all", "tenant": "t", "hosts": 2048, "placement": "scattered"}]}


async def test_waiting_client_sees_engine_progress_then_the_snapshot(monkeypatch):
    fabric = await Fabric.objects.acreate(name="Big", slug="big", spec=BIG, routing_engine="ftree")
    engine = FabricRunner(fabric)
    gate = asyncio.Event()
    real_build = __import__("ibweb.live.engine.emulated", fromlist=["build_emulator"]).build_emulator

    def slow_build(spec):
        asyncio.run_coroutine_threadsafe(gate.wait(), loop).result(10)  # hold routing until the client is in
        return real_build(spec)

    loop = asyncio.get_running_loop()
    monkeypatch.setattr("ibweb.live.engine.emulated.build_emulator", slow_build)
    starting = asyncio.create_task(engine.start())
    await asyncio.sleep(0.2)
    comm = WebsocketCommunicator(application, "/ws/fabrics/big/live/")
    assert (await comm.connect())[0]
    try:
        first = json.loads(await comm.receive_from(timeout=5))
        assert first["type"] == "progress" and first["task"] == "engine" and 0 <= first["fraction"] < 1
        assert "ftree" in first["message"]
        gate.set()
        await starting
        kinds = []
        while "snapshot" not in kinds:
            kinds.append(json.loads(await comm.receive_from(timeout=10))["type"])
        assert set(kinds) <= {"progress", "snapshot"} and kinds[-1] == "snapshot"
        await engine.tick()
        assert json.loads(await comm.receive_from(timeout=5))["type"] == "frame"
    finally:
        await comm.disconnect()
