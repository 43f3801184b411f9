"""The cache lock (ibweb.runtime.cache_lock): one holder at a time, and a holder that outlived its timeout does not
release the lock another process took since, on Redis (redis-py's lock) and on a local-memory cache."""

from __future__ import annotations

import time

import pytest
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.test import override_settings

from ibweb.runtime.cache_lock import acquire, held, release
from tests.support.services import require_redis


@pytest.fixture(params=["locmem", "redis"])
def cache(request):
    if request.param == "locmem":
        local = LocMemCache("cache-lock-test", {})
        local.clear()  # instances of one name share their entries
        yield local
        return
    url = require_redis(db=15)
    setting = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url,
                           "KEY_PREFIX": "cache-lock-test"}}
    with override_settings(CACHES=setting):
        yield caches["default"]


def test_one_holder_at_a_time_and_the_lock_is_free_after_the_block(cache):
    with held(cache, "turn", 30) as first:
        assert first
        with held(cache, "turn", 30) as second:
            assert not second, "taken"
        assert acquire(cache, "turn", 30) is None, "a block that did not get the lock does not free it"
    with held(cache, "turn", 30) as again:
        assert again


def test_a_holder_past_its_timeout_leaves_the_next_holders_lock_in_place(cache):
    first = acquire(cache, "turn", 1)
    assert first is not None
    time.sleep(1.2)  # the first holder outlives its timeout: the key expired
    second = acquire(cache, "turn", 30)
    assert second is not None and second != first
    assert release(cache, "turn", first) is False
    assert acquire(cache, "turn", 30) is None, "still the second's"
    assert release(cache, "turn", second) is True
    assert acquire(cache, "turn", 30, wait_s=0.1) is not None


def test_a_waiter_gets_the_lock_once_it_is_released(cache):
    token = acquire(cache, "turn", 30)
    assert acquire(cache, "turn", 30, wait_s=0.1) is None
    release(cache, "turn", token)
    assert acquire(cache, "turn", 30, wait_s=0.1) is not None
