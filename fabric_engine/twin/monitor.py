""":class:`Twin`: one fabric's digital twin, kept from tick to tick.

It takes the scheduler's jobs (:meth:`Twin.set_jobs`, whenever the job source has
news) and, every tick, the routing in force and the observed link rates
(:meth:`Twin.evaluate`), and gives a :class:`TwinReport`: the jobs with their observed
bandwidth, their links and their figures in nccl-tests terms; expected against
observed per link; the ranked deviations; and the alerts the persistence rule
raised or cleared.

What depends only on the fabric, the routing and the job set (placing jobs on HCAs,
the links each job can use, the emulation of the known jobs) is computed when one
of those changes, not every tick; a tick is a few vectorized passes over the links.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import scipy.sparse as sp

from ..backpressure.cc_params import CongestionControl
from ..credit_tick import MAXMIN
from ..routing import Routing
from ..state import JobState
from ..topology import Fabric
from .attribution import attribute_links, job_links
from .catalog import DEFAULT_PATTERN, KnownJob, place_jobs
from .collectives import COLLECTIVE_OF_PATTERN, figures_from_rate, figures_from_time
from .expected import (
    BUFFER_BYTES,
    Comparison,
    JobTraffic,
    Thresholds,
    compare,
    emulate,
    link_hosts,
    link_label,
    port_key,
)
from .hostmap import HostIndex, HostMap
from .persistence import DeviationTracker, TrackerUpdate
from .slurm import SchedulerJob

__all__ = ["Twin", "TwinReport"]


@dataclass(frozen=True, eq=False)
class TwinReport:
    """What the twin says about one tick (see :class:`Twin`).

    ``jobs``: one dict per running known job (``id``, ``tenant``, ``name``, ``user``,
    ``partition``, ``pattern``, ``hosts``, ``ports``, ``rails``, ``observed_gbps``,
    ``received_gbps``, ``emulated_gbps``, ``activity``, ``links``, ``observed`` and ``emulated``
    figures in nccl-tests terms, ``start``, ``end``); ``problems``: jobs not (fully) on the
    fabric; ``comparison``: per-link arrays; ``deviations``: ranked; ``alerts``: the tracker's update;
    ``incidence``: CSR ``(J, 2L)`` of the links each running job can use, rows as ``jobs``.
    """

    fabric: Fabric
    jobs: list[dict]
    problems: list[dict]
    comparison: Comparison | None
    deviations: list[dict]
    alerts: TrackerUpdate
    incidence: sp.csr_matrix
    traffic: JobTraffic | None = None
    job_states: list[JobState] = field(default_factory=list)

    def job_index(self) -> dict[str, int]:
        return {j["id"]: k for k, j in enumerate(self.jobs)}

    def name_hotspots(self, hotspots: list[dict], rate_gbps: np.ndarray, most: int = 3) -> list[dict]:
        """``hotspots`` (dicts with ``link``) with ``jobs`` filled: the known jobs on each link and their share.

        No job is given more of a link than its hosts were seen to send; what no known job can have
        carried is ``unattributed_gbps`` (present when above zero).
        """
        if not hotspots or not self.jobs:
            return hotspots
        links = [int(h["link"]) for h in hotspots]
        rates = self.traffic.rates if self.traffic is not None else None
        sent = self.comparison.job_observed_gbps if self.comparison is not None else None
        shares = attribute_links(rate_gbps, links, self.incidence, rates, most=len(self.jobs), sent_gbps=sent)
        out = []
        for h, s in zip(hotspots, shares, strict=True):
            rest = float(rate_gbps[int(h["link"])]) - sum(g for _, g in s)
            named = {**h, "jobs": [{"id": self.jobs[k]["id"], "gbps": round(g, 3)} for k, g in s[:most] if g > 0]}
            if sent is not None and rest > 1e-3:
                named["unattributed_gbps"] = round(rest, 3)
            out.append(named)
        return out

    def overlay(self) -> dict:
        """Per-link arrays for the map: expected and observed Gb/s and a code (0 fine, 1 below, 2 unexplained,
        -1 not compared)."""
        c = self.comparison
        if c is None:
            n = 2 * self.fabric.num_links
            return {"expected": [0.0] * n, "observed": [0.0] * n, "code": [0] * n}
        return {"expected": np.round(c.expected_gbps, 2).tolist(), "observed": np.round(c.observed_gbps, 2).tolist(),
                "code": c.code.astype(int).tolist()}


class Twin:
    """The digital twin of one telemetry-fed fabric.

    Parameters
    ----------
    hostmap : HostMap
        How node descriptions name hosts and rails.
    patterns : mapping, optional
        Job ID or account -> collective pattern (default ``default_pattern``).
    thresholds : Thresholds, optional
        When a link deviates.
    raise_after, clear_after : int
        The persistence rule (:class:`~.persistence.DeviationTracker`).
    """

    def __init__(self, hostmap: HostMap | None = None, *, patterns: Mapping[str, str] | None = None,
                 default_pattern: str = DEFAULT_PATTERN, thresholds: Thresholds | None = None,
                 raise_after: int = 3, clear_after: int = 3, congestion: str = MAXMIN,
                 congestion_control: CongestionControl | None = None) -> None:
        self.hostmap = hostmap or HostMap()
        #: The model the expected values come from (:func:`~.expected.emulate`).
        self.congestion = congestion
        self.congestion_control = congestion_control
        self.patterns = dict(patterns or {})
        self.default_pattern = default_pattern
        self.thresholds = thresholds or Thresholds()
        self.tracker = DeviationTracker(raise_after, clear_after, self.thresholds.min_gbps)
        self.jobs: list[SchedulerJob] = []
        self._jobs_version = 0
        self._index: tuple[Fabric, HostIndex] | None = None
        self._placed: tuple[tuple, list[KnownJob], list[dict]] | None = None
        self._model: tuple[tuple, sp.csr_matrix, JobTraffic] | None = None
        self._down: tuple[tuple, list[dict]] | None = None

    # --------------------------------------------------------------- inputs
    def set_jobs(self, jobs: Sequence[SchedulerJob]) -> bool:
        """Replace the scheduler's job list; returns whether it changed."""
        jobs = list(jobs)
        if jobs == self.jobs:
            return False
        self.jobs = jobs
        self._jobs_version += 1
        return True

    def running(self, t: float) -> list[SchedulerJob]:
        """The jobs whose window contains ``t`` (unknown start or end count as open)."""
        return [j for j in self.jobs if (j.start is None or j.start <= t) and (j.end is None or t < j.end)]

    # ---------------------------------------------------------------- model
    def _host_index(self, fabric: Fabric) -> HostIndex:
        if self._index is None or self._index[0] is not fabric:
            self._index = (fabric, self.hostmap.index(fabric))
        return self._index[1]

    def outside_window(self, t: float) -> list[dict]:
        """A problem entry ``{"job", "reason", "message"}`` for each job not counted as running at ``t``, saying why.

        A job counts from its ``start`` until its ``end``; for a job the scheduler still lists as
        running, an ``end`` in the past is its time limit (Slurm's ``end_time`` of a running job), which
        the message says, so an operator sees why a job of ``squeue`` carries no traffic here.
        """
        out = []
        for j in self.jobs:  # one entry per scheduler job
            if j.start is not None and t < j.start:
                out.append({"job": j.job_id, "reason": "not_started",
                            "message": f"job {j.job_id}: not counted as running: it starts at {_utc(j.start)}"})
            elif j.end is not None and t >= j.end:
                still = (f" although the scheduler lists it as {j.state} (over its time limit, or the clocks of "
                         "the scheduler and this server differ)") if j.state.upper() == "RUNNING" else ""
                out.append({"job": j.job_id, "reason": "ended",
                            "message": f"job {j.job_id}: not counted as running: its end time {_utc(j.end)} "
                                       f"has passed{still}"})
        return out

    def place(self, fabric: Fabric, t: float) -> tuple[list[KnownJob], list[dict]]:
        """The running jobs placed on ``fabric`` (cached per fabric, job list and running set), and the problems:
        jobs not (fully) on the fabric, and jobs not counted as running at ``t`` with the reason."""
        running = self.running(t)
        key = (id(fabric), self._jobs_version, tuple(j.job_id for j in running))
        if self._placed is None or self._placed[0] != key:
            known, problems = place_jobs(running, self._host_index(fabric), patterns=self.patterns,
                                         default_pattern=self.default_pattern)
            self._placed = (key, known, problems + self.outside_window(t))
        return self._placed[1], self._placed[2]

    def model(self, routing: Routing, known: list[KnownJob]) -> tuple[sp.csr_matrix, JobTraffic]:
        """Links each job can use and the emulation of the known jobs (cached per routing and job set)."""
        key = (id(routing), tuple(id(k) for k in known))
        if self._model is None or self._model[0] != key:
            incidence = job_links(routing, [k.rails for k in known])
            traffic = emulate(routing, known, self.congestion, self.congestion_control)
            self._model = (key, incidence, traffic)
            self._remember(routing.fabric, traffic)
        return self._model[1], self._model[2]

    def _remember(self, fabric: Fabric, traffic: JobTraffic) -> None:
        """Remember the emulated load of every loaded port, for ``down`` deviations after a link vanishes."""
        total = traffic.link_rate
        loaded = np.flatnonzero(total >= self.thresholds.min_gbps)
        cols = sp.csc_matrix(traffic.rates[:, loaded]) if loaded.size else None
        names = [k.job_id for k in traffic.jobs]
        self.tracker.remember({
            port_key(fabric, int(d)): (float(total[d]), link_label(fabric, int(d)),
                                       [names[j] for j in cols.indices[cols.indptr[i]:cols.indptr[i + 1]]],
                                       link_hosts(fabric, int(d)))
            for i, d in enumerate(loaded.tolist())})  # once per emulation, not per tick

    def _down_links(self, fabric: Fabric, known: list[KnownJob]) -> list[dict]:
        key = (id(fabric), tuple(k.job_id for k in known))
        if self._down is None or self._down[0] != key:
            present = {port_key(fabric, d) for d in range(2 * fabric.num_links)}  # once per discovery and job set
            self._down = (key, self.tracker.down(present, {k.job_id for k in known}))
        return self._down[1]

    # ------------------------------------------------------------------ tick
    def evaluate(self, routing: Routing, observed_gbps: np.ndarray, t: float, *,
                 stale: np.ndarray | None = None, compared: bool = True) -> TwinReport:
        """The twin's report for one tick.

        Parameters
        ----------
        routing : Routing
            The routing in force, on the fabric the counters were read on.
        observed_gbps : ndarray, ``(2L,)``
            Observed rate per directed link.
        t : float
            Time of the observation (seconds since the epoch): which jobs run.
        stale : ndarray of bool, optional
            Links without counters.
        compared : bool
            False while there are no rates yet (first sweep): jobs are listed, nothing is compared or alerted.
        """
        f = routing.fabric
        known, problems = self.place(f, t)
        incidence, traffic = self.model(routing, known)
        obs = np.asarray(observed_gbps, dtype=np.float64)
        if not compared:
            jobs = self._job_dicts(known, incidence, traffic, None)
            return TwinReport(f, jobs, problems, None, [], TrackerUpdate(), incidence, traffic,
                              self._job_states(known, jobs, incidence, obs, f))
        comp = compare(traffic, obs, incidence, stale=stale, thresholds=self.thresholds)
        deviations = self._down_links(f, known) + comp.deviations
        update = self.tracker.update(deviations, t)
        jobs = self._job_dicts(known, incidence, traffic, comp)
        return TwinReport(f, jobs, problems, comp, deviations, update, incidence, traffic,
                          self._job_states(known, jobs, incidence, obs, f))

    def _job_dicts(self, known: list[KnownJob], incidence: sp.csr_matrix, traffic: JobTraffic,
                   comp: Comparison | None) -> list[dict]:
        links = np.diff(incidence.indptr)
        out = []
        for k, kj in enumerate(known):  # one entry per running job
            j = kj.job
            n = kj.num_ports
            collective = COLLECTIVE_OF_PATTERN.get(kj.pattern, "sendrecv")
            sent = float(comp.job_observed_gbps[k]) if comp is not None else 0.0
            emulated = float(traffic.injection[k])
            comm = float(traffic.comm_s[k])
            ranks_per_rail = max((len(v) for v in kj.rails.values()), default=0)
            out.append({
                "id": j.job_id, "tenant": j.account, "name": j.name, "user": j.user, "partition": j.partition,
                "pattern": kj.pattern, "hosts": len(j.hosts) or len(kj.nodes), "ports": n,
                "rails": sorted(kj.rails), "observed_gbps": round(sent, 3),
                "emulated_gbps": round(emulated, 3),
                "activity": round(float(comp.activity[k]), 4) if comp is not None else None,
                "links": int(links[k]), "start": j.start, "end": j.end,
                "observed": figures_from_rate(collective, n, rank_gbps=sent / n if n else 0.0),
                "emulated": figures_from_time(collective, ranks_per_rail, nbytes=BUFFER_BYTES, seconds=comm)
                if np.isfinite(comm) and comm > 0 else None,
                "no_route_flows": int(traffic.broken[k])})
        return out

    def _job_states(self, known: list[KnownJob], jobs: list[dict], incidence: sp.csr_matrix, obs: np.ndarray,
                    fabric: Fabric) -> list[JobState]:
        """The jobs as the live feed carries them (the same fields as emulated jobs)."""
        util = obs / np.maximum(fabric.capacity_gbps, 1e-12)
        out = []
        for k, (kj, j) in enumerate(zip(known, jobs, strict=True)):  # one entry per running job
            row = incidence.indices[incidence.indptr[k]:incidence.indptr[k + 1]]
            hottest = row[np.argsort(-util[row], kind="stable")[:3]] if row.size else row
            active = j["observed_gbps"] >= self.thresholds.min_gbps
            out.append(JobState(
                j["id"], kj.tenant, kj.pattern, j["hosts"], bool(active), j["emulated_gbps"] if active else 0.0,
                j["observed_gbps"], phase="running" if active else "idle", slowdown=float("nan"),
                limiting_links=tuple(int(d) for d in hottest)))
        return out


def _utc(seconds: float) -> str:
    """``seconds`` since the epoch as ``2024-12-03 11:00 UTC``."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
