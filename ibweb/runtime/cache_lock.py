"""A lock in the cache, held by one process at a time for at most its timeout, released only by its holder.

``cache.add`` takes a key only when it is free; the holder's value is a token of its own, and the release deletes
the key only while it still holds that token. A holder that outlives the timeout (a slow send, a long report) finds
the key expired and perhaps taken by another process: its release leaves that other holder's lock in place (a
plain ``cache.delete`` would free it for a third). On Redis the compare and delete is one atomic script; on a
local-memory cache (one process) it is a read then a delete.

>>> from django.core.cache.backends.locmem import LocMemCache
>>> c = LocMemCache("doctest", {})
>>> with held(c, "k", 60) as got:
...     got, c.get("k") is not None
(True, True)
>>> c.get("k") is None
True
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Iterator

__all__ = ["acquire", "release", "held"]

# KEYS[1]: the key; ARGV[1]: the token.
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


def acquire(cache, key: str, timeout_s: float, wait_s: float = 0.0, poll_s: float = 0.02) -> str | None:
    """Take ``key`` for ``timeout_s`` seconds, waiting up to ``wait_s`` for it; the holder's token, or None."""
    token = secrets.token_hex(16)
    end = time.monotonic() + wait_s
    while not cache.add(key, token, timeout_s):
        if time.monotonic() >= end:
            return None
        time.sleep(poll_s)
    return token


def release(cache, key: str, token: str) -> bool:
    """Delete ``key`` if it still holds ``token``; whether it did."""
    client = _redis_client(cache, key)
    if client is not None:
        return bool(client.eval(_RELEASE, 1, cache.make_and_validate_key(key), _dumped(cache, token)))
    if cache.get(key) != token:
        return False
    cache.delete(key)
    return True


@contextlib.contextmanager
def held(cache, key: str, timeout_s: float, wait_s: float = 0.0) -> Iterator[bool]:
    """``with held(cache, key, timeout_s) as got:`` -- ``got`` is whether this process holds the lock in the block."""
    token = acquire(cache, key, timeout_s, wait_s)
    try:
        yield token is not None
    finally:
        if token is not None:
            release(cache, key, token)


def _redis_client(cache, key: str):
    """The redis-py client holding ``key`` of Django's Redis cache backend, else None."""
    inner = getattr(cache, "_cache", None)
    get_client = getattr(inner, "get_client", None)
    if get_client is None or not hasattr(cache, "make_and_validate_key"):
        return None
    return get_client(cache.make_and_validate_key(key), write=True)


def _dumped(cache, value):
    """``value`` as Django's Redis backend stores it (its serializer), to compare with what ``add`` wrote."""
    return cache._cache._serializer.dumps(value)
