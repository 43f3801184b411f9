"""The emulator's tick with credit flow control (issue 41): :func:`~fabric_engine.backpressure.credit_rates` in place
of max-min for the rates a congested fabric gives.

A fabric's congestion model is a choice (:data:`CONGESTION_MODELS`): ``maxmin`` (every flow its fair share: a
fabric with ideal congestion control, what every fabric runs by default) or ``credit`` (lossless by credits, no
congestion control: switch arbiters share an output among input ports, head-of-line blocking spreads the
congestion upstream; ``docs/workloads-and-congestion.md``).

With ``credit`` one tick solves every row that runs greedily with the credit model (the congestion tree of the
collectives while they run): a job's collective takes ``T = max(gbits / rate)`` over its flows, its flows are
paced at ``gbits / T`` as with max-min, independent flows (background, storage reads) get the model's rates.
The model's rates are path rates on the directed links (a storage backend is a link too): paths are put in order
(:func:`~fabric_engine.backpressure.order_paths`) and made into one hop table once per flow set, the background
rows from a pool of draws the ticks take in turn (:data:`CREDIT_BACKGROUND_DRAWS`).

A tick's solve spends at most :data:`CREDIT_TICK_HOP_ITERATIONS` hop-iterations and the next tick carries the
iteration on from where it stopped (:class:`CreditTick`), so the tick's time is bounded at any size; on large fabrics
the model takes several ticks to settle after a change, and at fabric scale it may not settle (the congestion tree's
``converged``). :data:`CREDIT_MAX_HOSTS` bounds the fabrics it may run on, :data:`CREDIT_CC_MAX_HOSTS` those it
runs congestion control on, checked when a fabric or its congestion control is configured (:func:`check_congestion`)
and when an emulator is built or given congestion control, never silently bypassed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .backpressure import CreditResult, Hops, Scratch, credit_rates, order_paths
from .backpressure.cc import CCResult, cc_rates
from .backpressure.cc_params import CongestionControl
from .backpressure.hops import concat_ranges
from .errors import FabricEngineError
from .flows import group_duration, paced

try:
    from . import _credit
except ImportError:  # pragma: no cover - limiting_links' numpy path does the same
    _credit = None

__all__ = ["CONGESTION_MODELS", "MAXMIN", "CREDIT", "CREDIT_MAX_HOSTS", "CREDIT_CC_MAX_HOSTS", "check_congestion",
           "CreditTick", "CreditSolve", "CREDIT_TICK_HOP_ITERATIONS", "CREDIT_BACKGROUND_DRAWS",
           "credit_xmit_wait_carried", "marked_fraction", "limiting_links", "storage_links"]

MAXMIN = "maxmin"
CREDIT = "credit"
#: The congestion models a fabric may run: name -> human name.
CONGESTION_MODELS = {MAXMIN: "max-min (ideal congestion control)", CREDIT: "credit flow control"}
#: Largest fabric (hosts) the credit model runs on: the size its tick is measured at (``tests/bench/
#: bench_credit_tick.py``: within the live tick's 250 ms on the 2-core reference machine; docs/workloads-and-
#: congestion.md). A tick's solve is bounded by :data:`CREDIT_TICK_HOP_ITERATIONS`, not by this.
CREDIT_MAX_HOSTS = 32_768
#: Largest fabric (hosts) the credit model runs on with congestion control on: its tick makes two credit solves (the
#: one without congestion control, whose roots mark, and the throttled one) after max-min's fair shares, measured
#: within the same 250 ms up to this size.
CREDIT_CC_MAX_HOSTS = 16_384
#: Hop-iterations one tick's credit solve may spend (an iteration walks every hop twice, a few ns a hop): past that
#: the tick stops and the next one carries the iteration on (:class:`CreditTick`'s ``budget``).
CREDIT_TICK_HOP_ITERATIONS = 7_000_000
#: Background draws the credit model's ticks take in turn: its hop table is built once per flow set, so a tick's
#: background rows come from this pool (tick ``seq`` takes draw ``(seq - 1) % n``, as max-min would draw it).
CREDIT_BACKGROUND_DRAWS = 8


def check_congestion(model: str, hosts: int, *, adaptive: bool = False, controlled: bool = False) -> None:
    """Raise :class:`FabricEngineError` (naming ``congestion``, or ``congestion_control``) if a fabric of ``hosts``
    hosts cannot run ``model`` (``controlled``: with congestion control enabled)."""
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
    if controlled and hosts > CREDIT_CC_MAX_HOSTS:
        raise FabricEngineError(f"congestion_control: the credit model runs congestion control on fabrics of at most "
                                f"{CREDIT_CC_MAX_HOSTS:,} hosts for now (this one has {hosts:,}): its tick would not "
                                "fit the live tick's budget; disable congestion control or use max-min (ideal "
                                "congestion control)")


@dataclass(frozen=True)
class CreditSolve:
    """One tick's solve: flow rates ``[F]`` (grouped flows paced), durations per group, per-flow limiting link
    (-1 none), and the model's result on the flows' paths (``result.rate`` per path, ``live`` the flow of each);
    ``cc``: with congestion control, its result (throttling, FECN/BECN) on the paths."""

    rate: np.ndarray
    bottleneck: np.ndarray
    duration: np.ndarray
    result: CreditResult
    live: np.ndarray
    cc: CCResult | None = None


class CreditTick:
    """Flows' paths in order over the directed links of a fabric, their hop table, and each tick's credit solve.

    ``link_src``/``link_dst``: each directed link's end nodes ``[E]`` (a storage backend is a link too:
    :func:`storage_links`); ``paths``: one row per path (CSR, ``E`` columns), ordered here once; ``routed``: its
    paths that have a route. ``owner``: each path's flow (default: path ``i`` is flow ``i``): a flow over several
    paths (a storage server's ports) is split evenly over them, from one send queue. The hop table is built once
    (again only when the lanes change) and holds every routed path: a tick gives the flows that do not run a zero
    demand.

    ``budget``: hop-iterations a solve may spend (the live tick's time: an iteration walks every hop twice), or
    None for a full solve each time (up to 400 iterations). With a budget each solve starts from the last one's
    state (:func:`~fabric_engine.backpressure.credit_rates`' ``start=``), so the iteration carries on from tick to
    tick; a flow that starts running starts from its demand. ``CreditResult.converged`` says whether it settled.
    """

    def __init__(self, link_src: np.ndarray, link_dst: np.ndarray, paths: sp.csr_matrix,
                 routed: np.ndarray | None = None, *, owner: np.ndarray | None = None, n_flows: int | None = None,
                 budget: int | None = None) -> None:
        self.src = np.asarray(link_src, dtype=np.int64)
        self.dst = np.asarray(link_dst, dtype=np.int64)
        self.n_links = len(self.src)
        if budget is not None and budget < 1:
            raise FabricEngineError("congestion: the credit model's budget must be >= 1 hop-iteration")
        self.budget = budget
        self.indptr, self.links = self._ordered(paths, routed)
        n_paths = len(self.indptr) - 1
        own = np.arange(n_paths, dtype=np.int64) if owner is None else np.asarray(owner, dtype=np.int64)
        if own.shape != (n_paths,) or (n_paths and (own.min() < 0 or (np.diff(own) < 0).any())):
            raise FabricEngineError(f"congestion: owner needs one flow per path ({n_paths}), ascending")
        #: Flows (a tick's demands are per flow).
        self.rows = int(own.max(initial=-1)) + 1 if n_flows is None else int(n_flows)
        if n_paths and own.max() >= self.rows:
            raise FabricEngineError(f"congestion: a path of flow {int(own.max())} with {self.rows} flows")
        length = np.diff(self.indptr)
        #: The paths in the hop table (those with a route and a link), in order, and the flow of each.
        self.hop_rows = np.flatnonzero(length > 0)
        self.hop_owner = own[self.hop_rows]
        self._split = bool(n_paths and (np.diff(own) == 0).any())  # some flow has several paths
        paths_of = np.bincount(self.hop_owner, minlength=self.rows)  # each flow's routed paths
        #: Each hop-table path's part of its flow: an even split over the flow's routed paths.
        self.hop_share = 1.0 / paths_of[self.hop_owner]
        self._has_path = paths_of > 0
        self._direct = len(self.hop_owner) == self.rows and not self._split  # every flow one path, in order
        self._hop_indptr = np.concatenate([[0], np.cumsum(length[self.hop_rows])])
        self._hops: Hops | None = None
        self._hops_vl: np.ndarray | None = None
        self._last: CreditResult | None = None
        self._last_cc: CCResult | None = None
        self._last_dem: np.ndarray | None = None
        self._cc_cache: dict = {}  # what congestion control makes of each row, kept while its inputs stay
        self._scratch = Scratch()  # the C iteration's working memory, kept from tick to tick
        self._cc_scratch = Scratch()  # that of congestion control's throttled solve, carried on beside it

    def _ordered(self, rows: sp.csr_matrix, ok: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``rows`` in path order; rows not ``ok`` (no route) are left empty."""
        a = sp.csr_matrix(rows)
        if ok is not None:
            a = sp.csr_matrix(sp.diags(np.asarray(ok, dtype=np.float64)) @ a)
            a.eliminate_zeros()
        if a.nnz and int(a.indices.max()) >= self.n_links:
            raise FabricEngineError(f"congestion: a row crosses column {int(a.indices.max())}, past the "
                                    f"{self.n_links} links the credit model was given")
        a = sp.csr_matrix((np.ones(a.nnz), a.indices, a.indptr), shape=(a.shape[0], self.n_links))
        return order_paths(a, self.src, self.dst)

    def hops(self, vl: np.ndarray | None = None, n_vls: int | None = None) -> Hops:
        """The hop table of the routed paths with lanes ``vl`` per flow (default one lane), built once per lane map."""
        row_vl = None if vl is None else np.asarray(vl, dtype=np.int64)[self.hop_owner]
        same = (self._hops is not None and (self._hops_vl is None) == (row_vl is None)
                and (row_vl is None or np.array_equal(self._hops_vl, row_vl))
                and (n_vls is None or self._hops.n_vls == max(int(n_vls), 1)))
        if not same:
            self._hops = Hops.from_paths(self._hop_indptr, self.links, self.n_links, vl=row_vl, n_vls=n_vls,
                                         queue=self.hop_owner if self._split else None)
            self._hops_vl = row_vl
            self._last = self._last_cc = self._last_dem = None
        return self._hops

    def solve(self, capacity: np.ndarray, demand: np.ndarray, gbits: np.ndarray, group: np.ndarray, n_groups: int,
              vl: np.ndarray | None = None, vl_weight: np.ndarray | None = None, cc: CongestionControl | None = None,
              sl: np.ndarray | None = None, fair: Callable[[], np.ndarray] | None = None) -> CreditSolve:
        """The flows' rates, as :func:`flows.solve_paced` gives them, with the credit model (greedy: every flow that
        runs as fast as it can, a group's flows then paced to its slowest).

        ``demand`` ``[F]`` (0: the flow does not run), ``gbits``/``group`` as for ``solve_paced``; ``vl`` per flow and
        ``vl_weight`` per VL (QoS): the model's lanes (default one). ``cc``: InfiniBand congestion control
        (:func:`~fabric_engine.backpressure.cc.cc_rates`, capacities in Gbit/s) with ``sl`` per flow (default 0);
        ``fair()``: the flows' max-min rates ``[F]`` (ideal congestion control), where the flows are held when its
        control is effective: called once the solve without it is made (a caller may compute them meanwhile), else
        solved here. The result's ``live`` is the flow of each of its paths.
        """
        dem = np.asarray(demand, dtype=np.float64)
        n = len(dem)
        if n != self.rows:
            raise FabricEngineError(f"congestion: {n} demands for {self.rows} flows")
        hops = self.hops(vl, None if vl_weight is None else len(vl_weight))
        live = self.hop_owner
        hop_dem = dem.copy() if self._direct else dem[live] * self.hop_share  # (kept for the next tick)
        cap = np.asarray(capacity, dtype=np.float64)[:self.n_links]
        with_cc = cc is not None and cc.enabled
        solve = {}
        if self.budget is not None:  # with CC the budget is shared by the base solve and the tick's throttled round
            share = self.budget // (max(len(hops.row), 1) * (2 if with_cc else 1))  # with CC: base and one round
            # the last states are this object's, kept for the next start only: iterated in place
            solve.update(max_iter=max(1, min(400, share)), overwrite_start=True, scratch=self._scratch)
        prev = self._last
        base = credit_rates(hops, cap, hop_dem, vl_weight, start=self._start(prev, hop_dem), **solve)
        cc_res = None
        if with_cc:
            row_sl = None if sl is None else np.asarray(sl, dtype=np.int64)[live]
            carry = self._last_cc if self.budget is not None else None  # one round a tick, carried on
            cc_start, cc_solve = None, solve
            if self.budget is not None:
                cc_solve = {**solve, "scratch": self._cc_scratch}
            if carry is not None and carry.credit is prev:  # nothing was throttled: its state is the base's now
                cc_start, cc_solve = base, {**cc_solve, "overwrite_start": False}
            elif carry is not None:
                cc_start = self._start(carry.credit, hop_dem)
            shares = None if fair is None else np.asarray(fair(), dtype=np.float64)[live] * self.hop_share
            cc_res = cc_rates(hops, cap, hop_dem, cc, vl_weight, sl=row_sl, unit_gbps=1.0, credit=base,
                              start=cc_start, carry=carry, fair=shares, cache=self._cc_cache, **cc_solve)
            res = cc_res.credit
        else:
            res = base
        if self.budget is not None:  # carried on from tick to tick
            self._last, self._last_cc, self._last_dem = base, cc_res, hop_dem
        if self._direct:  # path i is flow i
            rate = res.rate.copy()
        else:
            rate = np.bincount(live, weights=res.rate, minlength=n)  # a flow's paths add up
            # Flows without links (a host to itself) are held by nothing.
            alone = (dem > 0) & ~self._has_path
            rate[alone] = np.minimum(dem[alone], cap.max(initial=0.0))
        g = np.ascontiguousarray(group, dtype=np.int64)
        bits = np.ascontiguousarray(gbits, dtype=np.float64)
        dur = group_duration(bits, rate, g, n_groups)
        rate = paced(rate, bits, g, dur, out=rate)  # a group's flows at its slowest's pace
        path_bott = limiting_links(hops, res, cap, hop_dem)
        if self._direct:
            bott = path_bott
        else:
            bott = np.full(n, -1, np.int64)
            if self._split:  # a flow's limiting link is its slowest path's
                pick = _slowest_path(live, res.rate)
                bott[live[pick]] = path_bott[pick]
            else:
                bott[live] = path_bott
        return CreditSolve(rate, bott, dur, res, live, cc_res)

    def _start(self, last: CreditResult | None, hop_dem: np.ndarray) -> CreditResult | None:
        """The last solve's state to start from, its paths that start running now reset to their demand (a path
        that did not run has departed nothing: its hops would take as many ticks as it has hops to fill)."""
        if last is None or self._last_dem is None:
            return None
        fresh = np.flatnonzero((self._last_dem <= 0) & (hop_dem > 0))
        if not fresh.size:
            return last
        hops = self._hops
        first = hops.first[fresh]
        # (this object's: only a start from here on) no faster than the row's demand
        last.depart[concat_ranges(first, hops.last[fresh] + 1 - first)] = np.inf
        return last


def _slowest_path(flow: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Each flow's slowest path (its first at the lowest rate), as an index into ``flow``/``rate`` (per path; ``flow``
    ascending: a flow's paths are contiguous)."""
    new = np.r_[True, flow[1:] != flow[:-1]]
    low = np.minimum.reduceat(rate, np.flatnonzero(new))[np.cumsum(new) - 1]
    at = np.flatnonzero(rate <= low)
    return at[np.r_[True, flow[at][1:] != flow[at][:-1]]]


def storage_links(link_src: np.ndarray, link_dst: np.ndarray, n_nodes: int,
                  servers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """End nodes of the links then of a storage model's backends (its columns: read backends, then write backends,
    one of each per server in ``servers``), for :class:`CreditTick`.

    A read backend is a link into its server from a node of its own, a write backend a link from its server to a
    node of its own: reads start and writes end there, and a backend slower than what its server is sent holds the
    server's input buffers back as a slow link would (the checkpoint's congestion tree has its root there).
    """
    srv = np.asarray(servers, dtype=np.int64)
    own = int(n_nodes) + np.arange(2 * len(srv), dtype=np.int64)
    return (np.concatenate([np.asarray(link_src, dtype=np.int64), own[:len(srv)], srv]),
            np.concatenate([np.asarray(link_dst, dtype=np.int64), srv, own[len(srv):]]))


def limiting_links(hops: Hops, res: CreditResult, cap: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """Each row's limiting link: on its path, a congestion root first, then the most held-back link, then the
    fullest; -1 for rows that get their demand."""
    out = hops.out
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(cap > 0, res.link_cap / cap, 0.0)  # below 1: held back by credits
        util = np.where(cap > 0, res.link_rate / cap, 0.0)
    link_score = np.where(res.root, 3.0, 0.0) + np.where(res.held, 2.0 - room, util)
    dem = np.ascontiguousarray(demand, dtype=np.float64)
    if _credit is not None:  # one pass over the hops
        best = np.empty(hops.rows, np.int64)
        _credit.limiting(hops.last, out, np.ascontiguousarray(link_score, dtype=np.float64), res.rate, dem, best)
        return best
    best = np.full(hops.rows, -1, np.int64)
    if hops.rows:  # a row's hops are contiguous: its first hop of the row's highest score
        score = link_score[out]
        top = np.flatnonzero(score >= np.maximum.reduceat(score, hops.first)[hops.row])
        row = hops.row[top]
        first = np.r_[True, row[1:] != row[:-1]]
        best[row[first]] = out[top[first]]
    limited = res.rate < dem * (1 - 1e-6)
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
