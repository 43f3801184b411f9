"""Security headers, login rate limit, and what clients may send on the feed (issue 10)."""

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator
from django.core.cache import cache

from ibweb.asgi import application
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.consumers import CLOSE_BAD_MESSAGE, CLOSE_UNSUPPORTED_DATA
from ibweb.live.engine import FabricEngine
from ibweb.security import CONTENT_SECURITY_POLICY


@pytest.mark.django_db
def test_pages_carry_the_content_security_policy(client):
    ensure_demo()
    response = client.get("/fabrics/demo/")
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY and "unsafe-inline" not in CONTENT_SECURITY_POLICY


@pytest.mark.django_db
def test_login_is_rate_limited(client, monkeypatch):
    cache.clear()
    monkeypatch.setattr("ibweb.security.time.time", lambda: 1_800_000_010.0)  # one fixed window
    codes = [client.post("/accounts/login/", {"username": "x", "password": "wrong"}).status_code for _ in range(12)]
    assert codes[:10] == [200] * 10 and codes[10:] == [429, 429]


@pytest.mark.django_db
def test_no_change_through_get_and_writes_need_permission(client):
    ensure_demo()
    assert client.get("/api/fabrics/fabrics/demo/").status_code == 200
    response = client.delete("/api/fabrics/fabrics/demo/")
    assert response.status_code in (401, 403)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("send", "code"),
    [({"text_data": "not json"}, CLOSE_BAD_MESSAGE), ({"text_data": '{"type": "subscribe"}'}, CLOSE_BAD_MESSAGE),
     ({"bytes_data": b"\x00\x01"}, CLOSE_UNSUPPORTED_DATA)],
)
async def test_malformed_client_messages_close_with_a_clear_code(send, code):
    fabric, _ = await asyncio.to_thread(ensure_demo)
    engine = FabricEngine(fabric)
    await engine.start()
    comm = WebsocketCommunicator(application, "/ws/fabrics/demo/live/")
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=5)
    if "text_data" in send:
        await comm.send_to(text_data=send["text_data"])
    else:
        await comm.send_to(bytes_data=send["bytes_data"])
    assert await comm.receive_output(timeout=5) == {"type": "websocket.close", "code": code}
    await comm.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_ping_is_answered():
    fabric, _ = await asyncio.to_thread(ensure_demo)
    await FabricEngine(fabric).start()
    comm = WebsocketCommunicator(application, "/ws/fabrics/demo/live/")
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=5)
    await comm.send_to(text_data='{"type": "ping"}')
    assert json.loads(await comm.receive_from(timeout=5)) == {"v": 1, "type": "pong"}
    await comm.disconnect()
