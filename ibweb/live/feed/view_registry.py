"""Which (view, encoding) pairs of a fabric's feed have sockets: consumers register, the runner reads.

Each web process registers a pair for its own sockets: on a socket's connect, again every
:data:`REFRESH_S` seconds, and :func:`release` removes it when the process's last socket of the
pair closes or leaves the view, so a pair nobody watches stops being encoded at the next tick. An
entry not refreshed for :data:`TTL_S` seconds lapses (its web process died). With ``REDIS_URL`` the
registry is a Redis sorted set per fabric (member ``"<view key>|<encoding>|<process>"``, score:
expiry time), shared by every web process and by whichever process leads the fabric; without it
(the embedded default, one process) a dictionary.

A socket registers on connect; its keep-alives register the pair only when this process has not
done so in the last :data:`REFRESH_S`, however many of its sockets share it: sockets that connected
together fall due together, and a Redis call each would open a burst of connections in the middle
of the feed's fan-out. The pair still never lapses while a socket has it: the next keep-alive after
skipped ones comes at most two :data:`REFRESH_S` after the last registration, inside :data:`TTL_S`.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import weakref

from django.conf import settings

__all__ = ["register", "release", "active", "REFRESH_S", "TTL_S", "clear"]

REFRESH_S = 10.0
TTL_S = 30.0

_local: dict[int, dict[str, float]] = {}
_lock = threading.Lock()
_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: When this process last registered each (fabric, member).
_registered: dict[tuple[int, str], float] = {}
#: This process's open sockets per (fabric, member).
_sockets: dict[tuple[int, str], int] = {}


def _key(fabric_id: int) -> str:
    return f"{settings.REDIS_NAMESPACE}:live:{fabric_id}:views"


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
    """This process's registry member for the pair (process: host and pid, so each web process has its own)."""
    return f"{view_key}|{encoding}|{socket.gethostname()}:{os.getpid()}"


def _pair(member: str) -> tuple[str, str]:
    view_key, encoding = member.rsplit("|", 2)[:2]
    return view_key, encoding


async def _write(fabric_id: int, member: str, expiry: float) -> None:
    if settings.REDIS_URL:
        await _redis().zadd(_key(fabric_id), {member: expiry})
        return
    with _lock:
        _local.setdefault(fabric_id, {})[member] = expiry


async def _remove(fabric_id: int, member: str) -> None:
    if settings.REDIS_URL:
        await _redis().zrem(_key(fabric_id), member)
        return
    with _lock:
        _local.get(fabric_id, {}).pop(member, None)


async def register(fabric_id: int, view_key: str, encoding: str, now: float | None = None, *,
                   keep_alive: bool = False) -> None:
    """Record that a socket of ``fabric_id`` wants frames of ``view_key`` in ``encoding`` (for :data:`TTL_S`).

    ``keep_alive``: a socket's periodic renewal, skipped when this process registered the pair
    less than :data:`REFRESH_S` ago; otherwise a socket entering the pair (pair with :func:`release`).
    """
    now = time.time() if now is None else now
    member = _member(view_key, encoding)
    with _lock:
        if not keep_alive:
            _sockets[(fabric_id, member)] = _sockets.get((fabric_id, member), 0) + 1
        elif now - _registered.get((fabric_id, member), -TTL_S) < REFRESH_S:
            return
        _registered[(fabric_id, member)] = now
    await _write(fabric_id, member, now + TTL_S)


async def release(fabric_id: int, view_key: str, encoding: str) -> None:
    """A socket left the pair; the process's last one removes the pair's registration at once."""
    member = _member(view_key, encoding)
    with _lock:
        if (fabric_id, member) not in _sockets:  # its register never counted it
            return
        left = _sockets[(fabric_id, member)] - 1
        if left > 0:
            _sockets[(fabric_id, member)] = left
            return
        _sockets.pop((fabric_id, member), None)
        _registered.pop((fabric_id, member), None)
    await _remove(fabric_id, member)
    with _lock:  # a socket that entered the pair meanwhile may have written before the removal: write again
        again = (fabric_id, member) in _sockets
        if again:
            _registered[(fabric_id, member)] = now = time.time()
    if again:
        await _write(fabric_id, member, now + TTL_S)


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
    return {_pair(m) for m in members}


def clear(fabric_id: int | None = None) -> None:
    """Forget the registrations of this process (tests)."""
    with _lock:
        if fabric_id is None:
            _local.clear()
            _registered.clear()
            _sockets.clear()
        else:
            _local.pop(fabric_id, None)
            for held in (_registered, _sockets):
                for key in [k for k in held if k[0] == fabric_id]:
                    del held[key]
