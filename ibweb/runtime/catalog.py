"""The job catalog of a fabric's runtime record: each job, its hosts, the links it crosses, and its spec.

Built by the fabric runner when it publishes a record (from its source's jobs and routing); read by
the jobs API and the what-if analyses (which turn entries back into
:class:`~fabric_engine.workload.Job` with :func:`job_from_entry`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from fabric_engine.routing import Routing
from fabric_engine.storage import Checkpoint
from fabric_engine.workload import Job, expand_jobs

__all__ = ["job_catalog", "job_from_entry"]

_IDENTITY = ("name", "tenant", "hosts", "pattern")


def _spec(job: Job) -> dict:
    out = {}
    for f in dataclasses.fields(job):
        if f.name in _IDENTITY:
            continue
        value = getattr(job, f.name)
        out[f.name] = dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value
    return out


def job_catalog(jobs: list[Job], routing: Routing | None, paths=None) -> list[dict]:
    """Per job: ``{"id", "tenant", "pattern", "hosts": [node], "links": [directed link], "spec": {...}}``.

    ``links`` are the directed links its flows cross on ``routing`` (``paths``: another path
    model, e.g. adaptive); empty when there is no routing.
    """
    if not jobs:
        return []
    links: list[list[int]] = [[] for _ in jobs]
    if routing is not None:
        jf = expand_jobs(jobs, routing.fabric, paths or routing.paths)
        inc = jf.incidence.tocsr()
        for k in range(len(jobs)):  # loop over jobs; each is one slice of the incidence
            block = inc[jf.offsets[k]:jf.offsets[k + 1]]
            links[k] = np.unique(block.indices[block.data > 0]).tolist()
    return [{"id": job.name, "tenant": job.tenant, "pattern": job.pattern, "hosts": np.asarray(job.hosts).tolist(),
             "links": links[k], "spec": _spec(job)} for k, job in enumerate(jobs)]


def job_from_entry(entry: dict) -> Job:
    """The :class:`Job` of a catalog entry."""
    spec = dict(entry.get("spec", {}))
    if spec.get("checkpoint") is not None:
        spec["checkpoint"] = Checkpoint.from_dict(spec["checkpoint"])
    return Job(entry["id"], entry["tenant"], np.asarray(entry["hosts"], dtype=np.int64), entry["pattern"], **spec)
