"""The leader lock on real Redis: redis-py's Lock with today's semantics (issue 24, item 6)."""

import asyncio
import os
import uuid

import pytest
import redis

from ibweb.live.engine.leader import LeaderLock

URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


@pytest.fixture
def namespace():
    """A namespace of this test's own (no flush: other tests may use the same database meanwhile)."""
    try:
        redis.Redis.from_url(URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis at {URL} is not available: {exc}")
        pytest.skip(f"Redis at {URL} is not available: {exc}")
    ns = f"test-leader-{uuid.uuid4().hex[:8]}"
    yield ns
    client = redis.Redis.from_url(URL)
    client.delete(*client.keys(f"{ns}:*") or [f"{ns}:none"])


def test_one_holder_renewals_to_the_full_expiry_and_a_resignation_hands_over(namespace):
    async def run() -> None:
        a, b = (LeaderLock(URL, 7, ttl_s=1.0, namespace=namespace) for _ in range(2))
        try:
            assert await a.hold() and a.held
            assert not await b.hold() and not b.held and await b.led_elsewhere() and not await a.led_elsewhere()
            await asyncio.sleep(0.6)
            assert await a.hold()  # renewed: the full second again, not what was left of it
            assert 900 < await a.redis.pttl(a.key) <= 1000
            await a.resign()
            assert not a.held and not await b.led_elsewhere() and await b.hold()
            assert not await a.hold() and await a.led_elsewhere()
        finally:
            await a.release()
            await b.release()

    asyncio.run(run())


def test_a_lapsed_lock_taken_by_another_is_lost_and_a_lapsed_free_one_taken_again(namespace):
    async def run() -> None:
        a, b = (LeaderLock(URL, 8, ttl_s=0.3, namespace=namespace) for _ in range(2))
        try:
            assert await a.hold()
            await asyncio.sleep(0.45)  # a's lock lapsed: nobody holds it
            assert await a.hold() and a.held  # taken again
            await asyncio.sleep(0.45)
            assert await b.hold()  # b took the lapsed lock
            assert not await a.hold() and not a.held and await a.led_elsewhere()
            await a.resign()  # a lost lock: resigning deletes nothing of b's
            assert await b.redis.exists(b.key) and await b.hold()
        finally:
            await a.release()
            await b.release()
        assert not await LeaderLock(URL, 8, namespace=namespace).led_elsewhere()  # released for good

    asyncio.run(run())


def test_a_redis_error_counts_as_lost_and_is_raised(namespace):
    async def run() -> None:
        a = LeaderLock(URL, 9, ttl_s=2.0, namespace=namespace)
        reachable = a.redis
        try:
            assert await a.hold()
            a.lock.redis = a.redis = redis.asyncio.from_url("redis://127.0.0.1:1/0")  # nothing listens there
            with pytest.raises(redis.ConnectionError):
                await a.hold()
            assert not a.held
        finally:
            await a.release()
            await reachable.aclose()

    asyncio.run(run())
