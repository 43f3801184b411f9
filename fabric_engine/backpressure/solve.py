"""Rates on a lossless fabric without congestion control: credits, round-robin arbiters, head-of-line blocking.

A fluid model of what a credit-based switch does in steady state, solved as a fixed point over all hops
at once:

* **Output ports share among input ports.** Each output port's VL arbiter splits the link among its
  virtual lanes by weight (weighted max-min over the lanes that have data); within a lane the switch
  arbiter serves the input buffers in turn, so each *input port* gets a max-min share, whatever the
  number of flows behind it.
* **Head-of-line blocking.** An input buffer (one per port and VL) is a FIFO: when the packet at its
  head waits for a saturated output, everything behind it waits too. In steady state a full buffer
  drains at ``T = share(o) / q(o)`` for the output ``o`` that holds it (``q(o)``: the part of the
  buffer's traffic going to ``o``), and every flow in it moves at its part of ``T``. ``share(o)`` is what the
  arbiter would give the buffer if it asked for all (an output with room takes it from its other inputs by round
  robin), so a buffer that sends little is not held to what it sends.
* **Credit back-pressure.** A full buffer returns credits at the rate it drains, so the link feeding it
  (on that lane) carries at most ``T``: the upstream output port becomes a bottleneck in its turn and
  its input buffers fill. Congestion spreads hop by hop up the tree for as long as the root saturates.
* **Virtual lanes separate.** Buffers and credits are per lane: a lane held back leaves the link's
  remaining bandwidth to the other lanes by their weights.

One iteration moves rates one hop down every path (arrivals at a hop are the departures of the hop
before) and back-pressure one hop up (each buffer's drain rate caps the lane feeding it). Iterations stop
when no flow rate, no binding cap and no hop's departure moves by more than ``tol`` of the fastest link. Once an
iteration stops contracting (arbiters and buffers taking turns), caps move only ``1 - damping`` of the way.

Some cases never stop: the iterates run round a limit cycle (a congestion tree's feedback runs one hop an
iteration, with a delay of several iterations, and overshoots). A solve that has not stopped returns the mean of
its last half of iterates (``average_from``: the first iterate summed), not its last iterate, which can be a cycle's
extreme: sums of the departures and caps are kept from then on (one more add per hop in the iteration's
departures pass), and if the stop test is met meanwhile the converged iterate is returned as before.

The iteration runs in C (``fabric_engine/_credit.c``) when it is built, else in numpy
(:func:`_iterate_numpy`, the same steps and the same order of sums). ``start``: the result of an earlier
solve of the same hops (a live tick whose demands moved) starts from its departures and caps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from .hops import Hops, concat_ranges
from .waterfill import water_levels

try:
    from .. import _credit
except ImportError:  # pragma: no cover - the numpy iteration below does the same
    _credit = None

__all__ = ["CreditResult", "credit_rates", "COMPILED", "Scratch"]

#: The compiled iteration is available (``fabric_engine._credit``).
COMPILED = _credit is not None


_NO_SCRATCH = np.empty(0)  # the C iteration allocates its own


class Scratch:
    """Working memory of the C iteration, kept between the solves of one owner (a live tick's, run one after
    another): at fabric scale it is some 100 MB, which a fresh allocation faults in page by page at every solve. It
    also keeps the arrivals the last solve left, so that a solve carried on from it (``start=`` its result,
    ``overwrite_start``) updates those of the rows whose demand changed instead of summing every hop's again."""

    def __init__(self) -> None:
        self._buffer = np.empty(0)
        self._left: tuple[Hops, np.ndarray, int] | None = None  # the last solve's hops, departures and slot

    def take(self, hops: Hops, averaging: bool) -> np.ndarray:
        """A buffer of at least what :func:`credit_rates`' C iteration of ``hops`` uses."""
        need = _credit.work_size(hops.n_pairs, hops.rows, hops.n_lanes, hops.n_inputs, len(hops.row),
                                 int(hops.tables["widest"]), averaging)
        if len(self._buffer) < need:
            self._buffer, self._left = np.empty(need), None
        return self._buffer

    def carried(self, hops: Hops, depart: np.ndarray) -> int | None:
        """The slot of the arrivals the last solve left, if it was of ``hops`` and left the departures ``depart``."""
        if self._left is not None and self._left[0] is hops and self._left[1] is depart:
            return self._left[2]
        return None

    def leave(self, hops: Hops | None, depart: np.ndarray | None = None, slot: int = 0) -> None:
        """Record what a solve left (None: nothing to carry on from)."""
        self._left = None if hops is None else (hops, depart, slot)


@dataclass(frozen=True)
class CreditResult:
    """Rates per row ``[R]`` and per link ``[E]``; per link the cap its downstream buffers put on it.

    ``link_cap``: the rate the link's downstream buffers accept, summed over its lanes (``capacity``
    where none is full); a link with ``link_cap < capacity`` is held back by credits (a branch of a
    congestion tree). ``root``: links saturated by their own capacity whose input buffers hold back
    traffic (where congestion trees start). ``iterations``/``converged``: of the fixed point.
    ``depart`` per hop ``[H]`` and ``lane_cap`` per lane: the iteration's state, for ``start=``. ``averaged``: the
    number of iterates whose mean this is when the iteration did not stop (``converged`` False): ``rate``,
    ``depart``, ``lane_cap`` are their means and the per-link figures follow from those (``held``: held back on
    average, i.e. in some iterate of the window); 0 for a converged (or last) iterate.
    """

    rate: np.ndarray
    link_rate: np.ndarray
    link_cap: np.ndarray
    held: np.ndarray
    root: np.ndarray
    iterations: int
    converged: bool
    depart: np.ndarray | None = None
    lane_cap: np.ndarray | None = None
    averaged: int = 0


def credit_rates(hops: Hops, capacity: np.ndarray, demand: np.ndarray, vl_weight: np.ndarray | None = None,
                 *, max_iter: int = 400, tol: float = 1e-4, damping: float = 0.5, start: CreditResult | None = None,
                 compiled: bool | None = None, average_from: int | None = None,
                 overwrite_start: bool = False, scratch: Scratch | None = None) -> CreditResult:
    """Steady-state rates of ``hops``' rows with credit flow control, round-robin and VL arbitration.

    ``capacity`` per link ``[E]`` (any unit, > 0 on used links); ``demand`` per row ``[R]`` (same unit;
    ``inf`` for as fast as it can); ``vl_weight`` per VL ``[V]`` (default equal). ``converged`` is False
    when ``max_iter`` iterations did not settle: then the mean of iterates ``average_from`` to ``max_iter`` is
    returned (``averaged`` of them; default ``average_from``: ``max_iter // 2 + 1``, the last half; not before the
    longest row's length of iterations), or the last iterate when that leaves fewer than two (``average_from`` >
    ``max_iter - 1`` turns averaging off). ``start``: an earlier result on the same hops to iterate on from (warm
    start; ``overwrite_start``: its departures may be iterated in place, not copied, for a caller that keeps only
    the new result). ``compiled``: force the C (True) or numpy (False) iteration; default C when built. ``scratch``:
    working memory for the C iteration kept by a caller that solves again and again (not shared between threads);
    a solve carried on in place from the last one on it takes that one's arrivals (:class:`Scratch`: rounding aside,
    the same iteration).
    """
    cap = np.asarray(capacity, dtype=np.float64)
    dem = np.asarray(demand, dtype=np.float64)
    if cap.shape != (hops.n_links,):
        raise SolverError(f"capacity has shape {cap.shape}, expected ({hops.n_links},)")
    if dem.shape != (hops.rows,):
        raise SolverError(f"demand has shape {dem.shape}, expected ({hops.rows},)")
    if not ((cap >= 0).all() and (dem >= 0).all()):  # (NaN is not >= 0)
        raise SolverError("capacity and demand must be >= 0")
    w = np.ones(hops.n_vls) if vl_weight is None else np.asarray(vl_weight, dtype=np.float64)
    if w.shape != (hops.n_vls,) or (w <= 0).any():
        raise SolverError(f"vl_weight needs {hops.n_vls} weights > 0")
    if max_iter < 1:
        raise SolverError("max_iter must be >= 1")
    if average_from is not None and average_from < 1:
        raise SolverError("average_from must be >= 1")
    if compiled and _credit is None:
        raise SolverError("compiled: fabric_engine._credit is not built")
    dem = np.minimum(dem, cap[hops.first_link])  # a row sends no faster than its first link
    lane_cap = cap[hops.lane_link]
    if start is not None and (start.depart is None or start.lane_cap is None
                              or start.depart.shape != (len(hops.row),) or start.lane_cap.shape != (hops.n_lanes,)):
        raise SolverError("start: a CreditResult of the same hops is needed")
    held_cap = lane_cap.copy() if start is None else np.minimum(start.lane_cap, lane_cap)
    lane_dem = np.zeros(hops.n_lanes)
    scale = float(cap.max(initial=0.0)) or 1.0  # tol is a fraction of the fastest link
    # A change at a row's first hops (its send queue's share of the host link, a demand changed since the start)
    # reaches its last hop after as many iterations as the row has hops, and the stop test looks at the last hops:
    # no stop before that, cold or warm.
    min_iter = hops.longest
    # A solve that does not stop returns the mean of its iterates from here on (none: fewer than two to average).
    avg_from = max(max_iter // 2 + 1, min_iter) if average_from is None else int(average_from)
    if avg_from >= max_iter:
        avg_from = max_iter + 1
    w_lane = w[hops.lane_vl]
    use_c = _credit is not None if compiled is None else bool(compiled)
    if use_c:
        # the C iteration sets the start itself (no temporaries of the hops' size here)
        depart = np.empty(len(hops.row)) if start is None else start.depart.astype(np.float64,
                                                                                   copy=not overwrite_start)
        rate, link_rate = np.empty(hops.rows), np.empty(hops.n_links)
        t = hops.tables
        work, mode, slot = _NO_SCRATCH, 2 if start is None else 1, 0
        if scratch is not None:
            work = scratch.take(hops, avg_from <= max_iter)
            kept = scratch.carried(hops, depart) if start is not None and depart is start.depart else None
            mode, slot = (3, kept) if kept is not None else (mode, 0)
            scratch.leave(None)  # the arrivals are overwritten: nothing to carry on from unless the solve completes
        iterations, converged, averaged, slot = _credit.solve(
            hops.pair, t["prev"], t["hop_input"], hops.row, hops.out, dem, hops.last, hops.pair_input, hops.pair_lane,
            t["lane_pairs"], t["lane_ptr"], t["input_ptr"], hops.input_lane, lane_cap, w_lane, hops.lane_link, cap,
            t["link_lanes"], t["link_ptr"], depart, held_cap, rate, lane_dem, link_rate, work, hops.n_vls,
            int(max_iter), min_iter, float(tol * scale), float(damping), mode, bool(t.get("checked")), avg_from, slot)
        if scratch is not None:
            scratch.leave(hops, depart, slot)
        t["checked"] = True  # the C side has checked the index tables: not again for these hops
    else:
        row_dem = dem[hops.row]
        # a hop departs no faster than its row's (new) demand; the rest is carried on from the last result
        depart = row_dem.copy() if start is None else np.minimum(start.depart, row_dem)
        rate = depart[hops.last].copy()
        iterations, converged, averaged = _iterate_numpy(hops, cap, row_dem, lane_cap, w_lane, depart, held_cap, rate,
                                                         lane_dem, max_iter, min_iter, tol * scale, damping, avg_from)
        link_rate = np.bincount(hops.out, weights=depart, minlength=hops.n_links).astype(np.float64, copy=False)
    return _result(hops, cap, depart, held_cap, lane_cap, lane_dem, rate, link_rate, iterations, converged, averaged)


def _iterate_numpy(hops: Hops, cap, row_dem, lane_cap, lane_w, depart, held_cap, rate, lane_dem, max_iter, min_iter,
                   tol_abs, damping, avg_from) -> tuple[int, bool, int]:
    """The fixed point's iterations in numpy; ``depart``, ``held_cap``, ``rate``, ``lane_dem`` updated in place.

    ``(iterations, converged, averaged)``: when it does not stop, the state is the mean of iterates ``avg_from`` to
    ``max_iter`` (``averaged`` of them; ``lane_dem`` the arrivals at the mean departures), if there are any."""
    n_pairs, n_lanes, n_inputs = hops.n_pairs, hops.n_lanes, hops.n_inputs
    t = hops.tables
    buffers = hops.input_lane >= 0
    feeding = hops.input_lane[buffers]
    first = hops.prev < 0
    prev = np.maximum(hops.prev, 0)
    pair_input, pair_lane = hops.pair_input, hops.pair_lane
    hop_input = t["hop_input"]
    # A lane (link, VL) feeds exactly one input buffer: the buffer's drain caps that lane.
    input_starts = t["input_ptr"][:-1]
    converged = False
    iterations, damp, last_moved = 0, 0.0, np.inf
    averaging = avg_from <= max_iter
    sum_depart = np.zeros(len(depart)) if averaging else None
    sum_cap = np.zeros(n_lanes) if averaging else None
    for iterations in range(1, max_iter + 1):  # noqa: B007 (the count is reported)
        arrive = np.where(first, row_dem, depart[prev])
        d = np.bincount(hops.pair, weights=arrive, minlength=n_pairs)
        lane_dem[:] = np.bincount(pair_lane, weights=d, minlength=n_lanes)
        # VL arbitration: what each lane could carry if it asked for more.
        if hops.n_vls == 1:
            k = np.minimum(held_cap, lane_cap)
        else:
            asked = np.minimum(lane_dem, held_cap)
            mu = water_levels(hops.lane_link, asked, lane_w, cap, hops.n_links)[hops.lane_link]
            slack = np.maximum(cap - np.bincount(hops.lane_link, weights=asked, minlength=hops.n_links), 0.0)
            # where the link has room: its slack, or the lane's share if it asked for all (the others' give way)
            sib_group, sib_lane = hops.lane_siblings
            share = lane_w * water_levels(np.r_[sib_group, np.arange(n_lanes)],
                                          np.r_[asked[sib_lane], np.full(n_lanes, np.inf)],
                                          np.r_[lane_w[sib_lane], lane_w], cap[hops.lane_link], n_lanes)
            k = np.minimum(held_cap, np.where(np.isfinite(mu), lane_w * mu,
                                              np.maximum(asked + slack[hops.lane_link], share)))
        # Round robin among the input buffers of each lane.
        level = water_levels(pair_lane, d, None, k, n_lanes)
        grant = np.minimum(d, level[pair_lane])
        lane_slack = np.maximum(k - lane_dem, 0.0)
        # An input's share if it asked for all (round robin takes it from the others), where the lane has room.
        more = water_levels(np.r_[pair_lane, np.arange(n_lanes)], np.r_[d, np.full(n_lanes, np.inf)], None, k, n_lanes)
        avail = np.where(np.isfinite(level[pair_lane]), level[pair_lane],
                         np.maximum(d + lane_slack[pair_lane], more[pair_lane]))
        total_in = np.bincount(pair_input, weights=d, minlength=n_inputs)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.where(d > 0, grant / d, 1.0)
            drain = np.where(d > 0, avail * total_in[pair_input] / d, np.inf)
        # Head of line: a buffer moves at the pace of its most held output; it accepts what it drains.
        factor_in = np.minimum.reduceat(factor, input_starts) if n_pairs else factor
        drain_in = np.minimum.reduceat(drain, input_starts) if n_pairs else drain
        departed = arrive * factor_in[hop_input]
        hop_moved = float(np.abs(departed - depart).max(initial=0.0))  # a change on its way to the last hops
        depart[:] = departed
        new_cap = lane_cap.copy()
        new_cap[feeding] = np.minimum(lane_cap[feeding], drain_in[buffers])
        if damp:
            new_cap = held_cap + (1.0 - damp) * (new_cap - held_cap)
        new_rate = depart[hops.last]
        # A cap counts only where it binds (below what the lane is asked to carry).
        moved = max(float(np.abs(new_rate - rate).max(initial=0.0)),
                    float(np.abs(np.minimum(new_cap, lane_dem) - np.minimum(held_cap, lane_dem)).max(initial=0.0)))
        held_cap[:], rate[:] = new_cap, new_rate
        if averaging and iterations >= avg_from:
            sum_depart += depart
            sum_cap += held_cap
        if moved <= tol_abs and not hop_moved > tol_abs and iterations >= min_iter:
            converged = True
            break
        if moved >= last_moved * 0.9:  # not contracting: arbiters and buffers taking turns; damp the caps
            damp = damping
        last_moved = moved
    if converged or not averaging:
        return iterations, converged, 0
    # A limit cycle: the mean of the window's iterates, and the arrivals at its departures.
    averaged = max_iter - avg_from + 1
    depart[:] = sum_depart / averaged
    held_cap[:] = sum_cap / averaged
    rate[:] = depart[hops.last]
    arrive = np.where(first, row_dem, depart[prev])
    lane_dem[:] = np.bincount(pair_lane, weights=np.bincount(hops.pair, weights=arrive, minlength=n_pairs),
                              minlength=n_lanes)
    return iterations, converged, averaged


def _result(hops: Hops, cap, depart, held_cap, lane_cap, lane_dem, rate, link_rate, iterations, converged,
            averaged) -> CreditResult:
    """Per-link figures of the last (or mean) iterate."""
    lane_held = held_cap < lane_cap * (1 - 1e-9)
    link_cap = np.bincount(hops.lane_link, weights=np.minimum(held_cap, lane_cap), minlength=hops.n_links)
    touched = np.bincount(hops.lane_link, minlength=hops.n_links) > 0
    link_cap = np.where(touched, np.minimum(link_cap, cap), cap)
    held = np.bincount(hops.lane_link, weights=lane_held, minlength=hops.n_links) > 0
    # Roots: saturated by their own capacity (not held) and holding back a buffer that feeds them.
    full = np.bincount(hops.lane_link, weights=lane_dem, minlength=hops.n_links) >= cap * (1 - 1e-6)
    held_inputs = hops.lane_input[lane_held]  # the buffers the held lanes feed
    held_inputs = held_inputs[held_inputs >= 0]
    ptr = hops.tables["input_ptr"]  # pairs sorted by input: each held buffer's pairs
    pairs = concat_ranges(ptr[held_inputs], ptr[held_inputs + 1] - ptr[held_inputs])
    holds = np.zeros(hops.n_links, bool)
    holds[hops.lane_link[hops.pair_lane[pairs]]] = True
    root = full & ~held & holds
    return CreditResult(rate=rate, link_rate=link_rate, link_cap=link_cap, held=held, root=root,
                        iterations=int(iterations), converged=bool(converged), depart=depart, lane_cap=held_cap,
                        averaged=int(averaged))
