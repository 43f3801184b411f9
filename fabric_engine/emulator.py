"""The emulator: advances jobs through time and solves the fabric once per tick."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .flows import max_min_fair
from .routing import Routing
from .state import FabricState, JobState
from .topology import KIND_HOST
from .workload import Flows, Job, background_pairs, ring_pairs

__all__ = ["Emulator", "Background"]


@dataclass(frozen=True)
class Background:
    """Uniform random background load: ``fraction`` of hosts each send ``gbps`` to a random peer."""

    fraction: float = 0.25
    gbps: float = 20.0


class Emulator:
    """Time-stepped emulation of jobs on a routed fabric.

    Each job alternates a compute phase of ``compute_s`` seconds and a ring
    all-reduce of ``bytes_per_rank`` at the rate the solver gives its slowest
    flow. Within a tick a job is communicating for a fraction of the time; link
    rates are averaged over the tick, so the fabric breathes as jobs iterate.

    Parameters
    ----------
    routing : Routing
    jobs : list of Job
    background : Background, optional
    tick_s : float
    seed : int
        Seed of the background traffic draw (deterministic per tick).
    """

    def __init__(self, routing: Routing, jobs: list[Job], background: Background | None = None,
                 tick_s: float = 1.0, seed: int = 0) -> None:
        self.routing = routing
        self.fabric = routing.fabric
        self.jobs = list(jobs)
        self.background = background
        self.tick_s = float(tick_s)
        self.seed = seed
        self.seq = 0
        self.elapsed = 0.0
        self.tenants = sorted({j.tenant for j in self.jobs})
        f = self.fabric
        self.capacity = f.capacity_gbps
        self._into_host = f.kind[f.dl_dst] == KIND_HOST
        # Precomputed ring paths of every job, stacked; rows of job k are _job_rows[k].
        parts, rows, start = [], [], 0
        for k, job in enumerate(self.jobs):
            src, dst = ring_pairs(job.hosts)
            parts.append(Flows(src, dst, np.full(len(src), np.inf), sl=np.full(len(src), job.sl, np.int8),
                               job=np.full(len(src), k, np.int32),
                               tenant=np.full(len(src), self.tenants.index(job.tenant), np.int32)))
            rows.append(np.arange(start, start + len(src)))
            start += len(src)
        self._job_flows = Flows.concat(parts)
        self._job_rows = rows
        self._job_incidence = routing.paths(self._job_flows.src, self._job_flows.dst)
        # Per job: "compute" with seconds left, or "comm" with bytes left per rank.
        self._phase = ["wait" if j.start_s > 0 else "compute" for j in self.jobs]
        self._left = [j.start_s if j.start_s > 0 else j.compute_s for j in self.jobs]

    def _active_jobs(self) -> np.ndarray:
        return np.array([p == "comm" for p in self._phase], dtype=bool)

    def _background_flows(self) -> tuple[Flows, sp.csr_matrix]:
        rng = np.random.default_rng((self.seed, self.seq))
        src, dst = background_pairs(self.fabric.hosts, self.background.fraction, rng)
        flows = Flows(src, dst, np.full(len(src), self.background.gbps))
        return flows, self.routing.paths(src, dst)

    def step(self, now: float | None = None) -> FabricState:
        """Advance one tick and return the fabric's state for it."""
        self.seq += 1
        now = time.time() if now is None else now
        active = self._active_jobs()
        rows = np.concatenate([self._job_rows[k] for k in np.flatnonzero(active)] or [np.zeros(0, np.int64)])
        inc = self._job_incidence[rows]
        demand = self._job_flows.demand_gbps[rows]
        if self.background is not None:
            bg, bg_inc = self._background_flows()
            inc = sp.vstack([inc, bg_inc], format="csr")
            demand = np.concatenate([demand, bg.demand_gbps])
        rate = max_min_fair(inc, self.capacity, demand)
        # Fraction of the tick each active job spends communicating.
        frac = np.ones(len(rate))
        job_rate = np.zeros(len(self.jobs))
        job_frac = np.zeros(len(self.jobs))
        pos = 0
        for k in np.flatnonzero(active):
            n = len(self._job_rows[k])
            slowest = rate[pos:pos + n].min()
            job_rate[k] = rate[pos:pos + n].sum()
            need_s = self._left[k] * 8 / (slowest * 1e9) if slowest > 0 else np.inf
            job_frac[k] = min(1.0, need_s / self.tick_s)
            frac[pos:pos + n] = job_frac[k]
            pos += n
        carried = rate * frac
        link_rate = np.asarray(inc.T @ carried).ravel()
        self._advance(active, job_rate, job_frac, rate)
        self.elapsed += self.tick_s
        util = link_rate / np.maximum(self.capacity, 1e-12)
        jobs = [JobState(j.name, j.tenant, j.pattern, len(j.hosts), bool(active[k]),
                         float(len(j.hosts) * self.capacity[0]) if active[k] else 0.0,
                         float(job_rate[k] * job_frac[k]))
                for k, j in enumerate(self.jobs)]
        return FabricState(self.seq, now, self.tick_s, link_rate.astype(np.float32), util.astype(np.float32),
                           throughput_gbps=float(link_rate[self._into_host].sum()), jobs=jobs)

    def _advance(self, active: np.ndarray, job_rate: np.ndarray, job_frac: np.ndarray, rate: np.ndarray) -> None:
        """Move every job's phase forward by one tick (a per-job state machine, not per flow)."""
        pos = 0
        for k, job in enumerate(self.jobs):
            left_s = self.tick_s
            if active[k]:
                n = len(self._job_rows[k])
                slowest = rate[pos:pos + n].min()
                pos += n
                sent = slowest * 1e9 / 8 * self.tick_s
                if sent < self._left[k]:
                    self._left[k] -= sent
                    continue
                left_s -= self.tick_s * job_frac[k]
                self._phase[k], self._left[k] = "compute", job.compute_s
            while left_s > 0:
                if self._phase[k] in ("compute", "wait"):
                    if self._left[k] > left_s:
                        self._left[k] -= left_s
                        break
                    left_s -= self._left[k]
                    self._phase[k], self._left[k] = "comm", job.bytes_per_rank
                else:
                    break  # communication starts in the next tick's solve
