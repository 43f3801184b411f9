"""The health store's read-merge-write is atomic across processes: two writers of one fabric's readings (two web
processes taking pushes, a push and a sweep) on Redis both keep their rows.

Two threads stand for two processes: each has its own cache connection, and the process lock is taken out of the
way (a process has only its own). Their merges are made to meet: each waits, once it has read the readings, for the
other to have read them too. Without a lock both read the same readings and the second write drops the first's
rows; with the Redis lock the second cannot read before the first wrote (the first's wait ends unmet, and it goes
on), so both rows are kept.
"""

from __future__ import annotations

import contextlib
import threading

from django.core.cache import caches
from django.test import override_settings

from fabric_engine.health.records import Builder
from ibweb.runtime import health_readings
from tests.support.services import require_redis

MET_WAIT_S = 2.0  # how long a merge waits for the other to have read too (never met with the lock)


def rows(port: int):
    b = Builder(f"push {port}")
    b.add(0x98039B0300000001, "leaf01", port, {"t": 1000.0, "temp": 40.0 + port})
    return b.build()


class MeetingCache:
    """The cache, except that reading a fabric's readings waits for the other writer to have read them too."""

    def __init__(self, real, barrier: threading.Barrier) -> None:
        self.real, self.barrier = real, barrier

    def get(self, key, *args, **kwargs):
        value = self.real.get(key, *args, **kwargs)
        if key.endswith(":health"):
            with contextlib.suppress(threading.BrokenBarrierError):
                self.barrier.wait()
        return value

    def __getattr__(self, name):
        return getattr(self.real, name)


def _merge_concurrently(monkeypatch, url: str) -> list[int]:
    caches_setting = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url,
                                  "KEY_PREFIX": "health-lock-test"}}
    with override_settings(CACHES=caches_setting):
        health_readings.forget(1)
        barrier = threading.Barrier(2, timeout=MET_WAIT_S)
        monkeypatch.setattr(health_readings, "cache", MeetingCache(caches["default"], barrier))
        monkeypatch.setattr(health_readings, "_lock", contextlib.nullcontext())  # two processes: two process locks
        errors: list[BaseException] = []

        def push(port: int) -> None:
            try:
                health_readings.put(1, rows(port))
            except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                errors.append(exc)

        threads = [threading.Thread(target=push, args=(p,)) for p in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not errors, errors
        monkeypatch.setattr(health_readings, "cache", caches["default"])
        rec = health_readings.read(1)
        health_readings.forget(1)
        return sorted(rec.port.tolist())


def test_two_processes_merging_at_once_both_keep_their_rows(monkeypatch):
    url = require_redis(db=14)
    assert _merge_concurrently(monkeypatch, url) == [1, 2]


def test_without_the_lock_one_merge_loses_the_others_rows(monkeypatch):
    """What the lock prevents, shown: the same two merges with the Redis lock taken away lose a reading."""
    url = require_redis(db=14)

    @contextlib.contextmanager
    def no_lock(_fabric_id):
        yield

    monkeypatch.setattr(health_readings, "merge_lock", no_lock)
    assert len(_merge_concurrently(monkeypatch, url)) == 1


def test_the_lock_is_per_fabric(monkeypatch):
    url = require_redis(db=14)
    caches_setting = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url,
                                  "KEY_PREFIX": "health-lock-test"}}
    with override_settings(CACHES=caches_setting):
        monkeypatch.setattr(health_readings, "_lock", contextlib.nullcontext())
        with health_readings.merge_lock(1):  # another fabric's merge is not held up by fabric 1's
            done = threading.Event()
            threading.Thread(target=lambda: (health_readings.put(2, rows(1)), done.set())).start()
            assert done.wait(10)
        assert health_readings.read(2) is not None
        health_readings.forget(2)
