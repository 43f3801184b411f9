"""Whether a feed socket's sign-in still holds, asked again while the socket is open (issue 26).

Django ends a session at its next request once the user's password changed (the session's auth
hash no longer matches), the user was deactivated or deleted, or the session was flushed (a
logout). A websocket makes no further requests, and the channel-layer notice of such a change
(:mod:`ibweb.live.feed.receivers`) does not cross processes with the embedded in-memory layer, nor
reach a socket when the change was made by another process (``manage.py``, a worker). So every
signed-in socket is asked again every ``IBWEB_SESSION_RECHECK_S`` seconds, from the database, all of a
process's sockets at once (:func:`signed_out`, :mod:`ibweb.live.feed.sign_in_watch`), and on every
access-change notice (:func:`still_signed_in`); the consumer closes it with 4401 when the answer is no.
A socket signed in with an API token (``scope["token"]``) holds while its user is active and the token exists.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore as DbSessionStore
from django.utils.crypto import constant_time_compare

from ibweb.accounts.models import ApiToken

__all__ = ["still_signed_in", "signed_out"]


def still_signed_in(scope: dict) -> bool:
    """False when the scope's signed-in user is gone or inactive, its password changed, or its session ended.

    An anonymous scope has no sign-in to lose: True; a user put in the scope by other means than the session
    (tests, a future scheme) is only asked to be active. Reads the database (call it from a worker thread).
    """
    return not signed_out([scope])


def signed_out(scopes: Sequence[dict]) -> list[int]:
    """The indexes of ``scopes`` whose sign-in ended (as :func:`still_signed_in` decides for one), read in at
    most three queries whatever their number: their users, their API tokens, their sessions (one query per
    session only for a session engine that is not the database's)."""
    signed_in = [i for i, scope in enumerate(scopes) if _user_pk(scope) is not None]
    if not signed_in:
        return []
    users = get_user_model().objects.in_bulk({_user_pk(scopes[i]) for i in signed_in})
    token_pks = {scopes[i]["token"].pk for i in signed_in if scopes[i].get("token") is not None}
    tokens = set(ApiToken.objects.filter(pk__in=token_pks).values_list("pk", "user_id")) if token_pks else set()
    live_sessions = _existing_sessions([scopes[i].get("session") for i in signed_in
                                       if scopes[i].get("token") is None])
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    ended = []
    for i in signed_in:  # loop over sockets
        if not _holds(scopes[i], users.get(_user_pk(scopes[i])), tokens, live_sessions, secrets):
            ended.append(i)
    return ended


def _user_pk(scope: dict):
    user = scope.get("user")
    return user.pk if user is not None and user.is_authenticated else None


def _holds(scope: dict, current, tokens: set, live_sessions: set, secrets: list[str]) -> bool:
    if current is None or not current.is_active:
        return False
    token = scope.get("token")
    if token is not None:  # signed in with an API token (ibweb.live.feed.consumers): it must not have been deleted
        return (token.pk, current.pk) in tokens
    session = scope.get("session")
    if session is None or session.get(SESSION_KEY) is None:  # not signed in through a session: nothing more to ask
        return True
    session_hash = session.get(HASH_SESSION_KEY)
    if not session_hash or not any(constant_time_compare(session_hash, current._get_session_auth_hash(secret=s))
                                   for s in secrets):
        return False
    return bool(session.session_key) and session.session_key in live_sessions


def _existing_sessions(sessions: list) -> set[str]:
    """The keys of ``sessions`` that still exist: one query for the database's session engine, else each
    session asked on its own."""
    sessions = [s for s in sessions if s is not None and s.get(SESSION_KEY) is not None and s.session_key]
    by_db = [s for s in sessions if isinstance(s, DbSessionStore)]
    live = set()
    for model in {s.model for s in by_db}:  # one model in practice (the engine's)
        keys = {s.session_key for s in by_db if s.model is model}
        live |= set(model.objects.filter(session_key__in=keys).values_list("session_key", flat=True))
    live |= {s.session_key for s in sessions if not isinstance(s, DbSessionStore) and s.exists(s.session_key)}
    return live
