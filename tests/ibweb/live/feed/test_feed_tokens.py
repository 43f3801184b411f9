"""A script signs in to the live feed with its API token, as on the API (issue 35).

The feed ignored ``Authorization: Token`` and served the anonymous view; now the token's user is the socket's,
and a refused credential closes it with 4401 and the reason. The last test runs the README's client against a
real server.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
import websockets
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Permission, User

from ibweb.accounts.models import ApiToken
from ibweb.asgi import application
from ibweb.db.retry import retry_locked
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed.consumers import CLOSE_FORBIDDEN, CLOSE_SIGNED_OUT
from tests.support.server import ROOT, running_server

pytestmark = pytest.mark.django_db(transaction=True)


async def _engine() -> FabricRunner:
    fabric, _ = await asyncio.to_thread(ensure_demo)
    engine = FabricRunner(fabric)
    await engine.start()
    await engine.tick()
    return engine


def _key(active: bool = True, all_tenants: bool = True) -> str:
    user = User.objects.create_user("script", is_active=active)
    if all_tenants:
        user.user_permissions.add(Permission.objects.get(codename="view_all_tenants"))
    return ApiToken.issue(user, "feed")[1]


async def _open(authorization: str | None) -> WebsocketCommunicator:
    headers = [(b"authorization", authorization.encode())] if authorization is not None else []
    comm = WebsocketCommunicator(application, "/ws/fabrics/demo/live/", headers=headers)
    assert (await comm.connect())[0]
    return comm


async def _closed(comm: WebsocketCommunicator, timeout: float = 5) -> dict:
    """The close message the socket gets within ``timeout`` (messages before it skipped)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        message = await comm.receive_output(timeout=max(0.1, deadline - loop.time()))
        if message["type"] == "websocket.close":
            return message


async def test_a_token_signs_the_socket_in_where_anonymous_visitors_are_refused(settings):
    settings.IBWEB_PUBLIC_READ = False
    key = await asyncio.to_thread(_key)  # before the engine: its threads' writes could find SQLite locked
    await _engine()
    comm = await _open(f"Token {key}")
    try:
        snapshot = json.loads(await comm.receive_from(timeout=5))
        assert snapshot["type"] == "snapshot" and snapshot["frame"]["jobs"]  # the ALL view: jobs named
    finally:
        await comm.disconnect()
    anonymous = await _open(None)
    assert (await _closed(anonymous))["code"] == CLOSE_FORBIDDEN
    await anonymous.disconnect()


@pytest.mark.parametrize("header, reason", [
    ("Token not-a-key-of-anyone", "Invalid token."),
    ("Token", "Authorization: Token <key>"),
    ("Bearer abc", "Authorization: Token <key>"),
    ("Basic YWxpY2U6c2VjcmV0", "Authorization: Token <key>"),
])
async def test_a_refused_credential_closes_with_4401_and_is_never_served_anonymously(header, reason):
    await _engine()  # public read is on: an ignored header would get the anonymous snapshot
    comm = await _open(header)
    closed = await _closed(comm)
    assert closed["code"] == CLOSE_SIGNED_OUT and closed["reason"] == reason
    await comm.disconnect()


async def test_an_inactive_users_token_is_refused():
    key = await asyncio.to_thread(_key, False)  # before the engine: its threads' writes could find SQLite locked
    await _engine()
    comm = await _open(f"Token {key}")
    assert (await _closed(comm)) == {"type": "websocket.close", "code": CLOSE_SIGNED_OUT,
                                     "reason": "User inactive or deleted."}
    await comm.disconnect()


async def test_deleting_the_token_closes_its_sockets_within_the_recheck(settings):
    settings.IBWEB_SESSION_RECHECK_S = 1
    key = await asyncio.to_thread(_key)  # before the engine: its threads' writes could find SQLite locked
    engine = await _engine()
    comm = await _open(f"Token {key}")
    try:
        assert json.loads(await comm.receive_from(timeout=5))["type"] == "snapshot"
        for _ in range(2):  # the token holds over rechecks
            await asyncio.sleep(0.8)
            await engine.tick()
            assert json.loads(await comm.receive_from(timeout=5))["type"] == "frame"
        # the runner's threads (events) may hold SQLite's write lock a moment: retried as they retry theirs
        await asyncio.to_thread(retry_locked, lambda: ApiToken.objects.all().delete(), what="test token delete")
        assert (await _closed(comm, 5))["code"] == CLOSE_SIGNED_OUT
    finally:
        await comm.disconnect()


def _readme_client() -> dict:
    """The README's feed client, defined (not run)."""
    text = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "async def read_feed" in b)
    namespace = {"__name__": "readme_feed_client"}
    exec(compile(block, "README.md", "exec"), namespace)
    return namespace


def test_the_readme_client_reads_a_real_server_with_a_token(tmp_path):
    key_file = tmp_path / "key"
    setup = ("import io; from django.core.management import call_command; out = io.StringIO(); "
             "call_command('create_user', 'feed-script', '--role', 'service-account', '--token', stdout=out); "
             f"open({str(key_file)!r}, 'w').write(out.getvalue().strip())")
    read_feed = _readme_client()["read_feed"]

    async def first(server, token: str, kinds: int) -> list[str]:
        seen = []
        async for message in read_feed(server.ws_url, "demo", token):
            if message["type"] != "progress":
                seen.append(message["type"])
            if len(seen) == kinds:
                return seen
        return seen

    async def refused(server, token: str) -> tuple[int, str]:
        with pytest.raises(websockets.ConnectionClosedError) as closed:
            await first(server, token, 1)
        return closed.value.rcvd.code, closed.value.rcvd.reason

    async def anonymous(server) -> int:
        async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/") as ws:
            with pytest.raises(websockets.ConnectionClosedError) as closed:
                await ws.recv()
        return closed.value.rcvd.code

    env = {"IBWEB_PUBLIC_READ": "0"}
    with running_server(tmp_path, extra_env=env, setup=setup, ready="/healthz") as server:
        key = key_file.read_text()
        assert asyncio.run(first(server, key, 2)) == ["snapshot", "frame"]
        assert asyncio.run(refused(server, key[:-2] + "xx")) == (CLOSE_SIGNED_OUT, "Invalid token.")
        assert asyncio.run(anonymous(server)) == CLOSE_FORBIDDEN
