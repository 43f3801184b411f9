""":class:`FabricState`: what the engine knows about the fabric after one tick."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["FabricState", "JobState", "FEED_VERSION"]

#: Version of the live feed protocol (``"v"`` of every message).
FEED_VERSION = 1


@dataclass(frozen=True)
class JobState:
    """One job's traffic during a tick (bandwidths in Gb/s, summed over its flows)."""

    name: str
    tenant: str
    pattern: str
    hosts: int
    active: bool
    demand_gbps: float
    achieved_gbps: float

    def as_dict(self) -> dict:
        return {"id": self.name, "tenant": self.tenant, "pattern": self.pattern, "hosts": self.hosts,
                "active": self.active, "demand_gbps": round(self.demand_gbps, 3),
                "achieved_gbps": round(self.achieved_gbps, 3)}


@dataclass(frozen=True)
class FabricState:
    """Per-directed-link rates of one tick, plus jobs and alerts.

    ``rate_gbps`` and ``util`` are float32 ``[2L]`` in directed-link order;
    ``util = rate / capacity``. ``throughput_gbps`` is the traffic delivered to
    hosts (the sum over directed links that end at a host).
    """

    seq: int
    t: float
    tick_s: float
    rate_gbps: np.ndarray
    util: np.ndarray
    throughput_gbps: float = 0.0
    jobs: list[JobState] = field(default_factory=list)
    alerts: list[dict] = field(default_factory=list)

    def hottest(self) -> tuple[int, float]:
        """Directed link with the highest utilization and that utilization."""
        if self.util.size == 0:
            return -1, 0.0
        d = int(np.argmax(self.util))
        return d, float(self.util[d])

    def to_frame(self, totals: dict) -> dict:
        """The feed ``frame`` message (protocol v1) as a JSON-ready dict."""
        d, u = self.hottest()
        return {
            "v": FEED_VERSION, "type": "frame", "seq": self.seq, "t": round(self.t, 3), "tick_s": self.tick_s,
            "rate": np.round(self.rate_gbps.astype(np.float64), 3).tolist(),
            "util": np.round(self.util.astype(np.float64), 5).tolist(),
            "totals": {**totals, "throughput_gbps": round(self.throughput_gbps, 3),
                       "hottest": {"link": d, "util": round(u, 5)}},
            "jobs": [j.as_dict() for j in self.jobs],
            "alerts": self.alerts,
        }
