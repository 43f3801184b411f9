"""Which (view, encoding) pairs of a fabric's feed have sockets: consumers register, the runner reads.

A consumer registers its pair on connect and again every :data:`REFRESH_S` seconds; an entry
not refreshed for :data:`TTL_S` seconds lapses, so a pair whose last socket closed (or whose web
process died) stops being encoded within that time. With ``REDIS_URL`` the registry is a Redis
sorted set per fabric (member ``"<view key>|<encoding>"``, score: expiry time), shared by every
web process and by whichever process leads the fabric; without it (the embedded default, one
process) a dictionary.

A socket registers on connect; its keep-alives register the pair only when this process has not
done so in the last :data:`REFRESH_S`, however many of its sockets share it: sockets that connected
together fall due together, and a Redis call each would open a burst of connections in the middle
of the feed's fan-out. The pair still never lapses while a socket has it: the next keep-alive after
skipped ones comes at most two :data:`REFRESH_S` after the last registration, inside :data:`TTL_S`.
"""

from __future__ import annotations

import threading
import time
import weakref

from django.conf import settings

__all__ = ["register", "active", "REFRESH_S", "TTL_S", "clear"]

REFRESH_S = 10.0
TTL_S = 30.0

_local: dict[int, dict[str, float]] = {}
_lock = threading.Lock()
_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: When this process last registered each (fabric, member).
_registered: dict[tuple[int, str], float] = {}


def _key(fabric_id: int) -> str:
    return f"ibweb:live:{fabric_id}:views"


def _redis():
    """One asyncio Redis client per event loop (the runner and the web server each have their own)."""
    import asyncio

    from redis import asyncio as aioredis

    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = aioredis.from_url(settings.REDIS_URL)
    return client


def _member(view_key: str, encoding: str) -> str:
    return f"{view_key}|{encoding}"


async def register(fabric_id: int, view_key: str, encoding: str, now: float | None = None, *,
                   keep_alive: bool = False) -> None:
    """Record that a socket of ``fabric_id`` wants frames of ``view_key`` in ``encoding`` (for :data:`TTL_S`).

    ``keep_alive``: a socket's periodic renewal, skipped when this process registered the pair
    less than :data:`REFRESH_S` ago.
    """
    now = time.time() if now is None else now
    expiry = now + TTL_S
    member = _member(view_key, encoding)
    with _lock:
        if keep_alive and now - _registered.get((fabric_id, member), -TTL_S) < REFRESH_S:
            return
        _registered[(fabric_id, member)] = now
    if settings.REDIS_URL:
        await _redis().zadd(_key(fabric_id), {member: expiry})
        return
    with _lock:
        _local.setdefault(fabric_id, {})[member] = expiry


async def active(fabric_id: int, now: float | None = None) -> set[tuple[str, str]]:
    """The ``(view key, encoding)`` pairs of ``fabric_id`` registered and not lapsed (lapsed ones are dropped)."""
    now = time.time() if now is None else now
    if settings.REDIS_URL:
        client = _redis()
        async with client.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(_key(fabric_id), "-inf", now)
            pipe.zrange(_key(fabric_id), 0, -1)
            _, members = await pipe.execute()
        members = [m.decode() if isinstance(m, bytes) else m for m in members]
    else:
        with _lock:
            held = _local.get(fabric_id, {})
            for m in [m for m, t in held.items() if t <= now]:
                del held[m]
            members = list(held)
    return {tuple(m.split("|", 1)) for m in members}


def clear(fabric_id: int | None = None) -> None:
    """Forget the registrations of this process (tests)."""
    with _lock:
        if fabric_id is None:
            _local.clear()
            _registered.clear()
        else:
            _local.pop(fabric_id, None)
            for key in [k for k in _registered if k[0] == fabric_id]:
                del _registered[key]
