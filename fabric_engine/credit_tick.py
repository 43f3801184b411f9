"""The emulator's tick with credit flow control (issue 41): :func:`~fabric_engine.backpressure.credit_rates` in place
of max-min for the rates a congested fabric gives.

A fabric's congestion model is a choice (:data:`CONGESTION_MODELS`): ``maxmin`` (every flow its fair share: a
fabric with ideal congestion control, what every fabric runs by default) or ``credit`` (lossless by credits, no
congestion control: switch arbiters share an output among input ports, head-of-line blocking spreads the
congestion upstream; ``docs/workloads-and-congestion.md``).

With ``credit`` one tick solves every row that runs greedily with the credit model (the congestion tree of the
collectives while they run): a job's collective takes ``T = max(gbits / rate)`` over its flows, its flows are
paced at ``gbits / T`` as with max-min, independent flows (background, storage reads) get the model's rates.
The model's rates are row rates on the directed links: rows are put in path order once per flow set
(:func:`~fabric_engine.backpressure.order_paths`), a tick's background rows once per tick.

The model is not yet fast at fabric scale: :data:`CREDIT_MAX_HOSTS` bounds the fabrics it may run on, checked when a
fabric is configured (:func:`check_congestion`) and when an emulator is built, never silently bypassed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .backpressure import CreditResult, Hops, credit_rates, order_paths
from .backpressure.cc import CCResult, cc_rates
from .backpressure.cc_params import CongestionControl
from .errors import FabricEngineError
from .flows import group_duration

__all__ = ["CONGESTION_MODELS", "MAXMIN", "CREDIT", "CREDIT_MAX_HOSTS", "check_congestion", "CreditTick",
           "CreditSolve", "credit_xmit_wait_carried", "marked_fraction", "limiting_links"]

MAXMIN = "maxmin"
CREDIT = "credit"
#: The congestion models a fabric may run: name -> human name.
CONGESTION_MODELS = {MAXMIN: "max-min (ideal congestion control)", CREDIT: "credit flow control"}
#: Largest fabric (hosts) the credit model runs on: its tick must fit the live tick's budget (250 ms median on the
#: 2-core reference machine, ``tests/bench/bench_credit_tick.py``; figures in docs/workloads-and-congestion.md).
CREDIT_MAX_HOSTS = 192


def check_congestion(model: str, hosts: int, *, adaptive: bool = False, storage: bool = False) -> None:
    """Raise :class:`FabricEngineError` (naming ``congestion``) if a fabric of ``hosts`` hosts cannot run ``model``."""
    if model not in CONGESTION_MODELS:
        raise FabricEngineError(f"congestion: {model!r} is not one of {', '.join(CONGESTION_MODELS)}")
    if model != CREDIT:
        return
    if hosts > CREDIT_MAX_HOSTS:
        raise FabricEngineError(f"congestion: credit flow control runs on fabrics of at most {CREDIT_MAX_HOSTS:,} "
                                f"hosts for now (this one has {hosts:,}): its tick would not fit the live tick's "
                                "budget; use max-min (ideal congestion control)")
    if adaptive:
        raise FabricEngineError("congestion: credit flow control needs static routes (adaptive routing spreads a "
                                "flow's packets over paths the model does not take yet)")
    if storage:
        raise FabricEngineError("congestion: credit flow control does not model storage backends yet")


@dataclass(frozen=True)
class CreditSolve:
    """One tick's solve: row rates ``[F]`` (grouped rows paced), durations per group, per-row limiting link
    (-1 none), and the model's result on the live rows (``result.rate`` over ``live``); ``cc``: with congestion
    control, its result (throttling, FECN/BECN) on the live rows."""

    rate: np.ndarray
    bottleneck: np.ndarray
    duration: np.ndarray
    result: CreditResult
    live: np.ndarray
    cc: CCResult | None = None


class CreditTick:
    """Rows' paths in order over the directed links of a fabric, kept per flow set, and the tick's credit solve.

    ``link_src``/``link_dst``: each directed link's end nodes ``[E]``; ``fixed``: the flow set's rows (CSR, columns
    past ``E`` are not links and must be empty), ordered here once; ``routed``: its rows that have a route.
    """

    def __init__(self, link_src: np.ndarray, link_dst: np.ndarray, fixed: sp.csr_matrix,
                 routed: np.ndarray | None = None) -> None:
        self.src = np.asarray(link_src, dtype=np.int64)
        self.dst = np.asarray(link_dst, dtype=np.int64)
        self.n_links = len(self.src)
        self.indptr, self.links = self._ordered(fixed, routed)

    def _ordered(self, rows: sp.csr_matrix, ok: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``rows`` in path order; rows not ``ok`` (no route, no demand) are left empty."""
        a = sp.csr_matrix(rows)
        if ok is not None:
            a = sp.csr_matrix(sp.diags(np.asarray(ok, dtype=np.float64)) @ a)
            a.eliminate_zeros()
        if a.nnz and int(a.indices.max()) >= self.n_links:
            raise FabricEngineError("congestion: credit flow control does not model storage backends yet")
        a = sp.csr_matrix((np.ones(a.nnz), a.indices, a.indptr), shape=(a.shape[0], self.n_links))
        return order_paths(a, self.src, self.dst)

    def solve(self, extra: sp.csr_matrix | None, capacity: np.ndarray, demand: np.ndarray, gbits: np.ndarray,
              group: np.ndarray, n_groups: int, vl: np.ndarray | None = None,
              vl_weight: np.ndarray | None = None, cc: CongestionControl | None = None,
              sl: np.ndarray | None = None) -> CreditSolve:
        """Rates of the fixed rows then ``extra``'s (this tick's background), as :func:`flows.solve_paced` gives them.

        ``demand`` ``[F]`` (0: the row does not run), ``gbits``/``group`` as for ``solve_paced``; ``vl`` per row and
        ``vl_weight`` per VL (QoS): the model's lanes (default one). ``cc``: InfiniBand congestion control
        (:func:`~fabric_engine.backpressure.cc.cc_rates`, capacities in Gbit/s) with ``sl`` per row (default 0).
        """
        indptr, links = self.indptr, self.links
        dem = np.asarray(demand, dtype=np.float64)
        if extra is not None and extra.shape[0]:
            xi, xl = self._ordered(extra, dem[len(dem) - extra.shape[0]:] > 0)
            indptr = np.concatenate([indptr, indptr[-1] + xi[1:]])
            links = np.concatenate([links, xl])
        n = len(dem)
        if len(indptr) - 1 != n:
            raise FabricEngineError(f"congestion: {n} demands for {len(indptr) - 1} rows")
        length = np.diff(indptr)
        live = np.flatnonzero((dem > 0) & (length > 0))
        # The live rows' paths: a gather of their slices, no loop over rows.
        keep = np.repeat((dem > 0) & (length > 0), length)
        sub_links = links[keep]
        sub_indptr = np.concatenate([[0], np.cumsum(length[live])])
        row_vl = None if vl is None else np.asarray(vl, dtype=np.int64)[live]
        n_vls = None if vl_weight is None else len(vl_weight)
        hops = Hops.from_paths(sub_indptr, sub_links, self.n_links, vl=row_vl, n_vls=n_vls)
        cap = np.asarray(capacity, dtype=np.float64)[:self.n_links]
        cc_res = None
        if cc is not None and cc.enabled:
            row_sl = None if sl is None else np.asarray(sl, dtype=np.int64)[live]
            cc_res = cc_rates(hops, cap, dem[live], cc, vl_weight, sl=row_sl, unit_gbps=1.0)
            res = cc_res.credit
        else:
            res = credit_rates(hops, cap, dem[live], vl_weight)
        rate = np.zeros(n)
        rate[live] = res.rate
        # Rows without links (a host to itself) are held by nothing.
        rate[(dem > 0) & (length == 0)] = np.minimum(dem[(dem > 0) & (length == 0)], cap.max(initial=0.0))
        g = np.asarray(group, dtype=np.int64)
        bits = np.asarray(gbits, dtype=np.float64)
        dur = group_duration(bits, rate, g, n_groups)
        grouped = g >= 0
        with np.errstate(divide="ignore", invalid="ignore"):
            pace = np.where(grouped & (bits > 0), bits / dur[np.maximum(g, 0)], rate)
        rate = np.where(grouped, np.minimum(rate, np.nan_to_num(pace, nan=0.0)), rate)
        bott = np.full(n, -1, np.int64)
        bott[live] = limiting_links(hops, res, cap, dem[live])
        return CreditSolve(rate, bott, dur, res, live, cc_res)


def limiting_links(hops: Hops, res: CreditResult, cap: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """Each row's limiting link: on its path, a congestion root first, then the most held-back link, then the
    fullest; -1 for rows that get their demand."""
    out = hops.out
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(cap > 0, res.link_cap / cap, 0.0)  # below 1: held back by credits
        util = np.where(cap > 0, res.link_rate / cap, 0.0)
    score = np.where(res.root[out], 3.0, 0.0) + np.where(res.held[out], 2.0 - room[out], util[out])
    order = np.lexsort((-score, hops.row))
    first = np.r_[True, hops.row[order][1:] != hops.row[order][:-1]][:len(order)]
    best = np.full(hops.rows, -1, np.int64)
    best[hops.row[order][first]] = out[order][first]
    limited = res.rate < demand * (1 - 1e-6)
    return np.where(limited, best, -1)


def credit_xmit_wait_carried(offered: np.ndarray, link_cap: np.ndarray, held: np.ndarray) -> np.ndarray:
    """The carried rate to give :func:`fabric_engine.congestion.xmit_wait_ticks` under the credit model.

    A port waits for credits while it holds data its link's downstream buffers do not accept: on a link held
    back (``held``) the port has ``offered`` to send and credits for ``link_cap``, so it waits
    ``(offered - link_cap) / offered`` of the time. A congestion root sends at its full rate (its receiver
    drains it) and does not wait: the waiting is on the branches upstream of it.
    """
    off = np.asarray(offered, dtype=np.float64)
    return np.where(held, np.minimum(off, link_cap), off)


def marked_fraction(fecn_marked: np.ndarray, link_rate_gbps: np.ndarray, packet_bytes: int = 4096) -> np.ndarray:
    """The fraction of the packets a port sends that it marks with FECN: marks a second over packets a second."""
    packets = np.asarray(link_rate_gbps, dtype=np.float64) * 1e9 / (8.0 * packet_bytes)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.clip(np.where(packets > 0, fecn_marked / packets, 0.0), 0.0, 1.0)
