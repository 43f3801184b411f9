"""The supervisor follows the database: new fabrics start, a routing change reroutes (issue 4)."""

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator

from ibweb.asgi import application
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.supervisor import EngineSupervisor

pytestmark = pytest.mark.django_db(transaction=True)

SMALL = {"topology": {"generator": "fat_tree", "hosts": 32, "radix": 8},
         "jobs": [{"name": "j", "tenant": "t", "hosts": 16, "placement": "scattered"}]}


async def until(predicate, timeout=30.0):
    end = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < end, "timed out"
        await asyncio.sleep(0.05)


async def test_routing_change_reroutes_the_running_engine_and_clients_get_a_new_snapshot(monkeypatch):
    fabric = await Fabric.objects.acreate(name="Small", slug="small", spec=SMALL, tick_s=0.1)
    supervisor = EngineSupervisor(reconcile_s=0.1)
    await supervisor.start()
    comm = None
    try:
        await until(lambda: fabric.pk in supervisor.engines and supervisor.engines[fabric.pk].source.fabric is not None)
        assert supervisor.engines[fabric.pk].source.routing.engine == "minhop"
        comm = WebsocketCommunicator(application, "/ws/fabrics/small/live/")
        await asyncio.sleep(0.3)
        assert (await comm.connect())[0]
        first = json.loads(await comm.receive_from(timeout=5))
        assert first["type"] == "snapshot"
        fabric.routing_engine = "ftree"
        await fabric.asave()
        await until(lambda: fabric.pk in supervisor.engines and supervisor.engines[fabric.pk].source.fabric is not None
                    and supervisor.engines[fabric.pk].source.routing.engine == "ftree")
        types, seqs = [], []
        for _ in range(80):
            msg = json.loads(await comm.receive_from(timeout=15))
            types.append(msg["type"])
            if msg["type"] == "frame":
                seqs.append(msg["seq"])
            if "snapshot" in types and len(seqs) > 3:
                break
        assert "snapshot" in types, f"connected clients must be sent the new snapshot: {types}"
        assert seqs == sorted(seqs), "sequence numbers continue across the restart"
        late = await Fabric.objects.acreate(name="Late", slug="late", spec=SMALL, tick_s=0.1)
        await until(lambda: late.pk in supervisor.engines)
        await late.adelete()
        await until(lambda: late.pk not in supervisor.engines)
    finally:
        if comm is not None:
            await comm.disconnect()
        await supervisor.stop()
