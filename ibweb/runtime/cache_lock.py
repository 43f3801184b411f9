"""A lock in the cache, held by one process at a time for at most its timeout, released only by its holder.

On Redis it is redis-py's own lock (``client.lock``: a token per holder, an atomic compare-and-delete at release),
on the cache's connection pool, as the health readings' merge lock and the engine's leader lock take theirs. A
holder that outlives the timeout (a slow send, a long report) finds the key expired and perhaps taken by another
process: its release leaves that other holder's lock in place (a plain ``cache.delete`` would free it for a
third). On a local-memory cache (one process) the key holds a token of the holder's, read then deleted.

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

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import LockNotOwnedError

__all__ = ["acquire", "release", "held"]


def acquire(cache, key: str, timeout_s: float, wait_s: float = 0.0, poll_s: float = 0.02):
    """Take ``key`` for ``timeout_s`` seconds, waiting up to ``wait_s`` for it; the holder's handle, or None."""
    if isinstance(cache, RedisCache):
        full = cache.make_and_validate_key(key)
        lock = cache._cache.get_client(full, write=True).lock(full, timeout=timeout_s, sleep=poll_s,
                                                              blocking=wait_s > 0, blocking_timeout=wait_s or None)
        return lock if lock.acquire() else None
    token = secrets.token_hex(16)
    end = time.monotonic() + wait_s
    while not cache.add(key, token, timeout_s):
        if time.monotonic() >= end:
            return None
        time.sleep(poll_s)
    return token


def release(cache, key: str, handle) -> bool:
    """Free ``key`` if ``handle`` (from :func:`acquire`) still holds it; whether it did."""
    if isinstance(cache, RedisCache):
        try:
            handle.release()
        except LockNotOwnedError:
            return False
        return True
    if cache.get(key) != handle:
        return False
    cache.delete(key)
    return True


@contextlib.contextmanager
def held(cache, key: str, timeout_s: float, wait_s: float = 0.0) -> Iterator[bool]:
    """``with held(cache, key, timeout_s) as got:`` -- ``got`` is whether this process holds the lock in the block."""
    handle = acquire(cache, key, timeout_s, wait_s)
    try:
        yield handle is not None
    finally:
        if handle is not None:
            release(cache, key, handle)
