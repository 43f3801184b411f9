"""The registry of (view, encoding) pairs with sockets: keep-alives of many sockets, one registration."""

import asyncio

import pytest
import redis
from django.test import override_settings

from ibweb.live.feed import view_registry as viewreg
from tests.support.services import require_redis


@override_settings(REDIS_URL="")  # the in-process registry (the embedded default)
async def test_keep_alives_of_a_processs_sockets_register_a_pair_once_per_refresh_and_it_never_lapses():
    viewreg.clear()
    try:
        connects = [0.0, 0.3, 0.5, 4.0, 9.9]  # five sockets of one process; each renews every REFRESH_S
        due = sorted((c + k * viewreg.REFRESH_S, k > 0) for c in connects for k in range(6))
        writes, expiry = 0, None
        for t, keep_alive in due:
            await viewreg.register(1, "all", "v1", now=t, keep_alive=keep_alive)
            if viewreg._local[1][viewreg._member("all", "v1")] != expiry:
                writes, expiry = writes + 1, viewreg._local[1][viewreg._member("all", "v1")]
            assert await viewreg.active(1, now=t) == {("all", "v1")}
            assert expiry - t > viewreg.TTL_S - 2 * viewreg.REFRESH_S  # the next renewal comes before it lapses
        last = due[-1][0]
        assert writes <= len(connects) + last / viewreg.REFRESH_S  # not one per socket and renewal
        assert writes < len(due) / 2
        assert await viewreg.active(1, now=last + viewreg.TTL_S + 0.1) == set()  # sockets gone: it lapses
    finally:
        viewreg.clear()


@pytest.fixture
def redis_registry():
    """A client of the registry's Redis database; the registry on it (REDIS_URL) while the test runs."""
    url = require_redis(db=12)
    client = redis.Redis.from_url(url)
    client.flushdb()
    viewreg.clear()
    try:
        with override_settings(REDIS_URL=url):
            yield client
    finally:
        viewreg.clear()
        client.close()


async def test_keep_alives_of_many_sockets_are_one_redis_write(redis_registry):
    await viewreg.register(3, "tenant:acme", "v2")
    redis_registry.config_resetstat()
    await asyncio.gather(*(viewreg.register(3, "tenant:acme", "v2", keep_alive=True) for _ in range(250)))
    assert await viewreg.active(3) == {("tenant:acme", "v2")}
    assert int(redis_registry.info("commandstats").get("cmdstat_zadd", {}).get("calls", 0)) == 0


@override_settings(REDIS_URL="")
async def test_the_last_socket_of_a_pair_releases_it_at_once():
    viewreg.clear()
    try:
        for _ in range(2):
            await viewreg.register(1, "t-1", "v2")
        await viewreg.register(1, "all", "v1")
        await viewreg.release(1, "t-1", "v2")
        assert await viewreg.active(1) == {("t-1", "v2"), ("all", "v1")}  # one socket still has it
        await viewreg.release(1, "t-1", "v2")
        assert await viewreg.active(1) == {("all", "v1")}
        await viewreg.release(1, "t-1", "v2")  # released again (a socket whose register failed): no effect
        await viewreg.register(1, "t-1", "v2", keep_alive=True)  # a late keep-alive registers it again
        await viewreg.release(1, "all", "v1")
        assert await viewreg.active(1) == {("t-1", "v2")}
    finally:
        viewreg.clear()


async def test_a_process_releases_only_its_own_registration_of_a_pair(redis_registry):
    await viewreg.register(4, "t-1", "v1")
    redis_registry.zadd(viewreg._key(4), {"t-1|v1|other-host:1": 10**12})  # another web process's sockets
    await viewreg.release(4, "t-1", "v1")
    assert await viewreg.active(4) == {("t-1", "v1")}
    redis_registry.zrem(viewreg._key(4), "t-1|v1|other-host:1")
    assert await viewreg.active(4) == set()
    # a socket entering the pair while the last one leaves: the pair stays registered
    await viewreg.register(4, "all", "v2")
    await asyncio.gather(viewreg.release(4, "all", "v2"), viewreg.register(4, "all", "v2"))
    assert await viewreg.active(4) == {("all", "v2")}
