"""What the known jobs should drive on each link, and how that compares with what the counters show.

Expected traffic
----------------
:func:`emulate` runs the emulator's solver on the fabric as discovered (its widths
and speeds), the routing in force (OpenSM's LFTs) and the known jobs: each job's
collective on every rail (:func:`~.catalog.workload_jobs`, ring all-reduce unless
configured), all jobs communicating at once, transfers of one collective in lock
step (:func:`fabric_engine.flows.solve_paced`, as :meth:`Emulator.step` does when
every job is in its communication phase). That gives, per job, its rate on every
directed link *while it communicates* and what its HCAs then inject.

A real job also computes; how much of the time it communicates is not known in
advance, so :func:`compare` scales each job by its *activity*: what its HCAs were
seen to send (:func:`~.attribution.job_bandwidth`) over what they send in the
emulation, clipped to ``0..max_activity``. The expected rate of a link is then
``sum_j activity_j * rate_j(link)``, and the comparison asks whether the traffic
went where the routing says the jobs' traffic goes:

* ``below``: a link far below what its jobs should drive (observed under
  ``low_ratio`` of expected): a degraded or flapping link, traffic that goes
  elsewhere than the LFTs say (adaptive routing, stale LFTs), a straggler;
* ``unexplained``: a link carrying traffic no known job explains (observed above
  expected by more than ``max(floor, (high_ratio - 1) * expected)``): a job the
  scheduler does not know, storage or management traffic, a misplaced job;
* ``above``: the same excess on a link known jobs use: they drive more than modelled
  (a heavier phase, another pattern), or something else shares their link;
* ``no_route``: flows of known jobs the LFTs send into a port that is down or
  nowhere (the subnet manager has not routed around a failure yet).

Links whose counters are stale are not compared. ``floor`` is
``max(min_gbps, min_util * capacity)``; deviations are ranked by
``|observed - expected| / capacity``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..backpressure.cc_params import CongestionControl
from ..credit_tick import CONGESTION_MODELS, CREDIT, MAXMIN, CreditTick
from ..errors import FabricEngineError
from ..flows import solve_paced
from ..routing import NO_PATH, Routing
from ..routing.tables import MAX_HOPS
from ..topology import KIND_HOST, Fabric
from ..workload import expand_jobs
from .attribution import job_bandwidth
from .catalog import KnownJob, workload_jobs

__all__ = ["JobTraffic", "Thresholds", "Comparison", "emulate", "compare", "dead_ends", "link_label", "link_ends",
           "link_hosts", "port_key"]

#: Bytes per collective in the emulation (the rates do not depend on it; the durations scale with it).
BUFFER_BYTES = 1e9


@dataclass(frozen=True, eq=False)
class JobTraffic:
    """The known jobs' traffic in the emulation, all communicating at once.

    ``rates``: CSR ``(J, 2L)`` Gb/s of job ``j`` on directed link ``d``; ``injection``:
    ``(J,)`` Gb/s its HCAs send; ``comm_s``: ``(J,)`` seconds of one collective of
    :data:`BUFFER_BYTES` (slowest rail; ``inf`` when a flow has no route); ``broken``:
    ``(J,)`` flows without a route; ``dead``: where those flows die (:func:`dead_ends`),
    ``[(switch node, out port, job index), ...]``.
    """

    routing: Routing
    jobs: list[KnownJob]
    rates: sp.csr_matrix
    injection: np.ndarray
    comm_s: np.ndarray
    broken: np.ndarray
    dead: list[tuple[int, int, int]]

    @property
    def link_rate(self) -> np.ndarray:
        """Sum over jobs, Gb/s per directed link ``(2L,)``."""
        return np.asarray(self.rates.sum(axis=0)).ravel()


def dead_ends(routing: Routing, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the LFT walk of each pair stops short of its destination: ``(node, port)`` int64, ``-1`` if it arrives.

    ``port`` is the out port the LFT names (0 when the entry is ``NO_PATH`` or the port is
    outside the switch); the node is the switch holding the entry, or the sender when its
    own port is not cabled. Vectorized over pairs, one step per hop.
    """
    f = routing.fabric
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    node_out = np.full(len(src), -1, dtype=np.int64)
    port_out = np.full(len(src), -1, dtype=np.int64)
    link = f.port_out_link[f.port_offset[src]] if src.size else np.zeros(0, np.int64)
    lids = f.port_lid[f.port_offset[dst]] if dst.size else np.zeros(0, np.int64)
    uncabled = link < 0
    node_out[uncabled], port_out[uncabled] = src[uncabled], 1
    flow = np.flatnonzero(~uncabled)
    link = link[flow]
    for _ in range(MAX_HOPS):
        if flow.size == 0:
            break
        cur = f.dl_dst[link]
        going = cur != dst[flow]
        flow, cur = flow[going], cur[going]
        sw = f.switch_index[cur]
        port = np.where(sw >= 0, routing.lft[np.maximum(sw, 0), lids[flow]], NO_PATH).astype(np.int64)
        valid = (port != 0) & (port != NO_PATH) & (port <= f.nports[cur])
        nxt = np.where(valid, f.port_out_link[f.port_offset[cur] + np.where(valid, port, 1) - 1], -1)
        stop = nxt < 0
        node_out[flow[stop]] = cur[stop]
        port_out[flow[stop]] = np.where(valid[stop], port[stop], 0)
        flow, link = flow[~stop], nxt[~stop]
    return node_out, port_out


def emulate(routing: Routing, jobs: Sequence[KnownJob], congestion: str = MAXMIN,
            congestion_control: CongestionControl | None = None) -> JobTraffic:
    """The known jobs' traffic on ``routing``, every job communicating (see the module docstring).

    ``congestion``: the model the rates come from, ``"maxmin"`` (ideal congestion control) or ``"credit"``
    (credit flow control, :class:`fabric_engine.credit_tick.CreditTick`; with ``congestion_control`` enabled,
    InfiniBand congestion control on top): the fabric's congestion model, so that the expected values are what
    that model says the jobs get.
    """
    if congestion not in CONGESTION_MODELS:
        raise FabricEngineError(f"congestion: {congestion!r} is not one of {', '.join(CONGESTION_MODELS)}")
    f = routing.fabric
    e = 2 * f.num_links
    jobs = list(jobs)
    n = len(jobs)
    wl, owner = workload_jobs(jobs, buffer_bytes=BUFFER_BYTES)
    if not wl:
        return JobTraffic(routing, jobs, sp.csr_matrix((n, e)), np.zeros(n), np.zeros(n), np.zeros(n, np.int64), [])
    jf = expand_jobs(wl, f, routing.paths)
    fl, inc = jf.flows, jf.incidence
    dem = np.where(jf.broken, 0.0, fl.demand_gbps)
    gbits = fl.nbytes * 8e-9
    wl_of_flow = fl.job.astype(np.int64)
    if congestion == CREDIT:
        tick = CreditTick(f.dl_src, f.dl_dst, sp.csr_matrix(inc), ~jf.broken)
        solved = tick.solve(f.capacity_gbps, dem, gbits, wl_of_flow, len(wl), cc=congestion_control,
                            sl=fl.sl)
        rate, dur = solved.rate, solved.duration
    else:
        rate, _, dur = solve_paced(inc, f.capacity_gbps, dem, fl.weight, gbits, wl_of_flow, len(wl))
    rate = np.where(jf.broken, 0.0, rate)
    known_of_flow = owner[wl_of_flow]
    row_job = np.repeat(known_of_flow, np.diff(inc.indptr))
    row_rate = np.repeat(rate, np.diff(inc.indptr)) * inc.data
    rates = sp.csr_matrix((row_rate, (row_job, inc.indices)), shape=(n, e))
    rates.sum_duplicates()
    rates.eliminate_zeros()
    injection = np.bincount(known_of_flow, weights=rate, minlength=n)
    comm = np.zeros(n)
    np.maximum.at(comm, owner, np.where(np.isfinite(dur), dur, np.inf))
    broken = np.bincount(known_of_flow[jf.broken], minlength=n).astype(np.int64)
    dead: list[tuple[int, int, int]] = []
    if jf.broken.any():
        rows = np.flatnonzero(jf.broken)
        node, port = dead_ends(routing, fl.src[rows], fl.dst[rows])
        keep = node >= 0
        triples = np.unique(np.stack([node[keep], port[keep], known_of_flow[rows][keep]], axis=1), axis=0)
        dead = [(int(a), int(b), int(c)) for a, b, c in triples]
    return JobTraffic(routing, jobs, rates, injection, comm, broken, dead)


@dataclass(frozen=True)
class Thresholds:
    """When a link deviates (see the module docstring)."""

    low_ratio: float = 0.5
    high_ratio: float = 1.5
    min_gbps: float = 1.0
    min_util: float = 0.01
    max_activity: float = 1.0

    def __post_init__(self) -> None:
        if not (0 < self.low_ratio < 1 < self.high_ratio) or self.min_gbps < 0 or not 0 <= self.min_util < 1:
            raise ValueError("thresholds: need 0 < low_ratio < 1 < high_ratio, min_gbps >= 0, 0 <= min_util < 1")
        if self.max_activity <= 0:
            raise ValueError("thresholds: max_activity must be positive")


def port_key(fabric: Fabric, d: int) -> str:
    """Stable name of the out port of directed link ``d`` across discoveries: ``"0x<node guid>/<port>"``."""
    return f"0x{int(fabric.guid[fabric.dl_src[d]]):016x}/{int(fabric.dl_src_port[d])}"


def link_hosts(fabric: Fabric, d: int) -> list[str]:
    """GUIDs (``"0x..."``) of the hosts at either end of directed link ``d`` (to hide them from other tenants)."""
    ends = (int(fabric.dl_src[d]), int(fabric.dl_dst[d]))
    return [f"0x{int(fabric.guid[n]):016x}" for n in ends if fabric.kind[n] == KIND_HOST]


def link_ends(fabric: Fabric, d: int) -> tuple[str, str]:
    """``("leaf01 port 5", "spine02 port 1")``: the out port and the in port of directed link ``d``."""
    return (f"{fabric.node_name[fabric.dl_src[d]]} port {int(fabric.dl_src_port[d])}",
            f"{fabric.node_name[fabric.dl_dst[d]]} port {int(fabric.dl_dst_port[d])}")


def link_label(fabric: Fabric, d: int) -> str:
    """``"leaf01 port 5 -> spine02 port 1"``."""
    return " -> ".join(link_ends(fabric, d))


@dataclass(frozen=True, eq=False)
class Comparison:
    """Expected against observed for one pair of sweeps.

    Per directed link ``(2L,)`` float64: ``expected_gbps``, ``observed_gbps``, ``ratio``
    (observed / expected, ``nan`` where nothing is expected), ``code`` int8 (0 fine,
    1 below, 2 unexplained, -1 not compared: stale). Per job ``(J,)``: ``observed_gbps``
    (sent by its HCAs), ``emulated_gbps`` (sent while communicating in the emulation),
    ``activity``. ``deviations``: ranked list of dicts (see :func:`compare`).
    """

    expected_gbps: np.ndarray
    observed_gbps: np.ndarray
    ratio: np.ndarray
    code: np.ndarray
    activity: np.ndarray
    job_observed_gbps: np.ndarray
    job_emulated_gbps: np.ndarray
    deviations: list[dict]


CODE_OK, CODE_BELOW, CODE_UNEXPLAINED, CODE_STALE = 0, 1, 2, -1


def compare(traffic: JobTraffic, observed_gbps: np.ndarray, incidence: sp.csr_matrix, *,
            stale: np.ndarray | None = None, thresholds: Thresholds | None = None, most: int = 50) -> Comparison:
    """Expected against observed per directed link (see the module docstring).

    Parameters
    ----------
    traffic : JobTraffic
        From :func:`emulate` on the fabric the counters were read on.
    observed_gbps : ndarray, ``(2L,)``
        Observed rate of every directed link.
    incidence : csr_matrix, ``(J, 2L)``
        Links each job can use (:func:`~.attribution.job_links`), to name the jobs of a link.
    stale : ndarray of bool, ``(2L,)``, optional
        Links without counters in both sweeps: not compared.
    most : int
        Length of the ranked list.

    Returns
    -------
    Comparison
        ``deviations`` entries: ``{"kind", "link", "key", "label", "expected_gbps", "observed_gbps",
        "capacity_gbps", "score", "jobs"}`` (``link`` -1 and ``port`` set for ``no_route``).
    """
    th = thresholds or Thresholds()
    f = traffic.routing.fabric
    jobs = traffic.jobs
    obs = np.asarray(observed_gbps, dtype=np.float64)
    cap = f.capacity_gbps
    e = len(cap)
    weights = _node_weights(f, traffic)
    sent, _ = job_bandwidth(f, [j.rails for j in jobs], obs, weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        activity = np.where(traffic.injection > 0, sent / traffic.injection, 0.0)
    activity = np.clip(np.nan_to_num(activity), 0.0, th.max_activity)
    expected = np.asarray(traffic.rates.T @ activity).ravel() if len(jobs) else np.zeros(e)
    floor = np.maximum(th.min_gbps, th.min_util * cap)
    stale = np.zeros(e, dtype=bool) if stale is None else np.asarray(stale, dtype=bool)
    below = (expected >= floor) & (obs < th.low_ratio * expected) & ~stale
    unexplained = (obs - expected >= np.maximum(floor, (th.high_ratio - 1.0) * expected)) & ~stale
    code = np.where(stale, CODE_STALE, np.where(below, CODE_BELOW, np.where(unexplained, CODE_UNEXPLAINED, CODE_OK)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(expected > 0, obs / expected, np.nan)
    score = np.abs(obs - expected) / np.maximum(cap, 1e-12)
    flagged = np.flatnonzero(below | unexplained)
    flagged = flagged[np.argsort(-score[flagged], kind="stable")][:most]
    names = [j.job_id for j in jobs]
    cols = sp.csc_matrix(incidence[:, flagged]) if len(jobs) and flagged.size else None
    deviations = []
    for i, d in enumerate(flagged.tolist()):  # a loop over the few ranked deviations
        on = cols.indices[cols.indptr[i]:cols.indptr[i + 1]] if cols is not None else []
        a, b = link_ends(f, d)
        # above what known jobs on the link should drive ("above"), or traffic of no known job ("unexplained")
        kind = "below" if below[d] else "above" if len(on) else "unexplained"
        deviations.append({
            "kind": kind, "link": d, "key": port_key(f, d), "a": a, "b": b,
            "label": link_label(f, d), "expected_gbps": round(float(expected[d]), 3),
            "observed_gbps": round(float(obs[d]), 3), "capacity_gbps": round(float(cap[d]), 3),
            "score": round(float(score[d]), 4), "jobs": [names[k] for k in on][:10], "hosts": link_hosts(f, d)})
    deviations = _no_route(f, traffic, activity) + deviations
    return Comparison(expected, obs, ratio, code.astype(np.int8), activity, sent, traffic.injection.copy(),
                      deviations)


def _node_weights(fabric: Fabric, traffic: JobTraffic) -> sp.csr_matrix:
    """Jobs x nodes: each job's emulated rate out of each of its HCAs (shares of a shared HCA)."""
    f = fabric
    n = len(traffic.jobs)
    src = f.dl_src
    rates = traffic.rates.tocoo()
    from_host = f.kind[src[rates.col]] == KIND_HOST
    return sp.csr_matrix((rates.data[from_host], (rates.row[from_host], src[rates.col[from_host]])),
                         shape=(n, f.num_nodes))


def _no_route(fabric: Fabric, traffic: JobTraffic, activity: np.ndarray) -> list[dict]:
    """One deviation per port where known jobs' flows die (uncabled sender, NO_PATH, or an LFT into a dead port)."""
    by_port: dict[tuple[int, int], list[int]] = {}
    for node, port, job in traffic.dead:  # a loop over the few dead ends
        by_port.setdefault((node, port), []).append(job)
    out = []
    for (node, port), jobs in by_port.items():
        name = str(fabric.node_name[node])
        if fabric.kind[node] == KIND_HOST:
            what = f"{name} port {port} (not cabled)"
        elif port > 0:
            what = f"{name} port {port} (the LFTs point at it; it is down)"
        else:
            what = f"{name} (no LFT entry toward the destination)"
        out.append({"kind": "no_route", "link": -1, "key": f"0x{int(fabric.guid[node]):016x}/{port}",
                    "a": f"{name} port {port}" if port > 0 else name, "b": None,
                    "label": what, "expected_gbps": None, "observed_gbps": None, "capacity_gbps": None,
                    "score": 1.0, "jobs": [traffic.jobs[j].job_id for j in jobs][:10],
                    "hosts": [f"0x{int(fabric.guid[node]):016x}"] if fabric.kind[node] == KIND_HOST else [],
                    "flows": int(sum(int(traffic.broken[j]) for j in jobs))})
    return out
