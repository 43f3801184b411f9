"""Security headers, login rate limit, and what clients may send on the feed (issue 10)."""

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.core.cache import cache

from ibweb.asgi import application
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.consumers import CLOSE_BAD_MESSAGE, CLOSE_UNSUPPORTED_DATA
from ibweb.live.runner import FabricRunner
from ibweb.security import CONTENT_SECURITY_POLICY


@pytest.mark.django_db
def test_pages_carry_the_content_security_policy(client):
    ensure_demo()
    response = client.get("/fabrics/demo/")
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY and "unsafe-inline" not in CONTENT_SECURITY_POLICY


@pytest.mark.django_db
def test_login_is_rate_limited_per_address(client, monkeypatch):
    cache.clear()
    monkeypatch.setattr("ibweb.security.time.time", lambda: 1_800_000_010.0)  # one fixed window
    codes = [client.post("/accounts/login/", {"username": f"x{i}", "password": "wrong"}).status_code
             for i in range(12)]
    assert codes[:10] == [200] * 10 and codes[10:] == [429, 429]


@pytest.mark.django_db
@pytest.mark.parametrize("first, second", [("/accounts/login/", "/admin/login/"),
                                           ("/admin/login/", "/accounts/login/")])
def test_site_and_admin_login_share_one_throttle_per_account_and_per_address(client, monkeypatch, first, second):
    """Issue 14: the admin's login had no limit, and the site's counted per address only."""
    cache.clear()
    monkeypatch.setattr("ibweb.security.time.time", lambda: 1_800_000_010.0)
    User.objects.create_superuser("root", password="a-long-passphrase-42")

    def attempt(url: str, address: str, password: str = "wrong") -> int:
        return client.post(url, {"username": "Root", "password": password}, REMOTE_ADDR=address).status_code

    # failures from many addresses (a botnet) against one account: 3 + 2, then the account is refused
    assert [attempt(first, f"10.0.0.{i}") for i in range(3)] == [200] * 3
    assert [attempt(second, f"10.0.1.{i}") for i in range(2)] == [200] * 2
    refused = client.post(second, {"username": "root", "password": "a-long-passphrase-42"}, REMOTE_ADDR="10.0.2.1")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert attempt(first, "10.0.2.2") == 429
    # another account from those addresses is not refused; the admin page's own address limit holds too
    assert client.post(second, {"username": "other", "password": "x"}, REMOTE_ADDR="10.0.0.1").status_code == 200
    codes = [client.post("/admin/login/", {"username": f"u{i}", "password": "x"}, REMOTE_ADDR="10.9.9.9").status_code
             for i in range(12)]
    assert codes[:10] == [200] * 10 and codes[10:] == [429, 429]


@pytest.mark.django_db
def test_a_successful_login_clears_its_accounts_failures(client, monkeypatch):
    cache.clear()
    monkeypatch.setattr("ibweb.security.time.time", lambda: 1_800_000_010.0)
    User.objects.create_user("alice", password="a-long-passphrase-42")
    for i in range(4):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR=f"10.1.0.{i}")
    ok = client.post("/accounts/login/", {"username": "alice", "password": "a-long-passphrase-42"},
                     REMOTE_ADDR="10.1.1.1")
    assert ok.status_code == 302
    client.logout()
    assert [client.post("/accounts/login/", {"username": "alice", "password": "wrong"},
                        REMOTE_ADDR=f"10.1.2.{i}").status_code for i in range(5)] == [200] * 5


@pytest.mark.django_db
def test_password_validators_refuse_weak_passwords(client):
    from django.contrib.auth.password_validation import validate_password
    from django.core.exceptions import ValidationError

    user = User.objects.create_user("bob", password="a-long-passphrase-42")
    for weak in ("short", "password1234", "123456789012"):  # too short, too common, all digits
        with pytest.raises(ValidationError):
            validate_password(weak, user)
    client.force_login(user)
    r = client.post("/accounts/password_change/", {"old_password": "a-long-passphrase-42",
                                                   "new_password1": "abc", "new_password2": "abc"})
    assert r.status_code == 200 and b"too short" in r.content
    user.refresh_from_db()
    assert user.check_password("a-long-passphrase-42")


@pytest.mark.parametrize("env, debug", [({}, "False"), ({"IBWEB_DEBUG": "1"}, "True"),
                                        ({"IBWEB_ENV": "development"}, "False")])
def test_debug_only_when_asked_for(env, debug):
    import os
    import subprocess
    import sys

    clean = {k: v for k, v in os.environ.items() if k not in ("IBWEB_DEBUG", "IBWEB_ENV")}
    out = subprocess.run([sys.executable, "-c", "import django; from django.conf import settings; django.setup(); "
                          "print(settings.DEBUG)"], env={**clean, "DJANGO_SETTINGS_MODULE": "ibweb.settings", **env},
                         capture_output=True, text=True, check=True).stdout.split()[-1]
    assert out == debug


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
    engine = FabricRunner(fabric)
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
    await FabricRunner(fabric).start()
    comm = WebsocketCommunicator(application, "/ws/fabrics/demo/live/")
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=5)
    await comm.send_to(text_data='{"type": "ping"}')
    assert json.loads(await comm.receive_from(timeout=5)) == {"v": 1, "type": "pong"}
    await comm.disconnect()
