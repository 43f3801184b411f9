"""Celery tasks of the fabrics app: analyses (eBB, what-if) of a fabric, with progress on its live feed.

Tasks take primary keys and JSON only. Under ``CELERY_TASK_ALWAYS_EAGER`` (the embedded
default) an analysis runs in the process that asked for it; with ``REDIS_URL`` a worker
runs it and its progress reaches the web processes through the channel layer (the live app
receives :data:`ibweb.fabrics.signals.analysis_progress`). An analysis of what a fabric's engine runs now is
the work of the app that declares its kind (``live_analyses`` on its ``AppConfig``: the twin's ``whatif_live``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from celery import shared_task
from django.apps import apps
from django.utils import timezone
from django.utils.module_loading import import_string

from fabric_engine.errors import FabricEngineError

from . import analyses
from .analyses import AnalysisStatus, ParamError, ProgressThrottle
from .models import Analysis
from .signals import analysis_progress

__all__ = ["run_analysis", "publish_progress", "live_analysis", "PROGRESS_INTERVAL_S"]

log = logging.getLogger("ibweb.fabrics")

#: At most one progress write (row and feed message) per this many seconds while an analysis runs.
PROGRESS_INTERVAL_S = 0.25


def publish_progress(analysis: Analysis, fraction: float, status: str, message: str) -> None:
    """Announce progress of ``analysis`` (the live feed forwards it to the fabric's clients).

    A receiver that fails (the channel layer's Redis away) costs the message, not the analysis.
    """
    payload = {"task": "analysis", "id": analysis.pk, "kind": analysis.kind, "fraction": round(fraction, 4),
               "status": status, "message": message}
    try:
        analysis_progress.send(sender=Analysis, fabric_id=analysis.fabric_id, payload=payload)
    except Exception as exc:  # noqa: BLE001 - the feed is best effort, the row keeps the truth
        log.warning("analysis %s: progress not published: %s", analysis.pk, exc)


def live_analysis(kind: str) -> Callable[..., dict] | None:
    """``run(fabric, params, progress) -> result`` of an analysis of what the engine runs now, as an installed app
    declares it (``live_analyses = {kind: dotted path}`` on its ``AppConfig``), or None for a scenario's analysis."""
    for config in apps.get_app_configs():  # a handful of apps
        path = (getattr(config, "live_analyses", None) or {}).get(kind)
        if path:
            return import_string(path)
    return None


def _finish(analysis: Analysis, status: str, message: str, **fields) -> None:
    progress = 1.0 if status == AnalysisStatus.DONE else analysis.progress
    Analysis.objects.filter(pk=analysis.pk).update(status=status, progress=progress, finished=timezone.now(),
                                                   **fields)
    publish_progress(analysis, progress, status, message)


@shared_task
def run_analysis(analysis_id: int) -> str:
    """Run the queued analysis ``analysis_id``; returns its final status.

    The row is claimed atomically (queued -> running), so a task delivered twice runs once.
    Errors of the scenario or routing mark it failed with their message; an unexpected
    exception is logged with its traceback and marks it failed too (never left running).
    """
    claimed = Analysis.objects.filter(pk=analysis_id, status=AnalysisStatus.QUEUED).update(
        status=AnalysisStatus.RUNNING, started=timezone.now(), progress=0.0)
    analysis = Analysis.objects.select_related("fabric").filter(pk=analysis_id).first()
    if analysis is None or not claimed:
        return analysis.status if analysis else "missing"
    throttle = ProgressThrottle(PROGRESS_INTERVAL_S)

    def report(fraction: float, message: str) -> None:
        if fraction < 1.0 and throttle(fraction):  # the final report comes with the result
            analysis.progress = fraction
            Analysis.objects.filter(pk=analysis.pk).update(progress=fraction)
            publish_progress(analysis, fraction, AnalysisStatus.RUNNING, message)

    try:
        live = live_analysis(analysis.kind)
        if live is not None:  # on what the engine runs now, not on a scenario
            result = live(analysis.fabric, analysis.params, report)
        else:
            result = analyses.run(analysis.kind, analysis.params, analysis.fabric.scenario(), report,
                                  analyses.inputs_of(analysis.fabric), fabric=analysis.fabric)
    except (FabricEngineError, ParamError) as exc:
        _finish(analysis, AnalysisStatus.FAILED, str(exc), error=str(exc))
        return AnalysisStatus.FAILED
    except Exception as exc:  # noqa: BLE001 - a worker must not leave the row running
        log.exception("analysis %s of fabric %s failed", analysis.pk, analysis.fabric.slug)
        error = f"internal error: {type(exc).__name__}: {exc}"
        _finish(analysis, AnalysisStatus.FAILED, error, error=error)
        return AnalysisStatus.FAILED
    _finish(analysis, AnalysisStatus.DONE, analyses.summary(analysis.kind, result), result=result)
    return AnalysisStatus.DONE
