"""A ``?v=2`` socket gets the newest frame, binary, right after its snapshot, not only at the next tick (issue 13)."""

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from fabric_engine.feed_v2 import decode_frame
from ibweb.asgi import application
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.tenancy.models import Tenant

pytestmark = pytest.mark.django_db(transaction=True)


def _acme_user() -> User:
    from ibweb.tenancy.demo import ensure_demo_policy

    fabric, _ = ensure_demo()
    ensure_demo_policy(fabric)
    user = User.objects.create_user("alice", password="pw")
    tenant, _ = Tenant.objects.get_or_create(slug="acme", defaults={"name": "Acme"})
    tenant.users.add(user)
    return user


async def _connect(user) -> tuple[WebsocketCommunicator, dict, bytes]:
    comm = WebsocketCommunicator(application, "/ws/fabrics/demo/live/?v=2")
    comm.scope["user"] = user
    assert (await comm.connect())[0]
    snapshot = json.loads(await comm.receive_from(timeout=10))
    frame = await comm.receive_from(timeout=10)
    return comm, snapshot, frame


async def test_a_v2_socket_gets_the_newest_frame_of_its_view_after_the_snapshot():
    user = await asyncio.to_thread(_acme_user)
    fabric, _ = await asyncio.to_thread(ensure_demo)
    engine = FabricRunner(fabric)
    await engine.start()
    assert await engine.tick() == 1  # no socket yet: this tick encoded no v2 arrays
    first, snapshot, frame = await _connect(user)
    second = None
    try:
        assert snapshot["type"] == "snapshot" and snapshot["frame"] is None
        assert isinstance(frame, bytes)  # before any new tick
        header, arrays = decode_frame(frame)
        assert header["seq"] == 1 and {j["tenant"] for j in header["jobs"]} == {"acme"}  # filtered for the view
        assert len(arrays["util"]) == 2 * len(snapshot["topology"]["links"]["a_node"])

        assert await engine.tick() == 2  # now the v2 pair is in use: the runner keeps its encoded arrays
        ticked = await first.receive_from(timeout=10)
        assert decode_frame(ticked)[0]["seq"] == 2
        second, _, frame = await _connect(user)
        assert frame == ticked  # the same message the view's group got at that tick
        assert await first.receive_nothing(timeout=0.2)  # no frame twice
    finally:
        await first.disconnect()
        if second is not None:
            await second.disconnect()
