"""Security headers, login rate limit, and what clients may send on the feed (issue 10)."""

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.core.cache import cache

from ibweb.asgi import application
from ibweb.fabrics.demo import ensure_demo
from ibweb.http.security_headers import CONTENT_SECURITY_POLICY
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed.consumers import CLOSE_BAD_MESSAGE, CLOSE_UNSUPPORTED_DATA


@pytest.mark.django_db
def test_pages_carry_the_content_security_policy(client):
    ensure_demo()
    response = client.get("/fabrics/demo/")
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY and "unsafe-inline" not in CONTENT_SECURITY_POLICY


class Clock:
    """A settable ``time.time`` for the sign-in throttle."""

    def __init__(self, now: float = 1_800_000_010.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    cache.clear()
    c = Clock()
    monkeypatch.setattr("ibweb.auth.signin.time.time", c)
    return c


def _login(client, username: str, password: str, address: str, url: str = "/accounts/login/"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.mark.django_db
def test_login_is_rate_limited_per_address(client, clock):
    codes = [_login(client, f"x{i}", "wrong", "127.0.0.1").status_code for i in range(12)]
    assert codes[:10] == [200] * 10 and codes[10:] == [429, 429]


@pytest.mark.django_db
def test_the_address_limit_slides_across_the_minute_boundary(client, clock):
    """A fixed minute let 20 attempts through in two seconds across its boundary (and made a test flaky)."""
    clock.now = 1_800_000_059.0  # one second before a minute starts
    before = [_login(client, f"y{i}", "wrong", "127.0.0.2").status_code for i in range(6)]
    clock.now = 1_800_000_060.5
    after = [_login(client, f"z{i}", "wrong", "127.0.0.2").status_code for i in range(6)]
    assert before == [200] * 6 and after == [200] * 4 + [429, 429]
    clock.now = 1_800_000_119.0  # the six before the boundary have (all but) slid out; the six after count on
    assert [_login(client, f"w{i}", "wrong", "127.0.0.2").status_code for i in range(6)] == [200] * 3 + [429] * 3


@pytest.mark.django_db
@pytest.mark.parametrize("first, second", [("/accounts/login/", "/admin/login/"),
                                           ("/admin/login/", "/accounts/login/")])
def test_site_and_admin_login_share_one_throttle_per_account_and_per_address(client, clock, first, second):
    """Issue 14: the admin's login had no limit, and the site's counted per address only."""
    User.objects.create_superuser("root", password="a-long-passphrase-42")
    # failures from many addresses (a botnet) against one account: 3 + 2, then the account is slowed down
    assert [_login(client, "Root", "wrong", f"10.0.0.{i}", first).status_code for i in range(3)] == [200] * 3
    assert [_login(client, "Root", "wrong", f"10.0.1.{i}", second).status_code for i in range(2)] == [200] * 2
    refused = _login(client, "root", "a-long-passphrase-42", "10.0.2.1", second)
    assert refused.status_code == 429 and int(refused["Retry-After"]) == 1
    assert _login(client, "root", "wrong", "10.0.2.2", first).status_code == 429
    # another account from those addresses is not refused; the admin page's own address limit holds too
    assert _login(client, "other", "x", "10.0.0.1", second).status_code == 200
    codes = [_login(client, f"u{i}", "x", "10.9.9.9", "/admin/login/").status_code for i in range(12)]
    assert codes[:10] == [200] * 10 and codes[10:] == [429, 429]


@pytest.mark.django_db
def test_failures_back_off_exponentially_and_never_lock_the_owner_out(client, clock):
    """Issue 26: five wrong passwords from anyone locked the owner out for 15 minutes."""
    User.objects.create_user("alice", password="a-long-passphrase-42")
    assert [_login(client, "alice", "wrong", f"10.2.0.{i}").status_code for i in range(5)] == [200] * 5
    waits = []
    for i in range(9):  # each failure past the fifth doubles the wait before the next attempt, up to a minute
        refused = _login(client, "alice", "wrong", f"10.2.1.{i}")
        assert refused.status_code == 429
        waits.append(int(refused["Retry-After"]))
        clock.now += waits[-1]
        assert _login(client, "alice", "wrong", f"10.2.2.{i}").status_code == 200
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert _login(client, "alice", "a-long-passphrase-42", "10.2.3.1").status_code == 429
    clock.now += 60  # the owner, on a browser that never signed in before, is in after at most a minute
    assert _login(client, "alice", "a-long-passphrase-42", "10.2.3.1").status_code == 302


@pytest.mark.django_db
def test_a_known_browser_signs_in_while_its_account_is_under_attack(clock):
    from django.test import Client

    from ibweb.auth.signin import KNOWN_DEVICE_COOKIE

    User.objects.create_user("alice", password="a-long-passphrase-42")
    User.objects.create_user("mallory", password="a-long-passphrase-43")
    owner, attacker, other = Client(), Client(), Client()
    assert _login(owner, "alice", "a-long-passphrase-42", "10.3.0.1").status_code == 302
    assert KNOWN_DEVICE_COOKIE in owner.cookies
    assert owner.post("/accounts/logout/").status_code == 302  # signing out keeps the browser known
    assert _login(attacker, "mallory", "a-long-passphrase-43", "10.3.9.9").status_code == 302  # its own account
    for i in range(40):  # the attack keeps the account's delay at its cap
        _login(attacker, "alice", "wrong", f"10.4.{i}.1")
    assert _login(other, "alice", "a-long-passphrase-42", "10.3.5.5").status_code == 429
    forged = Client()
    forged.cookies[KNOWN_DEVICE_COOKIE] = owner.cookies[KNOWN_DEVICE_COOKIE].value.split(":")[0] + ":forged"
    assert _login(forged, "alice", "a-long-passphrase-42", "10.3.5.6").status_code == 429
    assert _login(attacker, "alice", "a-long-passphrase-42", "10.3.5.7").status_code == 429  # known for mallory
    # the owner's browser is not slowed: a typo, then the password, at once
    assert _login(owner, "alice", "typo", "10.3.0.1").status_code == 200
    assert _login(owner, "alice", "a-long-passphrase-42", "10.3.0.1").status_code == 302


@pytest.mark.django_db
def test_a_successful_login_clears_its_accounts_failures(client, clock):
    User.objects.create_user("alice", password="a-long-passphrase-42")
    for i in range(4):
        _login(client, "alice", "wrong", f"10.1.0.{i}")
    assert _login(client, "alice", "a-long-passphrase-42", "10.1.1.1").status_code == 302
    client.logout()
    client.cookies.clear()
    assert [_login(client, "alice", "wrong", f"10.1.2.{i}").status_code for i in range(5)] == [200] * 5


@pytest.mark.django_db
def test_the_password_reset_form_is_throttled_per_address_and_per_email(client, clock, mailoutbox):
    """Issue 26: anyone could make the site send any number of reset mails."""
    User.objects.create_user("alice", email="alice@example.com", password="a-long-passphrase-42")

    def reset(email: str, address: str) -> int:
        return client.post("/accounts/password_reset/", {"email": email}, REMOTE_ADDR=address).status_code

    assert [reset("Alice@example.com", f"10.5.0.{i}") for i in range(4)] == [302, 302, 302, 429]
    assert len(mailoutbox) == 3
    assert reset("nobody@example.com", "10.5.1.1") == 302  # another address: its own count
    assert [reset(f"x{i}@example.com", "10.5.2.1") for i in range(6)] == [302] * 5 + [429]
    clock.now += 2 * 3600  # out of the sliding hour (which weighs the previous hour as if spread evenly)
    assert reset("alice@example.com", "10.5.0.9") == 302 and len(mailoutbox) == 4


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
