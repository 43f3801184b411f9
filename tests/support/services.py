"""Real PostgreSQL and Redis for tests: present, or a failure under CI=true."""

from __future__ import annotations

import os

import pytest

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def require_redis(db: int = 0) -> str:
    """URL of a reachable Redis database ``db`` (flushed), or skip/fail.

    Each test module passes its own ``db`` (4 and up; 0-3 are the workers' of ``make test-services``); under
    ``make test`` (pytest-xdist) the modules that call this run on one worker, one test at a time (the
    ``pytest_xdist_make_scheduler`` of ``tests/conftest.py``)."""
    import redis

    url = REDIS_URL.rsplit("/", 1)[0] + f"/{db}"
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=2)
        client.ping()
        client.flushdb()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis at {url} is not available: {exc}")
        pytest.skip(f"Redis at {url} is not available: {exc}")
    return url
