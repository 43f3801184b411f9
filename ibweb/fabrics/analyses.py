"""Analyses of a fabric run as tasks: effective bisection bandwidth (eBB) and what-if comparisons.

Model-free services around :mod:`fabric_engine.analysis`, which does the work: :func:`clean_params`
checks what a client asks for against the fabric (one :class:`ParamError` naming the field),
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
from fabric_engine.analysis import PAIR_PATTERNS, AnalysisInputError, run_analysis
from fabric_engine.analysis.ebb import METHODS
from fabric_engine.routing import ENGINES, Routing
from fabric_engine.workload import Job
from ibweb.runtime import record
from ibweb.runtime.catalog import job_from_entry

__all__ = ["AnalysisKind", "AnalysisStatus", "ParamError", "LIMITS", "clean_params", "run", "ProgressThrottle",
           "summary"]

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


#: Inclusive ranges of the integer parameters (they bound the work a request may ask for).
LIMITS = {"patterns": (1, 20000), "ebb_patterns": (0, 5000), "seed": (0, 2**32 - 1), "qps": (1, 128)}
_KNOWN = {
    AnalysisKind.EBB: {"patterns", "seed", "method", "pattern", "engine"},
    AnalysisKind.WHATIF_LINKS: {"failed_cables", "ebb_patterns", "seed"},
    AnalysisKind.WHATIF_ENGINE: {"engine", "ebb_patterns", "seed"},
    AnalysisKind.WHATIF_ROCE: {"qps", "seed", "same_seed"},
    AnalysisKind.WHATIF_LIVE: {"failed_cables", "failed_switches", "engine"},
}
#: Most switches one live what-if fails.
MAX_FAILED_SWITCHES = 64


def _shown(value: object) -> str:
    """``value`` as an error message quotes it: a list or object sent in place of a scalar can be large."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _int(params: dict, name: str, default: int) -> int:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(name, f"expected an integer, got {_shown(value)}")
    low, high = LIMITS[name]
    if not low <= value <= high:
        raise ParamError(name, f"{value} is outside {low}..{high}")
    return value


def _choice(params: dict, name: str, default: str | None, choices) -> str:
    value = params.get(name, default)
    if value is None:
        raise ParamError(name, f"required: one of {', '.join(sorted(choices))}")
    if not isinstance(value, str):  # a list or object is not even hashable (issue 26: a 500 before)
        raise ParamError(name, f"expected a string, one of {', '.join(sorted(choices))}; got {_shown(value)}")
    if value not in choices:
        raise ParamError(name, f"{_shown(value)} is not one of {', '.join(sorted(choices))}")
    return value


def _cables(params: dict, num_links: int) -> list[int]:
    raw = params.get("failed_cables")
    if not isinstance(raw, list) or not raw:
        raise ParamError("failed_cables", "required: a non-empty list of cable indices")
    for i, c in enumerate(raw):
        if isinstance(c, bool) or not isinstance(c, int):
            raise ParamError("failed_cables", f"item {i}: expected a cable index, got {_shown(c)}")
        if not 0 <= c < num_links:
            raise ParamError("failed_cables", f"item {i}: cable {c} is outside 0..{num_links - 1}")
    if len(set(raw)) != len(raw):
        raise ParamError("failed_cables", "lists a cable twice")
    return sorted(raw)


def clean_params(kind: str, params: object, num_links: int) -> dict:
    """The parameters of an analysis of ``kind`` with their defaults filled in.

    Parameters
    ----------
    kind : one of :class:`AnalysisKind`
    params : dict
        What the client sent (JSON).
    num_links : int
        Cables of the fabric (``failed_cables`` are checked against ``0..num_links - 1``).

    Raises
    ------
    ParamError
        Naming the first wrong field.

    Examples
    --------
    >>> clean_params("ebb", {"patterns": 50}, 1024)["method"]
    'count'
    """
    if kind not in _KNOWN:
        raise ParamError("kind", f"{kind!r} is not one of {', '.join(_KNOWN)}")
    if not isinstance(params, dict):
        raise ParamError("params", "expected an object")
    unknown = sorted(set(params) - _KNOWN[kind])
    if unknown:
        raise ParamError(unknown[0], f"unknown parameter of {kind}; known: {', '.join(sorted(_KNOWN[kind]))}")
    if kind == AnalysisKind.EBB:
        out = {"patterns": _int(params, "patterns", 1000), "seed": _int(params, "seed", 1),
               "method": _choice(params, "method", "count", METHODS),
               "pattern": _choice(params, "pattern", "bisection", PAIR_PATTERNS)}
        if "engine" in params:
            out["engine"] = _choice(params, "engine", None, ENGINES)
        return out
    if kind == AnalysisKind.WHATIF_ROCE:
        same = params.get("same_seed", False)
        if not isinstance(same, bool):
            raise ParamError("same_seed", f"expected true or false, got {_shown(same)}")
        return {"qps": _int(params, "qps", 1), "seed": _int(params, "seed", 1), "same_seed": same}
    if kind == AnalysisKind.WHATIF_LIVE:
        return _live_params(params, num_links)
    out = {"ebb_patterns": _int(params, "ebb_patterns", 200), "seed": _int(params, "seed", 1)}
    if kind == AnalysisKind.WHATIF_LINKS:
        out["failed_cables"] = _cables(params, num_links)
    else:
        out["engine"] = _choice(params, "engine", None, ENGINES)
    return out


def _live_params(params: dict, num_links: int) -> dict:
    out = {"failed_cables": _cables(params, num_links) if "failed_cables" in params else []}
    switches = params.get("failed_switches", [])
    if not isinstance(switches, list) or len(switches) > MAX_FAILED_SWITCHES or not all(
            isinstance(x, str) and 0 < len(x) <= 64 for x in switches):
        raise ParamError("failed_switches", f"expected at most {MAX_FAILED_SWITCHES} switch names")
    out["failed_switches"] = sorted(set(switches))
    if params.get("engine") is not None:
        out["engine"] = _choice(params, "engine", None, ENGINES)
    if not out["failed_cables"] and not out["failed_switches"] and "engine" not in out:
        raise ParamError("params", "fail a cable or a switch, or choose another routing engine")
    return out


def inputs_of(fabric) -> tuple[Routing, list[Job]] | None:
    """What the engine of fabric row ``fabric`` runs on, from its runtime record: the routing (whole LFTs) and
    the jobs of its catalog; None before an engine published one."""
    h = record.head(fabric.pk, record.row_identity(fabric))
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
        raise ParamError("kind", f"{kind!r} is not one of {', '.join(_KNOWN)}")
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
