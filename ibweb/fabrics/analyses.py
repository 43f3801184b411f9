"""Analyses of a fabric run as tasks: effective bisection bandwidth (eBB) and what-if comparisons.

Model-free services around :mod:`fabric_engine.analysis`, which does the work: the API checks what a
client asks for against the fabric with a serializer per kind (:mod:`ibweb.fabrics.api.params`),
:func:`run` hands :func:`fabric_engine.analysis.run_analysis` what the fabric's engine runs on (its
runtime record, :func:`inputs_of`; its scenario, which the engine builds, before an engine published)
and returns its JSON-ready result while it reports progress, and :class:`ProgressThrottle` decides
which reports are worth a database write and a feed message. Routing with another engine, building a
scenario and the analyses happen in the engine; the task (:mod:`ibweb.fabrics.tasks`) schedules and
stores.

Kinds and their parameters (defaults in brackets):

- ``ebb``: ``patterns`` [1000] random patterns, ``seed`` [1], ``method`` [``count``] (Hoefler et al.,
  Cluster 2008) or ``maxmin``, ``pattern`` [``bisection``], ``permutation`` or ``shift``, ``engine``
  [the fabric's routing engine].
- ``whatif_links``: ``failed_cables`` (cable indices ``0..L-1``, required), rerouted by the fabric's
  engine; ``ebb_patterns`` [200] (0: no eBB per side), ``seed`` [1].
- ``whatif_engine``: ``engine`` (required), ``ebb_patterns`` [200], ``seed`` [1].
- ``whatif_roce``: the scenario's jobs as InfiniBand (the fabric's engine's LFTs, and adaptive routing) and
  as RoCEv2 with ECMP hashing (:mod:`fabric_engine.analysis.roce`): ``qps`` [1] queue pairs per connection,
  ``seed`` [1] of the switches' hash seeds, ``same_seed`` [false] (one seed everywhere: polarization).
- ``whatif_live`` (telemetry-fed fabrics): the jobs running now (the twin's, from the job source) on the
  discovered fabric and the LFTs in force, against ``failed_cables`` and/or ``failed_switches`` (names)
  rerouted by the fabric's engine, or another ``engine``; run by :func:`ibweb.twin.analysis.run_live`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from django.db import models

from fabric_engine.analysis import KINDS as ANALYSIS_KINDS
from fabric_engine.analysis import AnalysisInputError, run_analysis
from fabric_engine.routing import Routing
from fabric_engine.workload import Job
from ibweb.runtime import record
from ibweb.runtime.catalog import job_from_entry

__all__ = ["AnalysisKind", "AnalysisStatus", "ParamError", "run", "ProgressThrottle", "summary"]

#: ``progress(fraction, message)``: fraction done in 0..1 and what is being done.
Progress = Callable[[float, str], None]


class AnalysisKind(models.TextChoices):
    EBB = "ebb", "Effective bisection bandwidth"
    WHATIF_LINKS = "whatif_links", "What-if: failed cables, rerouted"
    WHATIF_ENGINE = "whatif_engine", "What-if: another routing engine"
    WHATIF_ROCE = "whatif_roce", "What-if: RoCEv2 with ECMP"
    WHATIF_LIVE = "whatif_live", "What-if from the live state: today's jobs"


class AnalysisStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ParamError(ValueError):
    """A parameter a client gave is wrong: ``field`` names it, ``message`` says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def inputs_of(fabric) -> tuple[Routing, list[Job]] | None:
    """What the engine of fabric row ``fabric`` runs on, from its runtime record: the routing (whole LFTs) and
    the jobs of its catalog; None before an engine published one."""
    h = record.head_of(fabric)
    routing = record.full_routing(fabric.pk, h) if h is not None else None
    if routing is None:
        return None
    return routing, [job_from_entry(e) for e in record.jobs(fabric.pk, h) or []]


def run(kind: str, params: dict, scenario: dict, progress: Progress,
        inputs: tuple[Routing, list[Job]] | None = None) -> dict:
    """Run the analysis ``kind`` with cleaned ``params``; its JSON-ready result.

    ``inputs``: the routing and jobs the fabric's engine runs on (:func:`inputs_of`); without them the
    engine builds the ``scenario``. The work, routing with another engine included, is the engine's
    (:func:`fabric_engine.analysis.run_analysis`); ``progress(fraction, message)`` is called as it
    goes (often; throttle it). Raises :class:`ParamError` naming the field the fabric cannot answer,
    :class:`~fabric_engine.errors.FabricEngineError` when the scenario cannot be built or routed.
    """
    if kind not in ANALYSIS_KINDS:
        raise ParamError("kind", f"{kind!r} is not one of {', '.join(AnalysisKind.values)}")
    routing, jobs = inputs if inputs is not None else (None, None)
    try:
        return run_analysis(kind, params, scenario, routing=routing, jobs=jobs, progress=progress)
    except AnalysisInputError as exc:
        raise ParamError(exc.field, exc.message) from exc


def summary(kind: str, result: dict) -> str:
    """One line about a finished analysis, for the feed and the admin."""
    if kind == AnalysisKind.EBB:
        return f"eBB {100 * result['ebb']:.1f}% over {result['patterns']} {result['pattern']} patterns " \
               f"({result['engine']})"
    if kind == AnalysisKind.WHATIF_ROCE:
        lft, _, ecmp = result["sides"]
        ratios = [j["vs_lft"][2] for j in result["summary"] if j["vs_lft"][2] is not None]
        return (f"RoCEv2 ECMP ({result['params']['qps']} QP/conn): collectives up to x{max(ratios, default=1):.2f} "
                f"the LFTs'; link imbalance {ecmp['imbalance']:.2f} vs {lft['imbalance']:.2f}, "
                f"{ecmp['collisions']} QP collisions")
    s = result["summary"]
    parts = [f"{s['jobs_slower']} of {s['jobs']} jobs slower"] if s["jobs"] else []
    if s["worst_job"]:
        parts.append(f"worst {s['worst_job']['id']} x{s['worst_job']['comm_ratio']:.2f}")
    if s["jobs_broken"]:
        parts.append(f"{s['jobs_broken']} without a route")
    if s["ebb_delta"] is not None:
        parts.append(f"eBB {100 * s['ebb_delta']:+.1f} points")
    return "; ".join(parts) or "no change"


class ProgressThrottle:
    """Lets a progress report through when ``interval_s`` passed since the last one let through, or when final.

    >>> clock = iter([0.0, 0.1, 0.3]).__next__
    >>> t = ProgressThrottle(0.25, clock)
    >>> [t(0.1), t(0.2), t(0.3)]
    [True, False, True]
    """

    def __init__(self, interval_s: float = 0.25, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self.clock = clock
        self._last = -math.inf

    def __call__(self, fraction: float) -> bool:
        now = self.clock()
        if fraction >= 1.0 or now - self._last >= self.interval_s:
            self._last = now
            return True
        return False
