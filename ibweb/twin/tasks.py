"""Celery tasks of job sources: beat starts the polls that are due; each poll reads the scheduler once."""

from __future__ import annotations

from celery import shared_task
from django.core.cache import cache
from django.utils import timezone

from fabric_engine.errors import FabricEngineError
from ibweb.telemetry.collector import CollectorError

from . import jobs
from .choices import JobSourceKind
from .models import JobSource

__all__ = ["schedule_job_polls", "poll_job_source"]


@shared_task
def schedule_job_polls() -> list[int]:
    """Start a poll of every enabled Slurm or drop-directory job source whose last poll is older than its interval."""
    started = []
    now = timezone.now()
    for source in JobSource.objects.filter(enabled=True).exclude(kind=JobSourceKind.PUSH):  # one row per fabric
        if source.last_poll is not None and (now - source.last_poll).total_seconds() < source.interval_s:
            continue
        if not cache.add(f"ibweb:twin:{source.fabric_id}:polling", 1, timeout=max(source.interval_s, 5.0)):
            continue
        poll_job_source.delay(source.pk)
        started.append(source.pk)
    return started


@shared_task
def poll_job_source(source_pk: int) -> dict:
    """Read the scheduler of one fabric; returns ``{"stored", "removed"}`` or ``{"error"}``."""
    source = JobSource.objects.select_related("fabric__collector").get(pk=source_pk)
    try:
        stored, removed = jobs.poll(source)
    except (CollectorError, FabricEngineError, OSError) as exc:
        return {"error": str(exc)}
    finally:
        cache.delete(f"ibweb:twin:{source.fabric_id}:polling")
    return {"stored": stored, "removed": removed}
