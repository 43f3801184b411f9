"""Scheduler jobs placed on the fabric: :class:`KnownJob`, rail by rail, and the workload the emulator runs for them.

A :class:`~.slurm.SchedulerJob` names hosts (or HCA port GUIDs); :func:`place_jobs`
turns them into node indices per rail with a :class:`~.hostmap.HostIndex` and says
which jobs could not be placed and why (hosts missing from the fabric). NCCL keeps
the traffic of one rail on that rail's HCAs (rail-aligned rings), so a job's
expected traffic is one collective per rail among the HCAs of that rail
(:func:`workload_jobs`).

>>> from fabric_engine.topology.generate import fat_tree
>>> from .hostmap import HostMap
>>> from .slurm import SchedulerJob
>>> f = fat_tree(hosts=8, radix=4)
>>> known, problems = place_jobs([SchedulerJob("42", "llm", ("gpu0001", "gpu0005"))], HostMap().index(f))
>>> known[0].job_id, known[0].num_ports, problems
('42', 2, [])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import FabricEngineError
from ..workload import PATTERNS, Job
from .hostmap import HostIndex
from .slurm import SchedulerJob

__all__ = ["KnownJob", "place_jobs", "workload_jobs", "DEFAULT_PATTERN"]

#: What a job is assumed to run when nobody says otherwise.
DEFAULT_PATTERN = "ring_allreduce"


@dataclass(frozen=True, eq=False)
class KnownJob:
    """A scheduler job with its HCAs on the fabric.

    ``rails`` maps rail number -> node indices (int64, rank order) of the job's HCAs on
    that rail; ``pattern`` is the collective it is assumed to run (a key of
    :data:`fabric_engine.workload.PATTERNS`); ``job`` is what the scheduler said.
    """

    job: SchedulerJob
    rails: dict[int, np.ndarray]
    pattern: str = DEFAULT_PATTERN
    params: dict = field(default_factory=dict)

    @property
    def job_id(self) -> str:
        return self.job.job_id

    @property
    def tenant(self) -> str:
        return self.job.account

    @property
    def nodes(self) -> np.ndarray:
        """Every HCA node of the job, int64, rails in order."""
        parts = list(self.rails.values())
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    @property
    def num_ports(self) -> int:
        """HCAs of the job (ranks, one GPU per HCA as on rail-optimized servers)."""
        return int(sum(len(v) for v in self.rails.values()))


def _by_guid(job: SchedulerJob, index: HostIndex) -> tuple[dict[int, np.ndarray], list[str]]:
    f = index.fabric
    rail_of = {node: rail for node, (_, rail) in index.host_of().items()}
    per_rail: dict[int, list[int]] = {}
    missing = []
    for guid in job.port_guids:  # one entry per port the client named
        try:
            node = f.node(int(guid))
        except KeyError:
            missing.append(f"0x{int(guid):016x}")
            continue
        per_rail.setdefault(rail_of.get(node, 1), []).append(node)
    return {r: np.asarray(v, dtype=np.int64) for r, v in sorted(per_rail.items())}, missing


def place_jobs(jobs: Sequence[SchedulerJob], index: HostIndex, *, patterns: Mapping[str, str] | None = None,
               default_pattern: str = DEFAULT_PATTERN) -> tuple[list[KnownJob], list[dict]]:
    """Place scheduler jobs on the fabric of ``index``.

    Parameters
    ----------
    patterns : mapping, optional
        Job ID or account -> pattern (the job's own ID wins); others run ``default_pattern``.

    Returns
    -------
    known : list of KnownJob
        The jobs with at least one HCA on the fabric, in the order given.
    problems : list of dict
        ``{"job", "message", "missing"}`` for jobs with hosts or ports the fabric lacks (a job
        with none of its hosts on the fabric is only listed here).
    """
    patterns = dict(patterns or {})
    for name in {default_pattern, *patterns.values()}:
        if name not in PATTERNS:
            raise FabricEngineError(f"unknown pattern {name!r}; known: {', '.join(PATTERNS)}")
    known, problems = [], []
    for job in jobs:  # one entry per scheduler job
        if job.port_guids:
            rails, missing = _by_guid(job, index)
        else:
            rails, missing = index.resolve(job.hosts)
        if missing:
            shown = ", ".join(missing[:5]) + (f" (+{len(missing) - 5} more)" if len(missing) > 5 else "")
            problems.append({"job": job.job_id, "missing": len(missing),
                             "message": f"job {job.job_id}: not on the fabric: {shown}"})
        if rails:
            pattern = patterns.get(job.job_id) or patterns.get(job.account) or default_pattern
            known.append(KnownJob(job, rails, pattern))
    return known, problems


def workload_jobs(jobs: Sequence[KnownJob], *, buffer_bytes: float = 1e9) -> tuple[list[Job], np.ndarray]:
    """The emulator's jobs for ``jobs``: one per rail with at least two HCAs, communicating all the time.

    Returns the :class:`~fabric_engine.workload.Job` list and, for each, the index of its
    known job (int64). Names are ``"<id>"`` for a single rail, ``"<id>/rail<r>"`` otherwise.
    """
    out, owner = [], []
    for k, kj in enumerate(jobs):  # one entry per known job and rail
        usable = {r: n for r, n in kj.rails.items() if len(n) >= 2}
        for rail, nodes in usable.items():
            name = kj.job_id if len(usable) == 1 else f"{kj.job_id}/rail{rail}"
            params = dict(kj.params)
            if kj.pattern == "pipeline":
                params.setdefault("stages", max(2, min(4, len(nodes))))
            out.append(Job(name, kj.tenant, np.unique(nodes) if len(np.unique(nodes)) != len(nodes) else nodes,
                           pattern=kj.pattern, buffer_bytes=buffer_bytes, compute_s=0.0, params=params))
            owner.append(k)
    return out, np.asarray(owner, dtype=np.int64)
