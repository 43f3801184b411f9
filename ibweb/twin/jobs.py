"""Jobs of a fabric from its job source: polled from Slurm or a drop directory, or pushed; stored as rows.

A poll runs the source's command (``squeue --json --states=RUNNING`` by default) through
the fabric collector's ``command_prefix`` and ``environment`` with the source's timeout
(:class:`ibweb.telemetry.collector.CommandRunner`, as the diagnostics run), or reads the
``*.json`` files of its drop directory, and replaces the fabric's Slurm jobs with what it
found, in one transaction: a failed poll changes nothing and is recorded on the source.
Pushed jobs are added, updated or ended one by one (or replace all pushed jobs).

Every change bumps the fabric's job version in the cache (:func:`jobs_version`); the
fabric's engine reloads the rows only then (:func:`engine_jobs`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from fabric_engine.errors import FabricEngineError
from fabric_engine.twin import SchedulerJob, parse_slurm_jobs
from fabric_engine.twin.slurm import MAX_SLURM_BYTES
from ibweb.db.retry import retry_locked
from ibweb.telemetry.collector import CollectorError, CommandRunner

from .choices import JobOrigin, JobSourceKind
from .models import JobSource, ScheduledJob

__all__ = ["poll", "store_jobs", "end_jobs", "jobs_version", "engine_jobs", "host_limit", "MAX_DROP_FILES",
           "DEFAULT_HOST_LIMIT"]

log = logging.getLogger("ibweb.twin")

#: Most files read from a drop directory per poll.
MAX_DROP_FILES = 64
#: Host limit of a fabric whose engine has not discovered it yet.
DEFAULT_HOST_LIMIT = 65_536


def _version_key(fabric_id: int) -> str:
    return f"ibweb:twin:{fabric_id}:jobs"


def jobs_version(fabric_id: int) -> str:
    """The fabric's job version (changes with every change of its jobs)."""
    return cache.get(_version_key(fabric_id)) or "0"


def _bump(fabric_id: int) -> None:
    cache.set(_version_key(fabric_id), f"{time.time_ns():x}", None)


def host_limit(fabric_id: int, fabric=None) -> int:
    """How many hosts one job may name: the fabric's host count once its engine discovered it.

    ``fabric``: the fabric row, when at hand (a record is then read only if it is that row's).
    """
    from ibweb.runtime import record

    row = record.row_identity(fabric) if fabric is not None else None
    h = record.head(fabric_id, row)  # the fabric its engine published (None before the first discovery)
    return int(h["hosts"]) if h is not None else DEFAULT_HOST_LIMIT


def _dt(t: float | None) -> datetime | None:
    return datetime.fromtimestamp(t, tz=UTC) if t is not None else None


def _row(source: JobSource | None, job: SchedulerJob, origin: str) -> dict:
    tenant = source.tenant_of(job.account) if source is not None else job.account
    return {"origin": origin, "tenant": tenant, "account": job.account, "name": job.name, "user": job.user,
            "partition": job.partition, "state": job.state, "hosts": list(job.hosts),
            "port_guids": [f"0x{g:016x}" for g in job.port_guids], "start": _dt(job.start), "end": _dt(job.end)}


def store_jobs(fabric, jobs: Iterable[SchedulerJob], origin: str, *, replace: bool,
               source: JobSource | None = None) -> tuple[int, int]:
    """Upsert ``jobs`` of ``origin`` on ``fabric``; with ``replace`` the other jobs of that origin go.

    Returns ``(stored, removed)``. One transaction: all or nothing.
    """
    jobs = list(jobs)
    with transaction.atomic():
        removed = 0
        if replace:
            removed, _ = ScheduledJob.objects.filter(fabric=fabric, origin=origin).exclude(
                job_id__in=[j.job_id for j in jobs]).delete()
        taken = dict(ScheduledJob.objects.filter(fabric=fabric, job_id__in=[j.job_id for j in jobs]).exclude(
            origin=origin).values_list("job_id", "origin"))
        if taken:
            first = next(iter(taken))
            raise FabricEngineError(f"job {first} is already reported by {taken[first]}")
        for job in jobs:  # one upsert per job of the batch
            ScheduledJob.objects.update_or_create(fabric=fabric, job_id=job.job_id,
                                                  defaults=_row(source, job, origin))
    _bump(fabric.pk)
    return len(jobs), removed


def end_jobs(fabric, job_ids: Iterable[str], origin: str) -> int:
    """Remove the listed jobs of ``origin`` (they ended); returns how many were there."""
    removed, _ = ScheduledJob.objects.filter(fabric=fabric, origin=origin, job_id__in=list(job_ids)).delete()
    if removed:
        _bump(fabric.pk)
    return removed


def _read_drop_dir(source: JobSource, limit: int) -> list[SchedulerJob]:
    root = Path(source.drop_dir)
    if not root.is_dir():
        raise CollectorError(f"{root}: not a directory")
    files = sorted(root.glob("*.json"))
    if len(files) > MAX_DROP_FILES:
        raise CollectorError(f"{root}: {len(files)} files, more than {MAX_DROP_FILES}")
    jobs: dict[str, SchedulerJob] = {}
    for p in files:  # a few files; the newest listing of a job wins
        size = p.stat().st_size
        if size > MAX_SLURM_BYTES:
            raise CollectorError(f"{p}: {size} bytes, more than the limit of {MAX_SLURM_BYTES}")
        for job in parse_slurm_jobs(p.read_bytes(), max_hosts=limit, source=str(p)):
            jobs[job.job_id] = job
    return list(jobs.values())


def _run_slurm(source: JobSource, limit: int) -> list[SchedulerJob]:
    collector = getattr(source.fabric, "collector", None)
    prefix = collector.command_prefix if collector is not None else []
    env = collector.environment if collector is not None else {}
    out = CommandRunner(prefix, env, source.timeout_s).run(source.command)
    return parse_slurm_jobs(out.text, max_hosts=limit, source=out.source)


def poll(source: JobSource) -> tuple[int, int]:
    """Read the scheduler once and replace the fabric's Slurm jobs; returns ``(stored, removed)``.

    A failure (command, timeout, bad output) is recorded in ``source.last_error`` and re-raised;
    the stored jobs stay as they were.
    """
    limit = host_limit(source.fabric_id, source.fabric)
    try:
        if source.kind == JobSourceKind.DIRECTORY:
            jobs = _read_drop_dir(source, limit)
        elif source.kind == JobSourceKind.SLURM:
            jobs = _run_slurm(source, limit)
        else:
            raise CollectorError("a push source is not polled")
        result = retry_locked(store_jobs, source.fabric, jobs, JobOrigin.SLURM, replace=True, source=source,
                              what=f"jobs of {source.fabric}")
    except (CollectorError, FabricEngineError, OSError) as exc:
        retry_locked(JobSource.objects.filter(pk=source.pk).update, last_poll=timezone.now(),
                     last_error=str(exc)[:2000], what=f"job source of {source.fabric}")
        log.warning("job source of %s: %s", source.fabric, exc)
        raise
    retry_locked(JobSource.objects.filter(pk=source.pk).update, last_poll=timezone.now(), last_error="",
                 what=f"job source of {source.fabric}")
    return result


def engine_jobs(fabric_id: int) -> list[SchedulerJob]:
    """The jobs of a fabric as the twin takes them (read by the engine when the job version changed)."""
    out = []
    for row in ScheduledJob.objects.filter(fabric_id=fabric_id).order_by("job_id"):  # one row per job
        out.append(SchedulerJob(
            job_id=row.job_id, account=row.tenant, hosts=tuple(row.hosts),
            port_guids=tuple(int(g, 16) for g in row.port_guids), name=row.name, partition=row.partition,
            user=row.user, state=row.state, start=row.start.timestamp() if row.start else None,
            end=row.end.timestamp() if row.end else None))
    return out
