"""An analysis of a fabric from what its caller has: the routing and jobs its engine runs on, or its scenario.

The web app (:mod:`ibweb.fabrics.analyses`) only schedules and stores: it hands
:func:`run_analysis` the routing and the jobs of the fabric's runtime record (its engine's
LFTs, its job catalog) or, before an engine published one, the fabric's scenario; the
routing with another engine, the scenario build and the analysis itself happen here.

Kinds (``params`` as :func:`ibweb.fabrics.api.params.clean_params` fills them in):

- ``ebb``: ``patterns``, ``seed``, ``method``, ``pattern``, optional ``engine`` (:func:`ebb_analysis`);
- ``whatif_links``: ``failed_cables``, ``ebb_patterns``, ``seed``;
- ``whatif_engine``: ``engine``, ``ebb_patterns``, ``seed``;
- ``whatif_roce``: ``qps``, ``seed``, ``same_seed``;
- ``whatif_congestion``: ``vls``, optional ``congestion_control`` (CongestionControl fields; absent: the
  default profile, :meth:`fabric_engine.backpressure.cc_params.CongestionControl.typical`)
  (:func:`congestion_analysis`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..backpressure.cc_params import CongestionControl
from ..errors import FabricEngineError
from ..routing import Routing, route
from ..routing.options import engine_options
from ..workload import Job
from .congestion import MAX_HOSTS as CONGESTION_MAX_HOSTS
from .congestion import congestion_whatif
from .ebb import ebb_report
from .roce import compare
from .whatif import whatif_report

__all__ = ["KINDS", "AnalysisInputError", "run_analysis", "ebb_analysis", "scenario_inputs", "congestion_analysis"]

#: The kinds :func:`run_analysis` runs.
KINDS = ("ebb", "whatif_links", "whatif_engine", "whatif_roce", "whatif_congestion")

#: ``progress(fraction, message)``: fraction done in 0..1 and what is being done.
Progress = Callable[[float, str], None]


class AnalysisInputError(FabricEngineError):
    """What the analysis was asked for does not fit the fabric: ``field`` names the parameter, ``message`` why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _quiet(fraction: float, message: str) -> None:
    return None


def scenario_inputs(scenario: dict, progress: Progress | None = None) -> tuple[Routing, list[Job]]:
    """The routing and jobs of ``scenario`` (:func:`fabric_engine.scenario.build_emulator`), for a fabric whose
    engine has published nothing yet."""
    from ..scenario import build_emulator

    (progress or _quiet)(0.0, f"building the scenario, routing with {scenario.get('routing', 'minhop')}")
    em = build_emulator(scenario)
    return em.routing, list(em.jobs)


def _paths(routing: Routing, scenario: dict):
    return getattr(routing, "adaptive_paths", None) if scenario.get("adaptive") else None


def ebb_analysis(params: dict, scenario: dict, routing: Routing | None = None,
                 progress: Progress | None = None) -> dict:
    """The eBB of ``params`` (:func:`~fabric_engine.analysis.ebb.ebb_report`) plus ``adaptive``.

    ``routing``: what the fabric's engine runs on; it is used as it is unless ``params["engine"]``
    names another engine, which then routes its fabric. Without it the scenario's fabric is built
    and routed with ``params["engine"]`` or the scenario's engine.

    >>> spec = {"topology": {"generator": "fat_tree", "hosts": 8, "radix": 4}}
    >>> out = ebb_analysis({"patterns": 10, "seed": 1, "method": "count", "pattern": "bisection"}, spec)
    >>> out["engine"], out["patterns"], out["adaptive"]
    ('minhop', 10, False)
    """
    report = progress or _quiet
    engine = params.get("engine")
    if routing is None or engine not in (None, routing.engine):
        from ..scenario import build_fabric

        engine = engine or scenario.get("routing", "minhop")
        report(0.0, f"routing the fabric with {engine}")
        fabric = routing.fabric if routing is not None else build_fabric(scenario.get("topology", {}))
        same = engine == scenario.get("routing", "minhop")  # the fabric's guid files belong to its own engine
        routing = route(fabric, engine, **(engine_options(engine, scenario.get("routing_options")) if same else {}))
    start = 0.1
    out = ebb_report(routing, params["patterns"], params["seed"], method=params["method"], pattern=params["pattern"],
                     paths=_paths(routing, scenario), progress=lambda f, m: report(start + (1 - start) * f, m))
    return {**out, "adaptive": bool(scenario.get("adaptive"))}


def run_analysis(kind: str, params: dict, scenario: dict, *, routing: Routing | None = None,
                 jobs: Sequence[Job] | None = None, progress: Progress | None = None) -> dict:
    """Run the analysis ``kind`` with complete ``params``; its JSON-ready result.

    Parameters
    ----------
    kind : one of :data:`KINDS`
    params : dict
        Every parameter of the kind, defaults filled in.
    scenario : dict
        The fabric's scenario: its ``adaptive`` flag and ``routing`` engine, and what is built
        when ``routing`` is None.
    routing, jobs : Routing and list of Job, optional
        What the fabric's engine runs on (its runtime record); both or neither.
    progress : callable, optional
        ``progress(fraction, message)``, called often as the work goes (throttle it).

    Raises
    ------
    AnalysisInputError
        The fabric cannot answer what was asked (no jobs to compare), naming the field.
    FabricEngineError
        The scenario cannot be built or routed.
    """
    if kind not in KINDS:
        raise AnalysisInputError("kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    report = progress or _quiet
    if kind == "ebb":
        return ebb_analysis(params, scenario, routing, report)
    if routing is None:
        routing, jobs = scenario_inputs(scenario, report)
    jobs = list(jobs or [])
    if kind == "whatif_congestion":
        return congestion_analysis(params, scenario, routing, jobs, report)
    if kind == "whatif_roce":
        if not jobs:
            raise AnalysisInputError("kind", "the fabric has no jobs to run as RoCEv2: add jobs to its scenario")
        res = compare(routing.fabric, jobs, routing=routing, qps=params["qps"], seed=params["seed"],
                      same_seed=params["same_seed"], progress=lambda f, m: report(0.1 + 0.9 * f, m))
        return res.as_dict()
    if not jobs and not params["ebb_patterns"]:
        raise AnalysisInputError("ebb_patterns", "the fabric has no jobs to compare: ask for an eBB per side (> 0)")
    return whatif_report(routing, jobs, failed_cables=params.get("failed_cables", []),
                         other_engine=params.get("engine"), ebb_patterns=params["ebb_patterns"],
                         seed=params["seed"], paths=_paths(routing, scenario), progress=report)


def congestion_analysis(params: dict, scenario: dict, routing: Routing, jobs: Sequence[Job],
                        progress: Progress | None = None) -> dict:
    """What VL separation or congestion control would change (:func:`.congestion.congestion_whatif`) on ``routing``
    and ``jobs``, with the scenario's policy (QoS lanes); ``params``: ``vls``, optional ``congestion_control``
    (a dict of CongestionControl fields; absent or None: the default profile), optional ``congestion_control_source``
    (what to call given settings in the result; default ``"params"``).

    Raises :class:`AnalysisInputError` for adaptive routing, a fabric above
    :data:`~fabric_engine.analysis.congestion.MAX_HOSTS` hosts, no jobs or bad congestion control settings.
    """
    report = progress or _quiet
    if scenario.get("adaptive"):
        raise AnalysisInputError("adaptive", "the congestion what-if needs static routes (adaptive routing spreads a "
                                             "flow's packets over paths the credit model does not take yet)")
    hosts = len(routing.fabric.hosts)
    if hosts > CONGESTION_MAX_HOSTS:
        raise AnalysisInputError("fabric", f"the congestion what-if runs on fabrics of at most "
                                           f"{CONGESTION_MAX_HOSTS:,} hosts (this one has {hosts:,})")
    if not jobs:
        raise AnalysisInputError("kind", "the fabric has no jobs to compare: add jobs to its scenario")
    given = params.get("congestion_control")
    try:
        cc = None if given is None else CongestionControl.from_dict(given)
    except FabricEngineError as exc:
        raise AnalysisInputError("congestion_control", str(exc).removeprefix("congestion_control: ")) from exc
    policy = None
    if scenario.get("policy"):
        from ..policy import Policy

        policy = Policy.from_dict(routing.fabric, scenario["policy"])
    source = "default" if cc is None else str(params.get("congestion_control_source") or "params")
    return congestion_whatif(routing, list(jobs), policy=policy, vls=params.get("vls", 4), cc=cc, cc_source=source,
                             progress=lambda f, m: report(0.05 + 0.95 * f, m))
