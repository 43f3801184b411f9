"""One engine leader per fabric: a Redis lock with expiry, renewed every tick.

Several ``run_engine`` processes (or web workers running the embedded engine)
may host the same fabric; only the holder of ``ibweb:leader:<fabric id>``
publishes. The lock expires ``ttl_s`` after the last renewal, so a killed leader
is replaced within that time by a standby that polls for it.
"""

from __future__ import annotations

import secrets

from redis import asyncio as aioredis

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


class LeaderLock:
    """Leadership of one fabric's engine, held by a random token."""

    def __init__(self, redis_url: str, fabric_id: int, ttl_s: float = 5.0, namespace: str = "ibweb") -> None:
        self.redis = aioredis.from_url(redis_url)
        self.key = f"{namespace}:leader:{fabric_id}"
        self.ttl_ms = int(ttl_s * 1000)
        self.token = secrets.token_hex(16)
        self.held = False

    async def hold(self) -> bool:
        """Acquire the lock or renew it; returns whether this process leads now.

        When Redis cannot be reached the lock counts as lost (and the error is raised): on
        getting it back the runner acts as a new leader and publishes its record again.
        """
        try:
            if self.held:
                self.held = bool(await self.redis.eval(_RENEW, 1, self.key, self.token, self.ttl_ms))
            if not self.held:
                self.held = bool(await self.redis.set(self.key, self.token, nx=True, px=self.ttl_ms))
        except Exception:
            self.held = False
            raise
        return self.held

    async def led_elsewhere(self) -> bool:
        """Whether another process leads the fabric now (its lock is set and not ours)."""
        return not self.held and bool(await self.redis.exists(self.key))

    async def resign(self) -> None:
        """Give the lock up (if held) and stay able to take it again: a handover to another process."""
        if self.held:
            self.held = False
            await self.redis.eval(_RELEASE, 1, self.key, self.token)

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
