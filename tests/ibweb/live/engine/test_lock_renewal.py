"""The leader's lock renewal around a build or a tick ends with its body, whatever redis-py does (issue 25)."""

import asyncio

from ibweb.live.engine.leader import LeaderLock
from ibweb.live.engine.renewal import renewing


class SwallowingLock(LeaderLock):
    """A lock whose renewal takes 0.3 s and loses a cancellation that lands in it, as a redis-py call may."""

    renewals = 0

    async def hold(self) -> bool:
        try:
            await asyncio.sleep(0.3)
        except asyncio.CancelledError:
            await asyncio.sleep(0.3)
        self.renewals += 1
        return True


def test_the_renewal_ends_with_the_body_even_when_a_call_under_it_swallows_a_cancellation():
    lock = SwallowingLock("redis://127.0.0.1:1/0", 1, ttl_s=3.0)  # never connects: hold() is replaced

    async def tick() -> None:
        async with renewing(lock, "renewal"):
            await asyncio.sleep(0.65)  # the body ends while a renewal is under way

    asyncio.run(asyncio.wait_for(tick(), 5))
    assert lock.renewals == 1


def test_the_lock_is_renewed_while_a_long_body_runs():
    lock = SwallowingLock("redis://127.0.0.1:1/0", 1, ttl_s=3.0)

    async def build() -> None:
        async with renewing(lock, "renewal"):
            await asyncio.sleep(2.5)

    asyncio.run(asyncio.wait_for(build(), 10))
    assert lock.renewals >= 3
