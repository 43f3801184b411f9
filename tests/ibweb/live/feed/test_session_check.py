"""The feed's sign-in recheck asks about all of a process's sockets in a few queries (``signed_out``)."""

from __future__ import annotations

import pytest
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session

from ibweb.accounts.models import ApiToken
from ibweb.live.feed.session_check import signed_out, still_signed_in

pytestmark = pytest.mark.django_db


def _session_scope(user: User) -> dict:
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    held = SessionStore(session_key=session.session_key)
    assert held.get(SESSION_KEY) == str(user.pk)  # loaded as a socket holds it, before the rows change
    return {"user": user, "session": held}


def _user(name: str) -> User:
    return User.objects.create_user(name, password=f"{name}-long-passphrase")


def test_signed_out_names_exactly_the_scopes_whose_sign_in_ended_in_a_bounded_number_of_queries(
        django_assert_max_num_queries):
    holds = [_session_scope(_user(f"holds{i}")) for i in range(20)]
    deactivated = _session_scope(_user("deactivated"))
    User.objects.filter(username="deactivated").update(is_active=False)
    password = _session_scope(_user("password"))
    User.objects.filter(username="password").update(password="pbkdf2_sha256$1$x$y")
    gone = _session_scope(_user("gone"))
    Session.objects.filter(session_key=gone["session"].session_key).delete()
    deleted_user = _session_scope(_user("deleted"))
    User.objects.filter(username="deleted").delete()
    token_user = _user("scripted")
    token, _ = ApiToken.issue(token_user, "kept")
    revoked, _ = ApiToken.issue(token_user, "revoked")
    with_token = {"user": token_user, "token": token}
    with_revoked = {"user": token_user, "token": revoked}
    revoked.delete()
    anonymous = {"user": AnonymousUser()}
    scopes = [*holds, deactivated, anonymous, password, with_token, gone, with_revoked, deleted_user]
    with django_assert_max_num_queries(3):
        ended = signed_out(scopes)
    named = {id(scopes[i]) for i in ended}
    assert named == {id(deactivated), id(password), id(gone), id(with_revoked), id(deleted_user)}
    assert [still_signed_in(s) for s in (holds[0], anonymous, with_token, gone)] == [True, True, True, False]


def test_no_signed_in_scope_asks_nothing(django_assert_num_queries):
    with django_assert_num_queries(0):
        assert signed_out([{"user": AnonymousUser()}, {}]) == []


async def test_one_socket_that_fails_to_close_does_not_stop_the_watch_for_the_others(settings, monkeypatch):
    """The watch asks about every socket each period; a socket whose close raises is logged, the others closed."""
    import asyncio

    from ibweb.live.feed import sign_in_watch

    settings.IBWEB_SESSION_RECHECK_S = 0.05
    closed: list[str] = []

    class Socket:
        def __init__(self, name: str, fails: bool) -> None:
            self.scope, self.name, self.fails = {"name": name}, name, fails

        async def sign_in_ended(self) -> None:
            if self.fails:
                raise RuntimeError("gone")
            closed.append(self.name)

    monkeypatch.setattr(sign_in_watch, "signed_out", lambda scopes: list(range(len(scopes))))  # every one ended
    sign_in_watch.watch(Socket("first", True))
    sign_in_watch.watch(Socket("second", False))
    for _ in range(100):
        if closed:
            break
        await asyncio.sleep(0.02)
    assert closed == ["second"]  # in the same period as the socket whose close failed
