"""A fabric leader's lock, renewed while a build or a tick runs (:func:`renewing`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from ibweb.live.engine.leader import LeaderLock

__all__ = ["renewing"]

log = logging.getLogger("ibweb.live")


@contextlib.asynccontextmanager
async def renewing(lock, slug: str) -> AsyncIterator[None]:
    """Renew the held ``lock`` of fabric ``slug`` every half second (at most a third of its expiry) while the body runs.

    A build, or a tick, takes seconds on a large fabric and longer on a loaded machine (several planes
    of 16,384 hosts in one process on two cores: a tick took over the lock's 3 s). Renewed only between
    ticks, the lock lapsed meanwhile, and the other processes took a fabric that was still led.
    A lock that is not a :class:`~ibweb.live.engine.leader.LeaderLock` (no Redis) is not renewed.
    """
    if not isinstance(lock, LeaderLock):
        yield
        return
    done = asyncio.Event()

    async def renew() -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), min(0.5, lock.ttl_ms / 3000))
                return
            try:
                if not await lock.hold():
                    return
            except Exception:
                log.exception("fabric %s: cannot renew its leader lock", slug)

    # Ended by the event, never cancelled: a cancellation landing inside a redis-py call can be lost, and
    # the runner waited for ever on a renewal that never ended (a plane's frames stopped, nothing logged).
    renewal = asyncio.get_running_loop().create_task(renew())
    try:
        yield
    finally:
        done.set()
        await asyncio.wait({renewal}, timeout=lock.ttl_ms / 1000)
