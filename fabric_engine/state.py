""":class:`FabricState`: what the engine knows about the fabric after one tick."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["FabricState", "JobState", "FEED_VERSION", "HOTSPOTS"]

#: Version of the live feed protocol (``"v"`` of every message).
FEED_VERSION = 1
#: Length of the ranked hotspot list.
HOTSPOTS = 10


def _num(x: float, digits: int = 3) -> float | None:
    """A JSON-safe rounded number (``None`` for inf and nan)."""
    return round(float(x), digits) if math.isfinite(x) else None


@dataclass(frozen=True)
class JobState:
    """One job's traffic during a tick (bandwidths in Gb/s, summed over its flows).

    ``active``: the job communicated during the tick. ``demand_gbps``: what its
    flows send when the job is alone on an idle fabric; ``achieved_gbps``: what
    they get now, while communicating. ``comm_s`` / ``comm_alone_s``: duration of
    one collective now and alone; ``slowdown = comm_s / comm_alone_s`` (``inf``
    when a flow has no route). ``limiting_links``: directed links that held back
    its slowest flows, most utilized first. ``phase``: ``compute``, ``comm``,
    ``checkpoint`` (writing a synchronous checkpoint), ``waiting`` (before its run
    window) or ``stopped``. ``sharp``: its all-reduce runs on a SHARP tree
    (``pattern`` stays the one it falls back to). ``spreading``: with the credit flow control model, how much
    longer its collective takes than with ideal congestion control (max-min) in the same tick, ``comm_s`` over
    that duration (above 1: slowed by congestion spreading; ``None`` under max-min or while it does not
    communicate).
    """

    name: str
    tenant: str
    pattern: str
    hosts: int
    active: bool
    demand_gbps: float
    achieved_gbps: float
    phase: str = "compute"
    comm_s: float = 0.0
    comm_alone_s: float = 0.0
    slowdown: float = 1.0
    iterations: int = 0
    limiting_links: tuple[int, ...] = ()
    sharp: bool = False
    spreading: float | None = None

    def as_dict(self) -> dict:
        return {"id": self.name, "tenant": self.tenant, "pattern": self.pattern, "hosts": self.hosts,
                "active": self.active, "demand_gbps": round(self.demand_gbps, 3),
                "achieved_gbps": round(self.achieved_gbps, 3), "phase": self.phase,
                "comm_s": _num(self.comm_s, 4), "comm_alone_s": _num(self.comm_alone_s, 4),
                "slowdown": _num(self.slowdown, 4), "iterations": self.iterations,
                "limiting_links": list(self.limiting_links), "sharp": self.sharp,
                "spreading": None if self.spreading is None else _num(self.spreading, 4)}


@dataclass(frozen=True)
class FabricState:
    """Per-directed-link state of one tick, plus jobs, hotspots and alerts.

    Per-link arrays are float32 ``[2L]`` in directed-link order, averaged over the tick:

    * ``rate_gbps``: carried rate; ``util = rate / capacity``.
    * ``offered_gbps``: what the flows crossing the link would send if nothing
      else held them back (each job's flows at their rate alone on an idle fabric,
      while the job communicates; background flows at their demand).
      ``offered / capacity > 1`` is congestion.
    * ``xmit_wait``: estimated increase of PortXmitWait at the link's out port
      during the tick, in ticks of the counter (see :mod:`fabric_engine.congestion`).
    * ``capacity_gbps``: float64 ``[2L]``, for :attr:`congestion`.
    * ``ecn``: estimated fraction of the packets sent that a congested port marks (FECN).

    ``throughput_gbps`` is the traffic delivered to hosts (the sum over directed
    links that end at a host); ``switch_gbps`` the traffic between switches (the sum over
    directed links between two switches: what crosses the fabric's core, also where the
    counters of host ports are not read or traffic ends in a switch, as SHARP's does).
    ``hotspots``: the most congested links, ranked.
    ``sharp`` and ``storage``: the frame sections of :class:`fabric_engine.sharp.session.SharpSession`
    and :class:`fabric_engine.storage.session.StorageSession` (``None`` when not modelled).
    ``twin``: the digital twin's frame section of a telemetry-fed fabric (per-link expected
    load and deviation codes, the plan's per-link status; :mod:`fabric_engine.twin`), or ``None``.
    ``stale``: bool ``[2L]``, the links the tick has no measurement of (a telemetry-fed fabric's links
    without counters in both sweeps: their rate reads 0 but is unknown); ``None``: all measured (emulated).
    ``congestion_tree``: with the credit flow control model, ``{"model": "credit", "roots": [...], "held": [...]}``,
    the directed links where congestion trees start (saturated, holding back the buffers that feed them) and those
    held back by credits (their branches, victims' links among them); ``None`` under max-min.
    """

    seq: int
    t: float
    tick_s: float
    rate_gbps: np.ndarray
    util: np.ndarray
    throughput_gbps: float = 0.0
    switch_gbps: float = 0.0
    jobs: list[JobState] = field(default_factory=list)
    alerts: list[dict] = field(default_factory=list)
    offered_gbps: np.ndarray | None = None
    xmit_wait: np.ndarray | None = None
    ecn: np.ndarray | None = None
    hotspots: list[dict] = field(default_factory=list)
    capacity_gbps: np.ndarray | None = None
    sharp: dict | None = None
    storage: dict | None = None
    twin: dict | None = None
    stale: np.ndarray | None = None
    congestion_tree: dict | None = None

    def hottest(self) -> tuple[int, float]:
        """Directed link with the highest utilization and that utilization."""
        if self.util.size == 0:
            return -1, 0.0
        d = int(np.argmax(self.util))
        return d, float(self.util[d])

    @property
    def congestion(self) -> np.ndarray:
        """``offered / capacity`` per directed link, float32 ``[2L]`` (above 1: congested)."""
        if self.offered_gbps is None or self.capacity_gbps is None:
            return self.util
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = self.offered_gbps / self.capacity_gbps
        return np.nan_to_num(ratio, nan=0.0, posinf=0.0).astype(np.float32)

    def job(self, name: str) -> JobState:
        """The state of job ``name``."""
        for j in self.jobs:
            if j.name == name:
                return j
        raise KeyError(name)

    def link_arrays(self) -> dict[str, np.ndarray]:
        """The frame's per-link arrays, ``[2L]`` each: ``util``, ``offered``, ``xmit_wait``, ``ecn``.

        ``offered`` is the carried rate and the others zero where the engine does not estimate them.
        """
        n = len(self.rate_gbps)
        return {"util": self.util,
                "offered": self.offered_gbps if self.offered_gbps is not None else self.rate_gbps,
                "xmit_wait": self.xmit_wait if self.xmit_wait is not None else np.zeros(n, np.float32),
                "ecn": self.ecn if self.ecn is not None else np.zeros(n, np.float32)}

    def frame_header(self, totals: dict) -> dict:
        """The ``frame`` message without its per-link arrays (JSON-ready): what protocol v1 and v2 share."""
        d, u = self.hottest()
        congested = int((self.congestion > 1.0 + 1e-6).sum())
        return {
            "v": FEED_VERSION, "type": "frame", "seq": self.seq, "t": round(self.t, 3), "tick_s": self.tick_s,
            "totals": {**totals, "throughput_gbps": round(self.throughput_gbps, 3),
                       "switch_gbps": round(self.switch_gbps, 3),
                       "hottest": {"link": d, "util": round(u, 5)}, "congested_links": congested},
            "jobs": [j.as_dict() for j in self.jobs],
            "alerts": self.alerts,
            "hotspots": self.hotspots,
            "sharp": self.sharp,
            "storage": self.storage,
            "twin": self.twin,
            "congestion_tree": self.congestion_tree,
        }
