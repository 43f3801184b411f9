"""Whether a feed socket's sign-in still holds, asked again while the socket is open (issue 26).

Django ends a session at its next request once the user's password changed (the session's auth
hash no longer matches), the user was deactivated or deleted, or the session was flushed (a
logout). A websocket makes no further requests, and the channel-layer notice of such a change
(:mod:`ibweb.live.feed.receivers`) does not cross processes with the embedded in-memory layer, nor
reach a socket when the change was made by another process (``manage.py``, a worker). So every
signed-in socket asks :func:`still_signed_in` every ``IBWEB_SESSION_RECHECK_S`` seconds, from the
database, and on every access-change notice; the consumer closes it with 4401 when the answer is no.
A socket signed in with an API token (``scope["token"]``) holds while its user is active and the token exists.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.utils.crypto import constant_time_compare

from ibweb.accounts.models import ApiToken

__all__ = ["still_signed_in"]


def still_signed_in(scope: dict) -> bool:
    """False when the scope's signed-in user is gone or inactive, its password changed, or its session ended.

    An anonymous scope has no sign-in to lose: True; a user put in the scope by other means than the session
    (tests, a future scheme) is only asked to be active. Reads the database (call it from a worker thread).
    """
    user = scope.get("user")
    if user is None or not user.is_authenticated:
        return True
    current = get_user_model().objects.filter(pk=user.pk).first()
    if current is None or not current.is_active:
        return False
    token = scope.get("token")
    if token is not None:  # signed in with an API token (ibweb.live.feed.consumers): it must not have been deleted
        return ApiToken.objects.filter(pk=token.pk, user_id=current.pk).exists()
    session = scope.get("session")
    if session is None or session.get(SESSION_KEY) is None:  # not signed in through a session: nothing more to ask
        return True
    session_hash = session.get(HASH_SESSION_KEY)
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    if not session_hash or not any(constant_time_compare(session_hash, current._get_session_auth_hash(secret=s))
                                   for s in secrets):
        return False
    return bool(session.session_key) and session.exists(session.session_key)
