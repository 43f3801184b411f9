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
- ``whatif_congestion``: the jobs' collectives at once under ideal congestion control (max-min), credit flow
  control as the fabric is (its QoS lanes), VL separation (a lane per job, round robin over ``vls`` [4] lanes)
  and IB congestion control (:mod:`fabric_engine.analysis.congestion`) with ``congestion_control`` [the
  fabric's, :func:`fabric_congestion_control`, else the default profile] (a dict of
  :class:`~fabric_engine.backpressure.cc_params.CongestionControl` fields).
- ``whatif_live`` (telemetry-fed fabrics): the jobs running now (the twin's, from the job source) on the
  discovered fabric and the LFTs in force, against ``failed_cables`` and/or ``failed_switches`` (names)
  rerouted by the fabric's engine, or another ``engine``; run by :func:`ibweb.twin.analysis.run_live`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from django.apps import apps
from django.db import models

from fabric_engine.analysis import KINDS as ANALYSIS_KINDS
from fabric_engine.analysis import AnalysisInputError, run_analysis
from fabric_engine.routing import Routing
from fabric_engine.workload import Job
from ibweb.runtime import record
from ibweb.runtime.catalog import job_from_entry

__all__ = ["AnalysisKind", "AnalysisStatus", "ParamError", "run", "ProgressThrottle", "summary",
           "fabric_congestion_control", "relabel_links"]

#: ``progress(fraction, message)``: fraction done in 0..1 and what is being done.
Progress = Callable[[float, str], None]


class AnalysisKind(models.TextChoices):
    EBB = "ebb", "Effective bisection bandwidth"
    WHATIF_LINKS = "whatif_links", "What-if: failed cables, rerouted"
    WHATIF_ENGINE = "whatif_engine", "What-if: another routing engine"
    WHATIF_ROCE = "whatif_roce", "What-if: RoCEv2 with ECMP"
    WHATIF_LIVE = "whatif_live", "What-if from the live state: today's jobs"
    WHATIF_CONGESTION = "whatif_congestion", "What-if: VL separation and congestion control"


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


def fabric_congestion_control(fabric) -> dict | None:
    """The congestion control fabric row ``fabric`` is configured with (its ``CongestionControlPolicy``, the
    ``cc_*`` of its ``opensm.conf``), switched on for the what-if, as a dict of
    :class:`~fabric_engine.backpressure.cc_params.CongestionControl` fields; None when it has none (the congestion
    what-if then uses its default profile unless the request gives settings).

    The tenancy app's model is found through the app registry: tenancy imports this app, not the other way round.
    """
    policy = apps.get_model("tenancy", "CongestionControlPolicy").objects.filter(fabric=fabric).first()
    if policy is None:
        return None
    return {**policy.congestion_control().as_dict(), "enabled": True}


def run(kind: str, params: dict, scenario: dict, progress: Progress,
        inputs: tuple[Routing, list[Job]] | None = None, *, fabric=None) -> dict:
    """Run the analysis ``kind`` with cleaned ``params``; its JSON-ready result.

    ``inputs``: the routing and jobs the fabric's engine runs on (:func:`inputs_of`); without them the
    engine builds the ``scenario``. The work, routing with another engine included, is the engine's
    (:func:`fabric_engine.analysis.run_analysis`); ``progress(fraction, message)`` is called as it
    goes (often; throttle it). ``fabric``: the fabric row, for settings of its own a kind uses (the congestion
    what-if's :func:`fabric_congestion_control` when the request gives none). Raises :class:`ParamError` naming
    the field the fabric cannot answer, :class:`~fabric_engine.errors.FabricEngineError` when the scenario
    cannot be built or routed.
    """
    if kind not in ANALYSIS_KINDS:
        raise ParamError("kind", f"{kind!r} is not one of {', '.join(AnalysisKind.values)}")
    if kind == AnalysisKind.WHATIF_CONGESTION and params.get("congestion_control") is None and fabric is not None:
        configured = fabric_congestion_control(fabric)
        if configured is not None:
            params = {**params, "congestion_control": configured, "congestion_control_source": "fabric"}
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
    if kind == AnalysisKind.WHATIF_CONGESTION:
        return congestion_summary(result)
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


def congestion_summary(result: dict) -> str:
    """The congestion what-if in one line: the worst job's slowdown against ideal congestion control under credit
    flow control, with VL separation and with congestion control."""
    worst = {s["key"]: s.get("worst_slowdown") for s in result["sides"]}

    def x(key: str) -> str:
        return "n/a" if worst.get(key) is None else f"{worst[key]:.2f}x"

    cc = result.get("congestion_control", {}).get("source", "default")
    return (f"VL separation ({result['params']['vls']} lanes): worst job {x('credit')} -> {x('vl_separation')} of "
            f"ideal; congestion control ({cc} settings): {x('congestion_control')}")


def relabel_links(result: dict, labels: dict[str, str] | None) -> dict:
    """A congestion what-if's result with the limiting links' labels relabelled by ``labels``
    (:func:`ibweb.access.hidden_host_names`; None: no name may be shown, the labels are dropped)."""
    from ibweb.access import relabel

    def link(d: dict | None) -> dict | None:
        if d is None:
            return None
        return {"link": d.get("link")} if labels is None else {**d, "label": relabel(str(d.get("label", "")), labels)}

    return {**result, "sides": [{**s, "jobs": [{**j, "limiting_link": link(j.get("limiting_link"))}
                                                for j in s.get("jobs", [])]} for s in result.get("sides", [])]}


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
