"""Issue 35: a 10 s sweep interval gave sweeps every 11 s (the next was timed from the previous one's end).

Sweeps now keep a fixed cadence (:class:`ibweb.telemetry.cadence.Cadence`): each slot is the previous slot plus
the interval, in the embedded engine's source (checked every tick) and in the beat task (every 2 s). Both are
driven here by a fake clock and their start-to-start times measured.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import numpy as np
import pytest
from django.core.cache import cache

from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.telemetry import source as source_module
from ibweb.telemetry import tasks
from ibweb.telemetry.cadence import Cadence
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.models import CollectorConfig, Sweep
from ibweb.telemetry.source import TelemetrySource


class Clock:
    """A fake ``time.time``."""

    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_the_cadence_is_the_previous_slot_plus_the_interval():
    c = Cadence()
    starts = []
    for now in np.arange(0.0, 60.0, 0.7) + 0.3:  # looked at every 0.7 s
        if c.due(now):
            starts.append(now)
            assert c.begin(now, 10.0) == 0
    assert np.allclose(starts[0], 0.3) and len(starts) == 6
    assert np.all(np.abs(np.array(starts) - (0.3 + 10 * np.arange(6))) < 0.7)  # never more than a look late
    assert c.begin(100.0, 10.0) == 3 and c.next_at == pytest.approx(100.3)  # 60.3..80.3 skipped, 90.3 taken late
    assert Cadence(5000.0).begin(100.0, 10.0) == 0  # a clock set back: start again


@pytest.mark.django_db
def test_the_embedded_source_sweeps_every_10_s_with_a_10_s_interval(monkeypatch):
    """Ticks every second, sweeps that take 1.2 s: the old timing (end + interval) started one every 11 to 12 s."""
    clock = Clock()
    monkeypatch.setattr(source_module.time, "time", clock)
    fabric = Fabric.objects.create(name="Lab", slug="lab", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=fabric, source=CollectorSource.COMMANDS, interval_s=10.0)
    newest: dict | None = None
    starts: list[float] = []

    def fake_sweep(_config):
        nonlocal newest
        starts.append(clock.t)
        newest = {"t": clock.t + 1.2}  # the sweep's samples, read as it ends

    monkeypatch.setattr(source_module, "run_sweep", fake_sweep)

    async def run() -> None:
        src = TelemetrySource(fabric)
        src.config = config
        for _ in range(120):  # two minutes of 1 s ticks
            if src._due(newest):
                src._start_sweep()
                await src._sweep_thread
            clock.t += 1.0

    asyncio.run(run())
    gaps = np.diff(starts)
    assert len(starts) == 12 and np.all(gaps == 10.0), gaps


@pytest.mark.django_db
def test_an_overrunning_sweep_skips_the_slots_it_missed_with_a_note(monkeypatch, caplog):
    clock = Clock()
    monkeypatch.setattr(source_module.time, "time", clock)
    fabric = Fabric.objects.create(name="Lab", slug="lab", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=fabric, source=CollectorSource.COMMANDS, interval_s=10.0)
    starts: list[float] = []
    monkeypatch.setattr(source_module, "run_sweep", lambda _c: starts.append(clock.t))
    caplog.set_level(logging.WARNING, logger="ibweb.telemetry")

    async def run() -> None:
        src = TelemetrySource(fabric)
        src.config = config
        for tick in range(60):
            busy = tick < 25  # the first sweep runs for 25 s
            if src._sweep_thread is None or not busy:
                if src._due(None):
                    src._start_sweep()
                    await src._sweep_thread
                    if busy:  # still running as far as _due sees
                        src._sweep_thread = asyncio.get_running_loop().create_future()
            elif tick == 25 - 1:
                src._sweep_thread.set_result(None)
            clock.t += 1.0

    asyncio.run(run())
    t0 = starts[0]
    assert [s - t0 for s in starts] == [0.0, 25.0, 30.0, 40.0, 50.0]  # slot 10 skipped, 20 taken late
    assert [r.getMessage() for r in caplog.records] == [
        "fabric lab: 1 sweep slot(s) of 10 s skipped: the previous sweep overran"]


@pytest.mark.django_db
def test_the_beat_task_keeps_a_10_s_cadence(monkeypatch):
    """Beat every 2 s, a sweep row stamped as its worker picks it up: the old timing started one every 12 s."""
    cache.clear()
    clock = Clock()
    monkeypatch.setattr(tasks.time, "time", clock)
    fabric = Fabric.objects.create(name="Lab", slug="lab", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=fabric, source=CollectorSource.COMMANDS, interval_s=10.0)
    starts: list[float] = []

    class FakeTask:
        @staticmethod
        def delay(pk: int) -> None:
            starts.append(clock.t)
            Sweep.objects.create(config_id=pk, source=config.source,
                                 started=datetime.fromtimestamp(clock.t + 0.05, tz=UTC))
            cache.delete(f"ibweb:telemetry:{fabric.pk}:sweeping")  # done before the next beat

    monkeypatch.setattr(tasks, "sweep_fabric", FakeTask)
    monkeypatch.setattr("django.utils.timezone.now", lambda: datetime.fromtimestamp(clock.t, tz=UTC))
    for _ in range(60):  # two minutes of beats
        tasks.schedule_sweeps()
        clock.t += 2.0
    gaps = np.diff(starts)
    assert len(starts) == 12 and np.all(gaps == 10.0), gaps
    cache.clear()
