"""The source of an emulated fabric: its scenario spec, built into an :class:`~fabric_engine.emulator.Emulator`."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable

import numpy as np

from fabric_engine.backpressure.cc_params import CongestionControl
from fabric_engine.emulator import Emulator
from fabric_engine.health.records import HealthRecords
from fabric_engine.policy import Policy
from fabric_engine.routing import Routing
from fabric_engine.scenario import build_emulator
from fabric_engine.state import FabricState
from fabric_engine.topology import Fabric
from fabric_engine.workload import Job
from ibweb.live.engine.sources import Progress
from ibweb.runtime import health_readings
from ibweb.runtime.catalog import job_catalog

__all__ = ["EmulatedSource"]


class EmulatedSource:
    """Builds the fabric's scenario (``Fabric.scenario()``) and steps its emulator once per tick."""

    topology_version: int
    #: The scenario's jobs are the catalog for good (only a changed row, i.e. a new source, changes them).
    catalog_version: Hashable = 0

    def __init__(self, row) -> None:
        self.scenario = row.scenario()
        self.emulator: Emulator | None = None
        self.topology_version = 0
        self._clock0: float | None = None
        self._fabric_id: int | None = getattr(row, "pk", None)
        self._kept = health_readings.Readings()

    @property
    def fabric(self) -> Fabric | None:
        return self.emulator.fabric if self.emulator is not None else None

    @property
    def routing(self) -> Routing | None:
        return self.emulator.routing if self.emulator is not None else None

    @property
    def paths(self):
        """The path model the emulator routes flows with (static LFT paths, or adaptive)."""
        return self.emulator.paths if self.emulator is not None else None

    async def start(self, progress: Progress) -> None:
        """Build the emulator in a thread (routing takes a while on big fabrics)."""
        await progress(0.05, f"building the fabric and routing it with {self.scenario.get('routing', 'minhop')}")
        self.emulator = await asyncio.to_thread(build_emulator, self.scenario)
        self.topology_version += 1

    async def step(self, seq: int, now: float) -> FabricState:
        """Advance the emulator one tick (in a thread); the state carries ``seq``."""
        if self._clock0 is None:  # the emulation's clock: wall time at its start + emulated seconds
            self._clock0 = now - self.emulator.elapsed
        state = await asyncio.to_thread(self.emulator.step, now, seq)
        if self._fabric_id is not None and self.emulator.health_readings is None:  # readings kept for the fabric
            await asyncio.to_thread(self._kept.refresh, self._fabric_id, self.emulator.fabric)
        return state

    def health(self) -> HealthRecords | None:
        """Every cable end's link health at the last tick's start, timed on the emulation's clock; without a
        ``health`` key in the scenario, the readings kept for the fabric (an uploaded ibdiagnet archive's,
        :func:`ibweb.fabrics.uploads.keep_health`), else None."""
        emu = self.emulator
        if emu is None or self._clock0 is None:
            return None
        now = self._clock0 + emu.elapsed - emu.tick_s
        rec = emu.health_readings
        if rec is None:  # refreshed by step(), in a thread
            return self._kept.records(now)
        t = np.broadcast_to(np.float64(now), (len(rec),))
        return HealthRecords(rec.guid, rec.name, rec.port, {**rec.data, "t": t}, rec.source)

    def totals(self) -> dict:
        return {}

    def jobs(self) -> list[Job]:
        return list(self.emulator.jobs) if self.emulator is not None else []

    def catalog(self, routing: Routing | None) -> list[dict]:
        """The scenario's jobs on ``routing``, along the emulator's own path model."""
        return job_catalog(self.jobs(), routing, self.paths)

    def apply_policy(self, policy: Policy | None) -> None:
        self.emulator.set_policy(policy)

    def apply_congestion_control(self, cc: CongestionControl) -> None:
        """The credit model's congestion control (the emulator ignores it under max-min)."""
        self.emulator.set_congestion_control(cc)

    def counters(self) -> tuple[np.ndarray, float] | None:
        return None

    def cables_down(self) -> list[dict]:
        return []  # an emulated fabric has no reference cabling to miss cables of

    async def stop(self) -> None:
        return None
