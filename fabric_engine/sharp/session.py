"""SHARP during an emulation: allocation as jobs start and stop, the effective pattern, accounting, report.

A job that asks for SHARP (``Job.sharp``) gets a tree when its run window opens
and gives it back when the window closes (dynamic trees, as ``sharp_am``). With a
tree it runs ``sharp_allreduce``; without one it runs its own pattern (ring, tree
or hierarchical all-reduce) and an event and an alert say why.

Per job and collective: ``S (n + m)`` bytes aggregated in the network (``n`` hosts,
``m`` switch edges), and the bytes kept off the wire: what its own all-reduce puts
on the links (bytes x links crossed, summed over its transfers) minus what the
tree puts there (``2 S (n + m)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from ..flows import group_duration, max_min_fair_alone
from ..topology import Fabric
from ..workload import ALLREDUCE_PATTERNS, Job, JobFlows, expand_jobs
from .manager import AggregationManager
from .traffic import aggregated_bytes, link_bytes, sharp_job_params

__all__ = ["SharpSession", "alone_times"]


def alone_times(jf: JobFlows, capacity: np.ndarray, n_jobs: int) -> np.ndarray:
    """Seconds of one collective of each job alone on the idle fabric (greedy flows; one block-diagonal solve)."""
    fl = jf.flows
    if len(fl) == 0:
        return np.zeros(n_jobs)
    owner = fl.job.astype(np.int64)
    dem = np.where(jf.broken, 0.0, fl.demand_gbps)
    rate = max_min_fair_alone(jf.incidence, capacity, dem, np.ones(len(fl)), owner)
    return group_duration(fl.nbytes * 8e-9, rate, owner, n_jobs)


class SharpSession:
    """The SHARP side of an :class:`~fabric_engine.emulator.Emulator` (see the module docstring)."""

    def __init__(self, manager: AggregationManager | None) -> None:
        self.manager = manager
        self.reason: dict[str, str | None] = {}
        self.aggregated: dict[str, float] = {}
        self.kept: dict[str, float] = {}
        self.saved_gbps = 0.0
        self.jobs: list[Job] = []

    # ----------------------------------------------------------- allocation
    def transitions(self, jobs: Sequence[Job], fresh: np.ndarray, gone: np.ndarray, t: float) -> bool:
        """Release the trees of jobs whose window closed, ask for trees for those that just started.

        Returns whether any job's tree changed (the workload must be expanded again).
        """
        am = self.manager
        changed = False
        for k in np.flatnonzero(gone):  # loop over the few jobs that stopped
            if am is not None:
                changed |= am.release(jobs[k].name, t)
        for k in np.flatnonzero(fresh):  # and those that started
            job = jobs[k]
            if not job.sharp:
                continue
            if job.pattern not in ALLREDUCE_PATTERNS:
                reason = f"pattern {job.pattern} is not an all-reduce"
            elif am is None:
                reason = "SHARP is not enabled on this fabric"
            else:
                got = am.allocate(job.name, job.tenant, job.hosts, t)
                reason = got.reason
                changed |= got.tree is not None
            if reason is not None and am is not None and job.pattern not in ALLREDUCE_PATTERNS:
                am.events.append({"t": round(float(t), 3), "kind": "fallback", "job": job.name, "reason": reason})
            self.reason[job.name] = reason
        return changed

    def tree(self, name: str):
        return None if self.manager is None else self.manager.trees.get(name)

    def effective(self, job: Job) -> Job:
        """``job`` as it runs: ``sharp_allreduce`` on its tree when it holds one."""
        tree = self.tree(job.name)
        if tree is None:
            return job
        return replace(job, pattern="sharp_allreduce",
                       params=sharp_job_params(job.params, tree, self.manager.config.efficiency))

    # ----------------------------------------------------------- constants
    def prepare(self, jobs: Sequence[Job], jf: JobFlows, alone_s: np.ndarray, fabric: Fabric,
                paths: Callable, tenants: Sequence[str]) -> None:
        """Per job: bytes aggregated and kept off the wire per collective, all-reduce time alone with and without."""
        self.jobs = list(jobs)
        n = len(jobs)
        self.on = np.array([self.tree(j.name) is not None for j in jobs], dtype=bool)
        self.agg_per = np.zeros(n)
        self.kept_per = np.zeros(n)
        self.ring_s = np.full(n, np.nan)
        self.sharp_s = np.full(n, np.nan)
        on = np.flatnonzero(self.on)
        if on.size:
            ring = expand_jobs([jobs[k] for k in on], fabric, paths, tenants)
            ring_t = alone_times(ring, fabric.capacity_gbps, len(on))
            for i, k in enumerate(on):  # loop over SHARP jobs
                tree = self.tree(jobs[k].name)
                mine = jf.rows(np.array([k]))
                ring_rows = ring.rows(np.array([i]))
                self.agg_per[k] = aggregated_bytes(tree, jobs[k].buffer_bytes)
                self.kept_per[k] = (link_bytes(ring.flows.nbytes[ring_rows], ring.incidence[ring_rows])
                                    - link_bytes(jf.flows.nbytes[mine], jf.incidence[mine]))
                self.sharp_s[k], self.ring_s[k] = alone_s[k], ring_t[i]
        for k, job in enumerate(jobs):  # the others that ask for SHARP: what they would get
            if self.on[k] or not job.sharp or job.pattern not in ALLREDUCE_PATTERNS:
                continue
            self.ring_s[k] = alone_s[k]
            if self.manager is not None:
                plan = self.manager.plan(job.hosts)
                if not isinstance(plan, str):
                    rate = self.manager.config.efficiency * plan.bottleneck_gbps(fabric)
                    self.sharp_s[k] = job.buffer_bytes * 8e-9 / rate

    # ------------------------------------------------------------- per tick
    def account(self, reach: np.ndarray, comm_frac: np.ndarray, comm_now: np.ndarray, tick: float) -> None:
        """Add the collectives completed during the tick (fractions count) to each job's totals."""
        ok = reach & np.isfinite(comm_now) & (comm_now > 0)
        done = np.where(ok, comm_frac * tick / np.where(ok, comm_now, 1.0), 0.0)
        kept = self.kept_per * done
        for k in np.flatnonzero(done * self.on):  # loop over SHARP jobs that communicated
            name = self.jobs[k].name
            self.aggregated[name] = self.aggregated.get(name, 0.0) + self.agg_per[k] * done[k]
            self.kept[name] = self.kept.get(name, 0.0) + kept[k]
        self.saved_gbps = float(kept.sum()) * 8e-9 / tick

    def alerts(self, running: np.ndarray) -> list[dict]:
        """``{"kind": "sharp_fallback", "job", "reason"}`` for running jobs that asked for SHARP and run without."""
        return [{"kind": "sharp_fallback", "job": j.name, "reason": self.reason.get(j.name)}
                for k, j in enumerate(self.jobs) if running[k] and j.sharp and not self.on[k]
                and self.reason.get(j.name)]

    def frame(self, fabric: Fabric, running: np.ndarray) -> dict:
        """The frame's ``sharp`` section (see docs/feed-protocol.md)."""
        am = self.manager

        def num(x: float, d: int = 4):
            return round(float(x), d) if np.isfinite(x) else None

        jobs = []
        for k, j in enumerate(self.jobs):  # one entry per job
            if not j.sharp and not self.on[k]:
                continue
            tree = self.tree(j.name)
            jobs.append({"id": j.name, "tenant": j.tenant, "requested": bool(j.sharp),
                         "allowed": am is not None and am.config.allows(j.tenant),
                         "on": bool(self.on[k]), "reason": None if self.on[k] else self.reason.get(j.name),
                         "tree": tree.as_dict(fabric) if tree is not None else None,
                         "bytes_aggregated": float(self.aggregated.get(j.name, 0.0)),
                         "bytes_kept_off_wire": float(self.kept.get(j.name, 0.0)),
                         "allreduce_s_sharp": num(self.sharp_s[k]), "allreduce_s_without": num(self.ring_s[k])})
        return {"enabled": am is not None, **(am.config.as_dict() if am is not None else {}),
                "trees_in_use": len(am.trees) if am is not None else 0,
                "aggregation_switches": int(am.capable.sum()) if am is not None and am.capable is not None else None,
                "switches": am.switches_in_use() if am is not None else [],
                "jobs": jobs,
                "bytes_aggregated": float(sum(self.aggregated.values())),
                "bytes_kept_off_wire": float(sum(self.kept.values())),
                "kept_off_wire_gbps": round(self.saved_gbps, 3),
                "events": list(am.events)[-10:] if am is not None else []}
