"""``BackgroundLane``: work run in turn on one thread, a failure logged without stopping the lane, ``wait_idle``."""

from __future__ import annotations

import logging
import threading

from ibweb.db.background import BackgroundLane


def test_work_runs_in_order_on_one_thread_and_a_failure_is_logged_not_raised(caplog):
    lane = BackgroundLane("test-lane", logging.getLogger("test.lane"))
    done: list[tuple[int, str]] = []

    def work(i: int) -> None:
        if i == 2:
            raise RuntimeError("boom")
        done.append((i, threading.current_thread().name))

    with caplog.at_level(logging.ERROR, logger="test.lane"):
        for i in range(5):
            lane.submit(work, i)
        assert lane.wait_idle(10)
    assert [i for i, _ in done] == [0, 1, 3, 4]
    assert len({name for _, name in done}) == 1 and done[0][1].startswith("test-lane")
    assert "test-lane: work failed" in caplog.text and "boom" in caplog.text


def test_wait_idle_says_when_work_is_still_running():
    lane = BackgroundLane("test-lane", logging.getLogger("test.lane"))
    release = threading.Event()
    lane.submit(release.wait, 10)
    assert lane.wait_idle(0.2) is False
    release.set()
    assert lane.wait_idle(10) is True
