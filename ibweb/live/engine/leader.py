"""One engine leader per fabric: a Redis lock with expiry, renewed every tick.

Several ``run_engine`` processes (or web workers running the embedded engine)
may host the same fabric; only the holder of ``ibweb:leader:<fabric id>``
publishes. The lock expires ``ttl_s`` after the last renewal, so a killed leader
is replaced within that time by a standby that polls for it.

The lock is redis-py's :class:`redis.asyncio.lock.Lock`: a random token per acquisition
(``SET NX PX``), and Lua scripts that renew (``reacquire``: the expiry back to the full
timeout) or delete the key only while it holds that token. What is kept here is what a
leader needs beyond it: ``held`` (what this process believes, so that a lock found lost is
taken again as a new leader and a Redis error counts as lost), ``led_elsewhere()``, and a
resignation that never raises for a lock already lost. The token is kept per lock, not per
thread (``thread_local=False``): the runner holds it, whichever thread asks.
"""

from __future__ import annotations

import contextlib

from redis import asyncio as aioredis
from redis.asyncio.lock import Lock
from redis.exceptions import LockError


class LeaderLock:
    """Leadership of one fabric's engine, held by a random token."""

    def __init__(self, redis_url: str, fabric_id: int, ttl_s: float = 5.0, namespace: str = "ibweb") -> None:
        self.redis = aioredis.from_url(redis_url)
        self.key = f"{namespace}:leader:{fabric_id}"
        self.ttl_ms = int(ttl_s * 1000)
        self.lock = Lock(self.redis, self.key, timeout=self.ttl_ms / 1000, blocking=False, thread_local=False)
        self.held = False

    async def hold(self) -> bool:
        """Acquire the lock or renew it to its full expiry; returns whether this process leads now.

        When Redis cannot be reached the lock counts as lost (and the error is raised): on
        getting it back the runner acts as a new leader and publishes its record again.
        """
        try:
            if self.held:
                try:
                    await self.lock.reacquire()
                except LockError:  # expired, or taken by another process meanwhile
                    self.held = False
            if not self.held:
                self.held = await self.lock.acquire(blocking=False)
        except Exception:
            self.held = False
            raise
        return self.held

    async def led_elsewhere(self) -> bool:
        """Whether another process leads the fabric now (its lock is set and not ours)."""
        return not self.held and await self.lock.locked()

    async def resign(self) -> None:
        """Give the lock up (if held) and stay able to take it again: a handover to another process."""
        if self.held:
            self.held = False
            with contextlib.suppress(LockError):  # already expired or taken: nothing of ours to delete
                await self.lock.release()

    async def release(self) -> None:
        """Give the lock up for good: the runner stops."""
        try:
            await self.resign()
        finally:
            await self.redis.aclose()


class NoLock:
    """Leadership when there is no shared Redis: this process always leads."""

    held = True

    async def hold(self) -> bool:
        return True

    async def led_elsewhere(self) -> bool:
        return False

    async def release(self) -> None:
        return None
