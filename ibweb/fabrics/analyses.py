"""Analyses of a fabric run as tasks: effective bisection bandwidth (eBB) and what-if comparisons.

Model-free services around :mod:`fabric_engine.analysis`: :func:`clean_params` checks what a client
asks for against the fabric (one :class:`ParamError` naming the field), :func:`run` computes the
JSON-ready result from the fabric's scenario (``Fabric.scenario()``) while it reports progress, and
:class:`ProgressThrottle` decides which reports are worth a database write and a feed message.

Kinds and their parameters (defaults in brackets):

- ``ebb``: ``patterns`` [1000] random patterns, ``seed`` [1], ``method`` [``count``] (Hoefler et al.,
  Cluster 2008) or ``maxmin``, ``pattern`` [``bisection``], ``permutation`` or ``shift``, ``engine``
  [the fabric's routing engine].
- ``whatif_links``: ``failed_cables`` (cable indices ``0..L-1``, required), rerouted by the fabric's
  engine; ``ebb_patterns`` [200] (0: no eBB per side), ``seed`` [1].
- ``whatif_engine``: ``engine`` (required), ``ebb_patterns`` [200], ``seed`` [1].
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from django.db import models

from fabric_engine.analysis import PAIR_PATTERNS, effective_bisection_bandwidth, what_if
from fabric_engine.analysis.ebb import METHODS
from fabric_engine.routing import ENGINES, Routing, route
from fabric_engine.scenario import build_emulator, build_fabric
from fabric_engine.topology import Fabric

__all__ = ["AnalysisKind", "AnalysisStatus", "ParamError", "LIMITS", "clean_params", "run", "ProgressThrottle",
           "summary"]

#: ``progress(fraction, message)``: fraction done in 0..1 and what is being done.
Progress = Callable[[float, str], None]


class AnalysisKind(models.TextChoices):
    EBB = "ebb", "Effective bisection bandwidth"
    WHATIF_LINKS = "whatif_links", "What-if: failed cables, rerouted"
    WHATIF_ENGINE = "whatif_engine", "What-if: another routing engine"


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
LIMITS = {"patterns": (1, 20000), "ebb_patterns": (0, 5000), "seed": (0, 2**32 - 1)}
_KNOWN = {
    AnalysisKind.EBB: {"patterns", "seed", "method", "pattern", "engine"},
    AnalysisKind.WHATIF_LINKS: {"failed_cables", "ebb_patterns", "seed"},
    AnalysisKind.WHATIF_ENGINE: {"engine", "ebb_patterns", "seed"},
}


def _int(params: dict, name: str, default: int) -> int:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(name, f"expected an integer, got {value!r}")
    low, high = LIMITS[name]
    if not low <= value <= high:
        raise ParamError(name, f"{value} is outside {low}..{high}")
    return value


def _choice(params: dict, name: str, default: str | None, choices) -> str:
    value = params.get(name, default)
    if value is None:
        raise ParamError(name, f"required: one of {', '.join(sorted(choices))}")
    if value not in choices:
        raise ParamError(name, f"{value!r} is not one of {', '.join(sorted(choices))}")
    return value


def _cables(params: dict, num_links: int) -> list[int]:
    raw = params.get("failed_cables")
    if not isinstance(raw, list) or not raw:
        raise ParamError("failed_cables", "required: a non-empty list of cable indices")
    for i, c in enumerate(raw):
        if isinstance(c, bool) or not isinstance(c, int):
            raise ParamError("failed_cables", f"item {i}: expected a cable index, got {c!r}")
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
    out = {"ebb_patterns": _int(params, "ebb_patterns", 200), "seed": _int(params, "seed", 1)}
    if kind == AnalysisKind.WHATIF_LINKS:
        out["failed_cables"] = _cables(params, num_links)
    else:
        out["engine"] = _choice(params, "engine", None, ENGINES)
    return out


def _paths(routing: Routing, scenario: dict):
    return getattr(routing, "adaptive_paths", None) if scenario.get("adaptive") else None


def _ebb(params: dict, scenario: dict, progress: Progress) -> dict:
    engine = params.get("engine") or scenario.get("routing", "minhop")
    progress(0.0, f"routing the fabric with {engine}")
    routing = route(build_fabric(scenario.get("topology", {})), engine)
    n = params["patterns"]
    start = 0.1
    progress(start, f"0 of {n} patterns")
    res = effective_bisection_bandwidth(
        routing, n, params["seed"], method=params["method"], pattern=params["pattern"],
        paths=_paths(routing, scenario),
        progress=lambda f: progress(start + (1 - start) * f, f"{round(f * n)} of {n} patterns"))
    p5, p50, p95 = np.quantile(res.per_pattern, [0.05, 0.5, 0.95])
    counts, edges = np.histogram(res.per_pattern, bins=10)
    return {**res.as_dict(), "seed": params["seed"], "adaptive": bool(scenario.get("adaptive")),
            "p5": round(float(p5), 6), "p50": round(float(p50), 6), "p95": round(float(p95), 6),
            "histogram": {"edges": np.round(edges, 6).tolist(), "counts": counts.tolist()}}


def _cable(f: Fabric, c: int) -> dict:
    a, b = int(f.a_node[c]), int(f.b_node[c])
    return {"cable": c, "a": f"{f.node_name[a]}/{int(f.a_port[c])}", "b": f"{f.node_name[b]}/{int(f.b_port[c])}"}


def _whatif(params: dict, scenario: dict, progress: Progress) -> dict:
    progress(0.0, f"building the scenario, routing with {scenario.get('routing', 'minhop')}")
    em = build_emulator(scenario)
    base, fabric = em.routing, em.fabric
    failed = params.get("failed_cables", [])
    other = params.get("engine")
    n = params["ebb_patterns"]
    if not em.jobs and not n:
        raise ParamError("ebb_patterns", "the fabric has no jobs to compare: ask for an eBB per side (> 0)")
    progress(0.1, f"rerouting with {other or base.engine}" + (f" without {len(failed)} cable(s)" if failed else ""))
    if em.jobs:
        w = what_if(fabric, em.jobs, engine=base.engine, other_engine=other, failed_cables=failed,
                    baseline_routing=base)
        out = w.as_dict()
        change = w.alternative.util - w.baseline.util
        top = np.argsort(-np.abs(change), kind="stable")[:10]
        top = top[np.abs(change[top]) > 1e-9]
        out["links_changed"] = [{"link": int(d), "baseline_util": round(float(w.baseline.util[d]), 4),
                                 "alternative_util": round(float(w.alternative.util[d]), 4)} for d in top]
    else:  # only the eBB of each side
        out = {"baseline": {"label": "baseline", "engine": base.engine, "failed_cables": [], "jobs": []},
               "alternative": {"label": "alternative", "engine": other or base.engine, "failed_cables": failed,
                               "jobs": []}, "delta": [], "links_changed": []}
    out["failed"] = [_cable(fabric, c) for c in failed]
    if n:
        # what_if keeps its alternative routing to itself: route it again for its eBB (cheap next to the eBB)
        alt = route(fabric.without_links(failed) if failed else fabric, other or base.engine)
        for k, (label, routing) in enumerate((("baseline", base), ("alternative", alt))):  # two sides
            lo = 0.4 + 0.3 * k
            res = effective_bisection_bandwidth(
                routing, n, params["seed"], paths=_paths(routing, scenario),
                progress=lambda f, lo=lo, label=label: progress(lo + 0.3 * f, f"eBB of the {label}: {round(f * n)} "
                                                                              f"of {n} patterns"))
            out[label]["ebb"] = round(res.ebb, 6)
    out["summary"] = _whatif_summary(out)
    return out


def _whatif_summary(out: dict) -> dict:
    ratios = [d["comm_ratio"] for d in out["delta"]]
    known = [(r, d["id"]) for r, d in zip(ratios, out["delta"], strict=True) if r is not None]
    worst = max(known, default=None)
    worst = worst if worst is not None and worst[0] > 1 + 1e-6 else None
    b, a = out["baseline"], out["alternative"]
    ebb_b, ebb_a = b.get("ebb"), a.get("ebb")
    return {"jobs": len(ratios), "jobs_slower": sum(r is not None and r > 1 + 1e-6 for r in ratios),
            "jobs_faster": sum(r is not None and r < 1 - 1e-6 for r in ratios),
            "jobs_broken": sum(r is None for r in ratios),
            "worst_job": None if worst is None else {"id": worst[1], "comm_ratio": worst[0]},
            "ebb_delta": None if ebb_b is None or ebb_a is None else round(ebb_a - ebb_b, 6),
            "unrouted_flows": [b.get("unrouted_flows", 0), a.get("unrouted_flows", 0)]}


def run(kind: str, params: dict, scenario: dict, progress: Progress) -> dict:
    """Run the analysis ``kind`` with cleaned ``params`` on ``scenario``; its JSON-ready result.

    ``progress(fraction, message)`` is called as the work goes (often; throttle it).
    Raises :class:`~fabric_engine.errors.FabricEngineError` when the scenario cannot be built or routed.
    """
    if kind == AnalysisKind.EBB:
        return _ebb(params, scenario, progress)
    if kind in (AnalysisKind.WHATIF_LINKS, AnalysisKind.WHATIF_ENGINE):
        return _whatif(params, scenario, progress)
    raise ParamError("kind", f"{kind!r} is not one of {', '.join(_KNOWN)}")


def summary(kind: str, result: dict) -> str:
    """One line about a finished analysis, for the feed and the admin."""
    if kind == AnalysisKind.EBB:
        return f"eBB {100 * result['ebb']:.1f}% over {result['patterns']} {result['pattern']} patterns " \
               f"({result['engine']})"
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
