"""Access changes saved in another process reach open sockets through the Redis channel layer (issue 14).

A real server on Redis streams the demo to a tenant user's websocket; a ``manage.py shell``
process (another process, as the admin or the API would be) removes the user from their
tenant, then deactivates them: the socket gets a new snapshot of its new view, then is closed
with 4401 (signed out).
"""

import asyncio
import contextlib
import json
import os
import subprocess
import sys

import pytest
import websockets

from tests.support.server import ROOT, redis_namespace, running_server
from tests.support.services import require_redis

pytestmark = pytest.mark.services

USER = r"""
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from ibweb.tenancy.models import Tenant
user = User.objects.create_user("alice", password="pw")
Tenant.objects.get(slug="acme").users.add(user)
s = SessionStore()
s["_auth_user_id"] = str(user.pk)
s["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
s["_auth_user_hash"] = user.get_session_auth_hash()
s.create()
print("SESSION", s.session_key)
"""
LEAVE = 'from ibweb.tenancy.models import Tenant; Tenant.objects.get(slug="acme").users.clear()'
DEACTIVATE = 'from django.contrib.auth.models import User; u = User.objects.get(username="alice"); ' \
             'u.is_active = False; u.save()'


def test_membership_and_active_flag_changed_in_another_process_reach_the_socket(tmp_path):
    extra = {"REDIS_URL": require_redis(db=4)}
    with running_server(tmp_path, extra_env=extra) as server:
        env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path), "IBWEB_REDIS_NAMESPACE": redis_namespace(tmp_path),
               "DATABASE_URL": f"sqlite:///{tmp_path / 'server.sqlite3'}", **extra}

        def shell(code: str) -> str:
            done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr[-2000:]
            return done.stdout

        session = next(x for x in shell(USER).splitlines() if x.startswith("SESSION")).split()[1]

        async def scenario():
            async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/", max_size=None,
                                          additional_headers={"Cookie": f"sessionid={session}"}) as ws:
                async def next_of(kind: str) -> dict:
                    while True:
                        msg = json.loads(await asyncio.wait_for(ws.recv(), 20))
                        if msg["type"] == kind:
                            return msg

                first = await next_of("snapshot")
                frame = await next_of("frame")
                await asyncio.to_thread(shell, LEAVE)
                narrowed = await next_of("snapshot")
                after = await next_of("frame")
                await asyncio.to_thread(shell, DEACTIVATE)
                with contextlib.suppress(websockets.exceptions.ConnectionClosed):
                    while True:
                        await asyncio.wait_for(ws.recv(), 20)
            return first, frame, narrowed, after, ws.close_code

        first, frame, narrowed, after, code = asyncio.run(scenario())
    assert {j["tenant"] for j in frame["jobs"]} == {"acme"}
    names = first["topology"]["nodes"]["guid"]
    assert any(g != "hidden" for g, k in zip(names, first["topology"]["nodes"]["kind"], strict=True) if k == "host")
    assert after["jobs"] == [] and narrowed["frame"]["jobs"] == []  # no tenant now: aggregates only
    nodes = narrowed["topology"]["nodes"]
    assert all(g == "hidden" for g, k in zip(nodes["guid"], nodes["kind"], strict=True) if k == "host")
    assert code == 4401
