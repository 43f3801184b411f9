"""What VL separation or congestion control would change: the jobs' collectives under four congestion regimes.

All jobs' collectives run at once (the worst overlap, as in :mod:`.whatif`) on the fabric's routing; per job the
collective time ``T = max(gbits / rate)`` over its flows under four sides (issue 41):

1. ``maxmin``: ideal congestion control (:func:`~fabric_engine.flows.solve_paced`: every flow its fair share, a
   job's flows paced to its slowest), the reference;
2. ``credit``: credit flow control as the fabric is (:func:`~fabric_engine.backpressure.credit_rates`; its QoS
   SL-to-VL map and VL arbitration weights when the scenario has a QoS policy, else one lane), every flow greedy
   at its demand as in the live tick (:mod:`fabric_engine.credit_tick`);
3. ``vl_separation``: the same with job ``k``'s traffic on lane ``k % vls``, equal lane weights;
4. ``congestion_control``: IB congestion control on top of the credit model
   (:func:`~fabric_engine.backpressure.cc.cc_rates`) with the settings given, else
   :meth:`~fabric_engine.backpressure.cc_params.CongestionControl.typical`.

Per job and side: seconds, slowdown against ``maxmin`` and the limiting link of its slowest flow; per side the
congestion roots and held links and whether the fixed point converged; for congestion control also its FECN/BECN
rates and the throttled flows by what holds them (``held_by``).

Static routes only (adaptive routing is refused by :func:`fabric_engine.analysis.run.run_analysis`), and at most
:data:`MAX_HOSTS` hosts and :data:`MAX_FLOWS` flows (the figures measured are at :data:`MAX_HOSTS`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from ..backpressure import CreditResult, Hops, Scratch, credit_rates, order_paths
from ..backpressure.cc import FAIR, MARKING, TABLE, cc_rates
from ..backpressure.cc_params import CongestionControl
from ..credit_tick import limiting_links
from ..errors import FabricEngineError
from ..flows import group_duration, solve_paced
from ..policy import Policy, enforce
from ..routing import Routing
from ..topology import Fabric
from ..workload import Job, expand_jobs

__all__ = ["SIDES", "MAX_HOSTS", "MAX_FLOWS", "MAX_VLS", "congestion_whatif", "link_label"]

#: The sides, in order: key -> label.
SIDES = {"maxmin": "ideal congestion control (max-min)", "credit": "credit flow control (as configured)",
         "vl_separation": "VL separation (a lane per job)", "congestion_control": "IB congestion control"}
#: Largest fabric (hosts) and flow set the analysis runs on. Measured on the 2-core reference machine
#: (``tests/bench/bench_congestion_whatif.py``): the live tick's 32,768-GPU fabric with every GPU in a job of 256
#: (``scenario.loaded_rail_spec``: 2.14 million flows, 10.4 million hops) takes 196 s and 3.1 GiB, each credit solve
#: about 33 s at its cap of 400 iterations (the congestion control side up to four). Time grows with the flows (the
#: hops) more than with the hosts, hence both bounds.
MAX_HOSTS = 32_768
MAX_FLOWS = 2_200_000
#: Lanes VL separation may spread the jobs over (VL 15 is the management lane).
MAX_VLS = 15
#: Packet size (bytes) the congestion control side assumes: the IB MTU.
MTU_BYTES = 4096


def link_label(fabric: Fabric, d: int) -> dict:
    """``{"link", "label": "node/port -> node/port"}`` of directed link ``d`` (the ends as :func:`.whatif.cable_label`
    names them)."""
    s, t = int(fabric.dl_src[d]), int(fabric.dl_dst[d])
    return {"link": int(d), "label": f"{fabric.node_name[s]}/{int(fabric.dl_src_port[d])} -> "
                                      f"{fabric.node_name[t]}/{int(fabric.dl_dst_port[d])}"}


def _job_limiting(t_flow: np.ndarray, bott: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Per job the limiting link of its slowest flow (-1: none), ``[n]``."""
    out = np.full(n, -1, np.int64)
    if not len(owner):
        return out
    order = np.lexsort((-t_flow, owner))
    first = np.r_[True, owner[order][1:] != owner[order][:-1]]
    out[owner[order][first]] = bott[order][first]
    return out


def _num(x: float) -> float | None:
    return round(float(x), 6) if np.isfinite(x) else None


def congestion_whatif(routing: Routing, jobs: Sequence[Job], *, policy: Policy | None = None, vls: int = 4,
                      cc: CongestionControl | None = None, cc_source: str = "default", mtu: int = MTU_BYTES,
                      progress: Callable[[float, str], None] | None = None) -> dict:
    """The jobs' collectives at once on ``routing`` under the four :data:`SIDES`; a JSON-ready result.

    ``policy``: the fabric's partitions and QoS (flows it blocks do not run, its rate caps apply on every side,
    its SL-to-VL map and VL weights are the ``credit`` and ``congestion_control`` sides' lanes); ``vls``: lanes
    of the ``vl_separation`` side (1..15); ``cc``: congestion control settings (default
    :meth:`CongestionControl.typical`),
    ``cc_source`` says where they come from; ``mtu``: packet bytes for congestion control.
    ``progress(fraction, message)`` is called at each side and each congestion control round.
    """
    say = progress or (lambda fraction, message: None)
    if not jobs:
        raise FabricEngineError("kind: the fabric has no jobs to compare")
    if not 1 <= int(vls) <= MAX_VLS:
        raise FabricEngineError(f"vls: {vls} is outside 1..{MAX_VLS}")
    cc = CongestionControl.typical() if cc is None else cc
    f = routing.fabric
    e = 2 * f.num_links
    n = len(jobs)
    say(0.0, f"expanding {n} jobs' collectives")
    jf = expand_jobs(list(jobs), f, routing.paths)
    fl = jf.flows
    if len(fl) > MAX_FLOWS:
        from .run import AnalysisInputError  # run imports this module

        raise AnalysisInputError("jobs", f"the congestion what-if runs on at most {MAX_FLOWS:,} flows for now (these "
                                         f"{n} jobs' collectives have {len(fl):,}): it would take too long")
    inc = sp.csr_matrix(jf.incidence)
    if inc.shape[1] > e:
        if inc[:, e:].nnz:
            raise FabricEngineError("kind: the congestion what-if does not model storage backends yet")
        inc = sp.csr_matrix(inc[:, :e])
    cap = np.asarray(f.capacity_gbps, dtype=np.float64)
    dem = np.where(jf.broken, 0.0, np.asarray(fl.demand_gbps, dtype=np.float64))
    weight = np.asarray(fl.weight, dtype=np.float64)
    sl = np.zeros(len(fl), np.int64) if fl.sl is None else np.asarray(fl.sl, dtype=np.int64)
    lane, lane_w = None, None
    if policy is not None:  # as the emulator applies it (fabric_engine.emulator: _policy_inputs, _lanes)
        fp = enforce(policy, fl.src, fl.dst, sl)
        dem = np.where(fp.allowed, np.minimum(dem, fp.rate_cap_gbps), 0.0)
        weight = weight * np.maximum(fp.weight, 1e-12)
        sl = fp.sl.astype(np.int64)
        if policy.qos is not None:
            lane = np.minimum(fp.vl.astype(np.int64), 15)
            lane_w = np.maximum(policy.qos.weight, 1e-3)  # a lane without weight still drains, slowly
    gbits = np.asarray(fl.nbytes, dtype=np.float64) * 8e-9
    owner = np.asarray(fl.job, dtype=np.int64)

    say(0.05, SIDES["maxmin"])
    rate_m, bott_m, comm_m = solve_paced(inc, cap, dem, weight, gbits, owner, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_m = np.where(gbits > 0, gbits / rate_m, 0.0)
    sides = [_side("maxmin", comm_m, comm_m, _job_limiting(t_m, np.asarray(bott_m, np.int64), owner, n), f, jobs,
                   {"roots": None, "held": None, "converged": True, "iterations": None})]

    length = np.diff(inc.indptr)
    live = np.flatnonzero((dem > 0) & (length > 0))
    unit = sp.csr_matrix(inc[live])
    unit.eliminate_zeros()
    if unit.nnz and not np.allclose(unit.data, 1.0):
        raise FabricEngineError("adaptive: flows split over several paths (adaptive routing) are not modelled yet")
    unit.data[:] = 1.0
    indptr, links = order_paths(unit, f.dl_src, f.dl_dst)
    d_live = dem[live]
    selfloop = (dem > 0) & (length == 0)  # a host to itself: held by nothing

    def times(rate_live: np.ndarray, bott_live: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rate = np.zeros(len(fl))
        rate[live] = rate_live
        rate[selfloop] = np.minimum(dem[selfloop], cap.max(initial=0.0))
        bott = np.full(len(fl), -1, np.int64)
        bott[live] = bott_live
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(gbits > 0, gbits / rate, 0.0)
            comm = group_duration(gbits, rate, owner, n)
        return comm, _job_limiting(t, bott, owner, n)

    def credit_stats(h: Hops, res: CreditResult, demand: np.ndarray) -> dict:
        # Only where a row is held below its demand: with throttled demands that just fill a port the model
        # still flags it a root and its feeders held (caps that bind nobody).
        limited = res.rate < demand * (1 - 1e-6)
        crossed = np.bincount(h.out, weights=limited[h.row].astype(np.float64), minlength=h.n_links) > 0
        binding = res.link_rate >= res.link_cap * (1 - 1e-6)
        return {"roots": int((res.root & crossed).sum()), "held": int((res.held & crossed & binding).sum()),
                "converged": bool(res.converged), "iterations": int(res.iterations)}

    scratch = Scratch()  # the credit solves' working memory, allocated once
    lanes = " with the QoS lanes" if lane is not None else ", one lane"
    say(0.25, f"{SIDES['credit']}{lanes} ({len(links):,} hops)")
    hops = Hops.from_paths(indptr, links, e, vl=None if lane is None else lane[live],
                           n_vls=None if lane_w is None else len(lane_w))
    res_c = credit_rates(hops, cap, d_live, lane_w, scratch=scratch)
    comm_c, lim_c = times(res_c.rate, limiting_links(hops, res_c, cap, d_live))
    sides.append(_side("credit", comm_c, comm_m, lim_c, f, jobs,
                       {**credit_stats(hops, res_c, d_live), "lanes": int(hops.n_vls)}))

    say(0.5, f"{SIDES['vl_separation']} over {vls} lanes")
    hops_v = Hops.from_paths(indptr, links, e, vl=owner[live] % int(vls), n_vls=int(vls))
    res_v = credit_rates(hops_v, cap, d_live, None, scratch=scratch)
    comm_v, lim_v = times(res_v.rate, limiting_links(hops_v, res_v, cap, d_live))
    sides.append(_side("vl_separation", comm_v, comm_m, lim_v, f, jobs,
                       {**credit_stats(hops_v, res_v, d_live), "lanes": int(vls)}))

    cc_label = f"{SIDES['congestion_control']} ({cc_source} settings)"
    say(0.75, cc_label)
    res_cc = cc_rates(hops, cap, d_live, cc, lane_w, sl=sl[live], unit_gbps=1.0, packet_bytes=int(mtu), credit=res_c,
                      scratch=scratch, progress=lambda r: say(0.75 + 0.05 * (r - 1), f"{cc_label}: round {r}"))
    comm_cc, lim_cc = times(res_cc.rate, limiting_links(hops, res_cc.credit, cap, d_live))
    held_by = res_cc.held_by
    sides.append(_side("congestion_control", comm_cc, comm_m, lim_cc, f, jobs, {
        **credit_stats(hops, res_cc.credit, res_cc.target), "lanes": int(hops.n_vls), "rounds": int(res_cc.rounds),
        "marking_ports": int(res_cc.marking.sum()), "fecn_marks_per_s": round(float(res_cc.fecn_marked.sum()), 1),
        "becn_per_s": round(float(res_cc.becn_rcv.sum()), 1), "throttled_flows": int((held_by != 0).sum()),
        "held_by": {"fair": int((held_by == FAIR).sum()), "marking": int((held_by == MARKING).sum()),
                    "table": int((held_by == TABLE).sum())}}))

    say(0.95, "comparing the jobs")
    keys = list(SIDES)
    summary = []
    for k, job in enumerate(jobs):  # one row per job
        times_k = [s["jobs"][k]["comm_s"] for s in sides]
        summary.append({"id": job.name, "tenant": job.tenant, "comm_s": times_k,
                        "vs_maxmin": [s["jobs"][k]["slowdown"] for s in sides]})
    say(1.0, "done")
    return {"params": {"engine": routing.engine, "jobs": n, "flows": int(len(fl)), "hosts": int(len(f.hosts)),
                       "vls": int(vls), "mtu": int(mtu), "qos": lane is not None, "sides": keys},
            "congestion_control": {"source": cc_source, "settings": cc.as_dict()},
            "sides": sides, "summary": summary}


def _side(key: str, comm: np.ndarray, ref: np.ndarray, limiting: np.ndarray, fabric: Fabric, jobs: Sequence[Job],
          stats: dict) -> dict:
    """One side as JSON: per job seconds, slowdown against ``ref`` (max-min) and limiting link; ``worst_slowdown``
    over the jobs; ``stats`` (roots, held links, convergence, ...)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        slow = np.where(ref > 0, comm / ref, 1.0)
    rows = [{"id": job.name, "tenant": job.tenant, "comm_s": _num(comm[k]), "slowdown": _num(slow[k]),
             "limiting_link": None if limiting[k] < 0 else link_label(fabric, int(limiting[k]))}
            for k, job in enumerate(jobs)]
    finite = slow[np.isfinite(slow)]
    return {"key": key, "label": SIDES[key], "jobs": rows, **stats,
            "worst_slowdown": round(float(finite.max()), 4) if finite.size else None}
