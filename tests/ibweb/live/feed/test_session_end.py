"""A feed socket ends with its sign-in: password changed, user deactivated, session ended (issue 26).

In one process the change reaches the socket at once through the channel layer; made where that
notice cannot come from (another process, a plain ``UPDATE``), the socket's own recheck every
``IBWEB_SESSION_RECHECK_S`` closes it. The last test does it across processes on a real server.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
import websockets
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Permission, User
from django.contrib.sessions.models import Session
from django.test import Client

from ibweb.asgi import application
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed.consumers import CLOSE_SIGNED_OUT
from tests.support.server import ROOT, running_server, session_script

pytestmark = pytest.mark.django_db(transaction=True)


def _signed_in() -> tuple[User, str]:
    user = User.objects.create_user("operator", password="a-long-passphrase-42")
    user.user_permissions.add(Permission.objects.get(codename="view_all_tenants"))
    client = Client()
    client.force_login(user)
    return user, client.cookies["sessionid"].value


async def _socket(session_key: str) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, "/ws/fabrics/demo/live/",
                                 headers=[(b"cookie", f"sessionid={session_key}".encode())])
    assert (await comm.connect())[0]
    assert json.loads(await comm.receive_from(timeout=5))["type"] == "snapshot"
    return comm


async def _closed_with(comm: WebsocketCommunicator, timeout: float) -> int:
    """The close code the socket gets within ``timeout`` (frames before it are skipped)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        message = await comm.receive_output(timeout=max(0.1, deadline - loop.time()))
        if message["type"] == "websocket.close":
            return message["code"]


async def _engine():
    fabric, _ = await asyncio.to_thread(ensure_demo)
    engine = FabricRunner(fabric)
    await engine.start()
    return engine


def _change_password(user: User) -> None:
    user.set_password("another-long-passphrase-7")
    user.save()


async def test_a_password_change_closes_the_users_sockets_at_once(settings):
    settings.IBWEB_SESSION_RECHECK_S = 3600  # only the channel layer's notice can close it in time
    await _engine()
    user, key = await asyncio.to_thread(_signed_in)
    comm = await _socket(key)
    try:
        await asyncio.to_thread(_change_password, user)
        assert await _closed_with(comm, 5) == CLOSE_SIGNED_OUT
    finally:
        await comm.disconnect()


@pytest.mark.parametrize("change", ["password", "deactivated", "signed out"])
async def test_a_change_no_notice_announces_closes_the_socket_within_the_recheck(settings, change):
    settings.IBWEB_SESSION_RECHECK_S = 1
    engine = await _engine()
    user, key = await asyncio.to_thread(_signed_in)
    comm = await _socket(key)
    try:
        for _ in range(3):  # the sign-in holds: the socket stays open past several rechecks, frames flowing
            await engine.tick()
            assert json.loads(await comm.receive_from(timeout=5))["type"] == "frame"
            await asyncio.sleep(0.5)
        if change == "password":  # a plain UPDATE: no signal, no channel-layer notice
            await asyncio.to_thread(lambda: User.objects.filter(pk=user.pk).update(password="pbkdf2_sha256$1$x$y"))
        elif change == "deactivated":
            await asyncio.to_thread(lambda: User.objects.filter(pk=user.pk).update(is_active=False))
        else:
            await asyncio.to_thread(lambda: Session.objects.filter(session_key=key).delete())
        assert await _closed_with(comm, 5) == CLOSE_SIGNED_OUT
    finally:
        await comm.disconnect()


CREATE_SESSION = session_script('user = User.objects.create_user("viewer", password="pw-viewer-long-enough")')


def test_sockets_on_a_real_server_close_when_another_process_changes_the_user(tmp_path):
    """The embedded default: web and the process that changes the user share no channel layer."""
    env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'server.sqlite3'}"}

    def manage_shell(code: str) -> str:
        return subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True,
                              capture_output=True, text=True).stdout

    async def watch(server, cookie: str, change: str) -> int | None:
        async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/", origin=server.url,
                                      additional_headers={"Cookie": cookie}, max_size=None) as ws:
            assert json.loads(await asyncio.wait_for(ws.recv(), 30))["type"] == "snapshot"
            await asyncio.to_thread(manage_shell, change)
            try:
                while True:
                    await asyncio.wait_for(ws.recv(), 10)
            except websockets.ConnectionClosed as closed:
                return closed.rcvd.code if closed.rcvd else None

    with running_server(tmp_path, extra_env={"IBWEB_SESSION_RECHECK_S": "1"}) as server:
        viewer_cookie = "sessionid=" + manage_shell(CREATE_SESSION).split()[-1]
        password = ("from django.contrib.auth.models import User; u = User.objects.get(username='operator'); "
                    "u.set_password('another-long-passphrase-7'); u.save()")
        assert asyncio.run(watch(server, server.cookie, password)) == CLOSE_SIGNED_OUT
        deactivate = "from django.contrib.auth.models import User; User.objects.filter(username='viewer')" \
                     ".update(is_active=False)"
        assert asyncio.run(watch(server, viewer_cookie, deactivate)) == CLOSE_SIGNED_OUT
