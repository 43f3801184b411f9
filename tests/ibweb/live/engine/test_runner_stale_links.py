"""The runner records a state's stale links as unmeasured in history, however many the ``stale`` alert lists."""

import asyncio
import dataclasses

import numpy as np
import pytest

from ibweb.fabrics.demo import ensure_demo
from ibweb.live.history import reads, ring
from tests.support.engine_fixtures import published, settled_tick

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def runner(monkeypatch):
    fabric, _ = ensure_demo()
    ring.clear(fabric.pk)
    yield published(fabric)
    ring.clear(fabric.pk)


def _step_with(runner, stale_of):
    """Have the runner's source give its states with ``stale_of(n)`` as stale mask (and the alert observe makes)."""
    step = runner.source.step

    async def stale_step(seq, now):
        state = await step(seq, now)
        n = len(state.rate_gbps)
        stale = stale_of(n)
        if stale is None:
            return state
        links = np.flatnonzero(stale)
        alert = {"kind": "stale", "severity": "warning", "count": int(links.size), "links": links[:50].tolist(),
                 "message": f"{links.size} links: no counters in both sweeps; rate unknown"}
        rate = np.where(stale, 0.0, np.maximum(state.rate_gbps, 1.0)).astype(np.float32)  # stale: 0, as observe has
        return dataclasses.replace(state, rate_gbps=rate, util=rate / 400, stale=stale, alerts=[*state.alerts, alert])

    runner.source.step = stale_step


def test_more_than_fifty_stale_links_are_all_unmeasured(runner):
    every_third = lambda n: np.arange(n) % 3 == 0  # noqa: E731
    _step_with(runner, every_third)
    asyncio.run(settled_tick(runner))
    n = reads.newest(runner.fabric_id)[1]
    stale = every_third(n)
    assert stale.sum() > 50
    s = reads.series(runner.fabric_id, np.arange(n))
    assert s.util.shape == (1, n)
    assert np.isnan(s.util[0, stale]).all() and np.isnan(s.rate[0, stale]).all()  # the 51st on too: no 0
    assert not np.isnan(s.util[0, ~stale]).any() and (s.rate[0, ~stale] >= 1.0).all()


def test_a_state_without_a_stale_mask_is_all_measured(runner):
    _step_with(runner, lambda n: None)
    asyncio.run(settled_tick(runner))
    n = reads.newest(runner.fabric_id)[1]
    assert not np.isnan(reads.series(runner.fabric_id, np.arange(n)).util).any()
