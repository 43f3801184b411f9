"""A runner reads the policy version from the database without holding its tick on it."""

import asyncio
import threading

from django.db import DatabaseError

from ibweb.live.engine import policy_watch
from ibweb.live.engine.policy_watch import PolicyVersionWatch


def test_a_database_that_does_not_answer_leaves_the_last_version_and_the_read_is_not_repeated(monkeypatch):
    answers = iter([3, 4])
    release = threading.Event()
    started = []

    def read(fabric_id):
        started.append(fabric_id)
        if len(started) == 2:
            release.wait(30)  # the database stops answering on the second read
        return next(answers)

    monkeypatch.setattr(policy_watch, "policy_version", read)
    monkeypatch.setattr(policy_watch, "WAIT_S", 0.05)
    watch = PolicyVersionWatch(7)

    async def run():
        assert await watch.current() == 3
        try:
            assert await watch.current() == 3, "a read still pending: the last version known"
            assert await watch.current() == 3
            assert started == [7, 7], "one read at a time: the pending one is waited for, not started again"
        finally:
            release.set()
        while await watch.current() != 4:  # the read ends once the database answers
            await asyncio.sleep(0.01)

    asyncio.run(run())


def test_a_failed_read_keeps_the_version_known(monkeypatch):
    answers = iter([5, DatabaseError("gone"), 6])

    def read(fabric_id):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(policy_watch, "policy_version", read)
    watch = PolicyVersionWatch(1)

    async def run():
        return [await watch.current() for _ in range(3)]

    assert asyncio.run(run()) == [5, 5, 6]
