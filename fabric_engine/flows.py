"""Weighted max-min fair rates of flows over shared links, with QoS classes.

The solver works on a sparse flows x links matrix ``A`` (CSR): ``A[i, e]`` is the
share of flow ``i``'s rate that crosses directed link ``e``. Static routing gives
0/1 entries. Adaptive routing, which spreads a flow evenly over its minimal paths,
gives fractional entries: a flow split over ``k`` spine up-ports has ``1/k`` on each
up-link and ``1`` on its host links. :func:`split_incidence` builds that matrix
from a sub-flow (one row per path) incidence and a sub-flow -> flow map, so a
routing engine may hand over either form.

QoS comes in as two inputs: ``weight`` (the VL arbitration weight of the flow's
VL) and ``priority`` (strict classes: 1 for VLs of the high-priority table, 0 for
the low one). :func:`fabric_engine.policy.enforce` derives both from the SL of
each flow and OpenSM's ``qos_sl2vl`` / ``qos_vlarb_*`` tables (IBA 7.6.6, 7.6.9).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .errors import SolverError
from .incidence import Incidence

try:  # built by ``pip install -e .`` (setup.py); the numpy fill below gives the same rates, slower
    from . import _maxmin
except ImportError:  # pragma: no cover - a checkout whose extension was not built
    _maxmin = None

__all__ = ["max_min_fair", "max_min_fair_alone", "split_incidence", "solve_paced", "paced", "group_max",
           "group_duration", "transfer_times", "slowest_bottlenecks", "COMPILED", "KERNELS"]

_REL_EPS = 1e-9
_CHUNK = 256
_TINY = 1e-300
#: The compiled fill is available (``fabric_engine._maxmin``).
COMPILED = _maxmin is not None
#: Implementations of progressive filling :func:`max_min_fair` can use.
KERNELS = ("auto", "compiled", "numpy")


def _gather_rows(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the nonzeros of ``rows`` in a CSR matrix and, for each, its index into ``rows``."""
    start = indptr[rows]
    length = indptr[rows + 1] - start
    ends = length.cumsum()
    if len(rows) == 0 or ends[-1] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = np.repeat(np.arange(len(rows)), length)
    return np.arange(ends[-1]) + (start - ends + length)[owner], owner


def _fill_numpy(a: sp.csr_matrix, at: sp.csr_matrix, cap: np.ndarray, dem: np.ndarray,
                w: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Progressive filling in numpy (the plain vectorized form); returns ``(rate, bottleneck_link, rounds)``.

    Every growing flow has ``rate = w * T`` for the common fill level ``T``. A round
    finds the next level at which a link saturates or a flow reaches its demand,
    freezes those flows and removes their load from the links they cross. The
    load is updated incrementally, so the work is ``O(nnz + F log F)`` plus
    ``O(live links)`` per round.

    Measured (``tests/bench/bench_scale.py``): on 32,768 loaded GPUs (2.1 million flows,
    10 million entries, 196,608 links) a fill takes about 1,500 rounds, and the
    ``O(live links)`` numpy calls of each round, not the entries, cost nearly all
    of its seconds. Fewer rounds are not to be had: links and flows that saturate
    at the same level already freeze in one round, and the levels themselves are
    distinct. So :func:`_fill_compiled` runs the same rounds in C
    (``fabric_engine/_maxmin.c``), where a round costs only the links it changes.
    This version stays as the fallback of an unbuilt checkout and as the
    reference the compiled one is tested and benchmarked against.
    """
    f_count, e_count = a.shape
    rate = np.zeros(f_count)
    bott = np.full(f_count, -1, dtype=np.int64)
    active = dem > 0
    unbounded = active & (np.diff(a.indptr) == 0)
    rate[unbounded] = dem[unbounded]
    active &= ~unbounded
    # Per nonzero: share x weight of its flow; per link: load and number of growing flows.
    row = np.repeat(np.arange(f_count), np.diff(a.indptr))
    aw = a.data * w[row]
    grow = active[row]
    load = np.bincount(a.indices, weights=aw * grow, minlength=e_count)
    count = np.bincount(a.indices[grow], minlength=e_count).astype(np.int64)
    # Live links (crossed by growing flows), their free capacity and load, kept compact.
    live = np.flatnonzero(count > 0)
    free_l = np.asarray(cap, dtype=np.float64)[live].copy()
    load_l = np.maximum(load[live], _TINY)
    # Flows with a finite demand, in the order they reach it (as a fill level).
    idx = np.flatnonzero(active & np.isfinite(dem))
    level_at_demand = dem[idx] / w[idx]
    order = np.argsort(level_at_demand, kind="stable")
    by_demand, demand_level = idx[order], level_at_demand[order]
    ptr, n_sorted = 0, len(by_demand)
    stamp = np.zeros(f_count, dtype=np.int64)
    level = 0.0
    rounds = 0
    remaining = int(active.sum())
    while remaining:
        rounds += 1
        next_dem = np.inf
        while ptr < n_sorted:  # skip flows frozen meanwhile, chunk by chunk
            chunk = active[by_demand[ptr:ptr + _CHUNK]]
            if chunk.any():
                ptr += int(chunk.argmax())
                next_dem = demand_level[ptr]
                break
            ptr += len(chunk)
        with np.errstate(divide="ignore", invalid="ignore"):
            to_sat = free_l / load_l  # fill still possible on each live link
        k = int(to_sat.argmin()) if len(live) else -1
        step = to_sat[k] if k >= 0 else np.inf
        delta = min(step, next_dem - level)
        if not np.isfinite(delta):
            raise SolverError("a greedy flow crosses only links of infinite capacity")
        free_l -= load_l * delta
        level += delta
        sat = to_sat <= delta + _REL_EPS * level
        if k >= 0 and step <= delta:
            sat[k] = True
        saturated = live[sat]
        if len(saturated) == 1:
            s = saturated[0]
            hit = at.indices[at.indptr[s]:at.indptr[s + 1]]
            hit = hit[active[hit]]
            bott[hit] = s
        elif len(saturated):
            pos, owner = _gather_rows(at.indptr, saturated)
            hit = at.indices[pos]
            keep = active[hit]
            hit, link_of = hit[keep], saturated[owner[keep]]
            bott[hit] = link_of
            stamp[hit] = np.arange(len(hit))  # keep one copy of flows on several saturated links
            hit = hit[stamp[hit] == np.arange(len(hit))]
        else:
            hit = np.zeros(0, dtype=np.int64)
        frozen = hit
        if ptr < n_sorted:
            stop = max(int(np.searchsorted(demand_level, level * (1 + _REL_EPS), side="right")), ptr)
            if stop > ptr:
                at_demand = by_demand[ptr:stop]
                at_demand = at_demand[active[at_demand]]
                ptr = stop
                bott[at_demand] = -1
                both = np.concatenate([hit, at_demand])
                stamp[both] = np.arange(len(both))
                frozen = both[stamp[both] == np.arange(len(both))]
        rate[frozen] = np.minimum(w[frozen] * level, dem[frozen])
        active[frozen] = False
        remaining -= len(frozen)
        # Remove the frozen flows' load from their links; drop links left without growing flows.
        pos, _ = _gather_rows(a.indptr, frozen)
        links = a.indices[pos]
        np.subtract.at(load, links, aw[pos])
        np.subtract.at(count, links, 1)
        keep = ~sat & (count[live] > 0)
        live, free_l = live[keep], free_l[keep]
        load_l = np.maximum(load[live], _TINY)
    return rate, bott, rounds


def _fill_compiled(inc: Incidence, cap: np.ndarray, dem: np.ndarray, w: np.ndarray,
                   out: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """The fill of :func:`_fill_numpy` in C (``fabric_engine/_maxmin.c``): same rounds, same rates.

    Why C rather than numba, measured here: numba 0.68 supports the pinned numpy,
    but it brings llvmlite (185 MiB unpacked with numba) and compiles on the first
    call of every process: importing it took 1.2 s and compiling a 30-line version
    of this loop 5.3 s, seconds every engine would spend before its first frame
    (or a cache written into the source tree). A 600-line C file builds with the
    package (``pip install -e .``, needs only gcc and Python's headers), loads in
    milliseconds, and releases the GIL so the web server keeps serving while the
    engine solves.
    """
    f, e = inc.shape
    rate, bott = (np.empty(f), np.empty(f, dtype=np.int64)) if out is None else out
    finite = np.flatnonzero(np.isfinite(dem) & (dem > 0))
    level = dem[finite] / w[finite]
    order = np.argsort(level, kind="stable")
    a, b = inc.blocks()
    with a.scratch(_maxmin.work_size(f, e)) as work:
        rounds = _maxmin.fill(a.indptr, a.indices, a.data, a.t_indptr, a.t_rows,
                              b.indptr, b.indices, b.data, b.t_indptr, b.t_rows,
                              cap, dem, w, finite[order].astype(np.int64, copy=False), level[order], rate, bott, work)
    if rounds < 0:
        raise SolverError("a greedy flow crosses only links of infinite capacity")
    return rate, bott, rounds


class _Filler:
    """Runs fills on one incidence with the chosen kernel (the numpy one transposes the matrix once)."""

    def __init__(self, inc: Incidence, kernel: str) -> None:
        if kernel not in KERNELS:
            raise SolverError(f"kernel {kernel!r}: one of {', '.join(KERNELS)}")
        if kernel == "compiled" and not COMPILED:
            raise SolverError("the compiled solver is not built: run `pip install -e .` (or `make setup`)")
        self.inc = inc
        # the compiled fill keeps a row's start in 32 bits and its length in 16 (see _maxmin.c)
        fits = all(b.nnz < 2**32 and b.longest < 2**16 for b in inc.blocks())
        if kernel == "compiled" and not fits:
            raise SolverError("the compiled solver takes rows of at most 65,535 entries and 2^32 entries a block")
        self.compiled = kernel != "numpy" and COMPILED and fits
        self._csr = None

    def __call__(self, cap: np.ndarray, dem: np.ndarray, w: np.ndarray,
                 out: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        if self.compiled:
            return _fill_compiled(self.inc, cap, dem, w, out)
        if self._csr is None:
            a = self.inc.tocsr()
            self._csr = (a, a.T.tocsr())
        rate, bott, rounds = _fill_numpy(*self._csr, cap, dem, w)
        if out is None:
            return rate, bott, rounds
        out[0][:], out[1][:] = rate, bott
        return out[0], out[1], rounds


def max_min_fair(
    incidence: sp.csr_matrix | Incidence,
    capacity: np.ndarray,
    demand: np.ndarray | None = None,
    weight: np.ndarray | None = None,
    *,
    priority: np.ndarray | None = None,
    return_bottleneck: bool = False,
    info: dict | None = None,
    kernel: str = "auto",
    out: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Exact weighted max-min fair rates by progressive filling.

    All unfrozen flows grow together, flow ``i`` at speed ``weight[i]``, until a
    link saturates or a flow reaches its demand; flows on saturated links and
    flows at their demand freeze; repeat. The result is the unique allocation in
    which every flow is at its demand or crosses a saturated link on which its
    ``rate / weight`` is the largest. With ``priority``, classes are filled from
    the highest value down, each on the capacity the classes above it left.

    Parameters
    ----------
    incidence : scipy.sparse matrix or Incidence, shape ``(F, E)``
        ``A[i, e] > 0`` is the share of flow ``i``'s rate carried by link ``e``
        (1 for static routing, fractions for adaptive routing; see
        :func:`split_incidence`). An :class:`~fabric_engine.incidence.Incidence`
        is used as it is (its transpose is kept between calls).
    capacity : ndarray, float, shape ``(E,)``
        Link capacities (Gb/s); ``inf`` allowed.
    demand : ndarray, float, shape ``(F,)``, optional
        Upper bound of each flow's rate; ``inf`` (the default) for greedy flows.
    weight : ndarray, float, shape ``(F,)``, optional
        Positive share weights (default 1).
    priority : ndarray, int, shape ``(F,)``, optional
        Strict priority class of each flow; higher is served first (default: one class).
    return_bottleneck : bool
        Also return, per flow, the directed link whose saturation froze it
        (int64, ``-1`` for flows at their demand).
    info : dict, optional
        Filled with ``rounds``, the number of filling rounds (for benchmarks).
    kernel : {"auto", "compiled", "numpy"}
        The fill's implementation: compiled C when built (``auto``), or numpy.
    out : (ndarray, ndarray), optional
        Arrays the rates (float64 ``(F,)``) and bottlenecks (int64 ``(F,)``) are written into, e.g. kept
        by a caller between ticks: at 32,768 GPUs, fresh ones cost their page faults every time.

    Returns
    -------
    ndarray, float64, shape ``(F,)``
        The rates (and the bottleneck links with ``return_bottleneck``).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix([[1, 1], [1, 0], [0, 1]])
    >>> max_min_fair(m, np.array([10.0, 4.0])).tolist()
    [2.0, 8.0, 2.0]
    >>> max_min_fair(m, np.array([10.0, 4.0]), weight=np.array([1.0, 1.0, 3.0])).tolist()
    [1.0, 9.0, 3.0]
    """
    inc = Incidence.of(incidence)
    f_count, e_count = inc.shape
    cap = np.ascontiguousarray(capacity, dtype=np.float64)
    if cap.shape != (e_count,):
        raise SolverError(f"capacity has shape {cap.shape}, expected ({e_count},)")
    if (cap < 0).any() or np.isnan(cap).any():
        raise SolverError("negative or NaN link capacity")
    dem = np.full(f_count, np.inf) if demand is None else np.ascontiguousarray(demand, dtype=np.float64)
    w = np.ones(f_count) if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
    if dem.shape != (f_count,) or w.shape != (f_count,):
        raise SolverError(f"demand and weight must have shape ({f_count},)")
    if f_count and not (w.min() > 0 and dem.min() >= 0):  # NaN fails both; no temporaries of the flows' size
        raise SolverError("weights must be positive and demands non-negative")
    fill = _Filler(inc, kernel)
    if out is not None and (out[0].shape != (f_count,) or out[0].dtype != np.float64 or out[1].shape != (f_count,)
                            or out[1].dtype != np.int64 or not all(o.flags.c_contiguous for o in out)):
        raise SolverError(f"out must be contiguous float64 and int64 arrays of shape ({f_count},)")
    if priority is None:
        rate, bott, rounds = fill(cap, dem, w, out)
    else:
        prio = np.asarray(priority)
        if prio.shape != (f_count,):
            raise SolverError(f"priority must have shape ({f_count},)")
        rate = np.zeros(f_count)
        bott = np.full(f_count, -1, dtype=np.int64)
        left = cap.copy()
        rounds = 0
        classes = np.unique(prio)[::-1]
        for p in classes:  # each class on what the classes above it left; the others sit out (demand 0)
            mask = prio == p
            r, b, n = fill(left, np.where(mask, dem, 0.0), w) if len(classes) > 1 else fill(left, dem, w)
            rate[mask], bott[mask] = r[mask], b[mask]
            rounds += n
            left = np.maximum(left - inc.rmatvec(np.where(mask, r, 0.0)), 0.0)
        if out is not None:
            out[0][:], out[1][:] = rate, bott
            rate, bott = out
    if info is not None:
        info["rounds"] = rounds
    return (rate, bott) if return_bottleneck else rate


def max_min_fair_alone(
    incidence: sp.csr_matrix | Incidence,
    capacity: np.ndarray,
    demand: np.ndarray,
    weight: np.ndarray,
    group: np.ndarray,
    *,
    kernel: str = "auto",
) -> np.ndarray:
    """Max-min fair rates of every group of flows alone on the idle fabric (flows of group -1 get 0).

    The same as one solve of the block-diagonal matrix that gives every group its
    own copy of the links, without that matrix's ``groups x E`` columns (at 128 jobs
    on 196,608 directed links, 25 million columns the solver would keep state for).

    Examples
    --------
    >>> m = sp.csr_matrix([[1, 0], [1, 1], [0, 1]])
    >>> max_min_fair_alone(m, np.array([10.0, 4.0]), np.full(3, np.inf), np.ones(3), np.array([0, 1, 1])).tolist()
    [10.0, 2.0, 2.0]
    """
    a = Incidence.of(incidence).tocsr()
    g = np.asarray(group, dtype=np.int64)
    dem = np.asarray(demand, dtype=np.float64)
    w = np.asarray(weight, dtype=np.float64)
    rate = np.zeros(a.shape[0])
    order = np.argsort(g, kind="stable")  # rows of a group together (already so for jobs stacked job after job)
    if not (np.diff(order) > 0).all():
        a = a[order]
    gs = g[order]
    bounds = np.flatnonzero(np.diff(gs, prepend=-2, append=-2))
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):  # one solve per group (job), not per flow
        if gs[lo] < 0:
            continue
        p0, p1 = a.indptr[lo], a.indptr[hi]
        sub = sp.csr_matrix((a.data[p0:p1], a.indices[p0:p1], a.indptr[lo:hi + 1] - p0), shape=(hi - lo, a.shape[1]))
        rows = order[lo:hi]
        rate[rows] = max_min_fair(sub, capacity, dem[rows], w[rows], kernel=kernel)
    return rate


def split_incidence(sub_incidence: sp.spmatrix, owner: np.ndarray, n_flows: int,
                    share: np.ndarray | None = None) -> sp.csr_matrix:
    """Flows x links incidence of flows split over several paths (sub-flows).

    Parameters
    ----------
    sub_incidence : scipy.sparse matrix, shape ``(S, E)``
        One row per sub-flow (path), 1 on the links it crosses.
    owner : ndarray, int, shape ``(S,)``
        Flow of every sub-flow (``0..n_flows-1``).
    n_flows : int
    share : ndarray, float, shape ``(S,)``, optional
        Fraction of its flow each sub-flow carries; default an even split over
        the flow's sub-flows. Shares of a flow should sum to 1.

    Returns
    -------
    scipy.sparse.csr_matrix, float64, shape ``(n_flows, E)``
        ``sum_s share[s] * sub_incidence[s]`` per flow: the fraction of the flow's
        rate on every link, as :func:`max_min_fair` takes it. The rate of sub-flow
        ``s`` is then ``share[s] * rate[owner[s]]``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> sub = sp.csr_matrix([[1, 1, 0], [1, 0, 1]])
    >>> split_incidence(sub, np.array([0, 0]), 1).toarray().tolist()
    [[1.0, 0.5, 0.5]]
    """
    own = np.asarray(owner, dtype=np.int64)
    s = sub_incidence.shape[0]
    if own.shape != (s,):
        raise SolverError(f"owner has shape {own.shape}, expected ({s},)")
    if s and (own.min() < 0 or own.max() >= n_flows):
        raise SolverError(f"owner names a flow outside 0..{n_flows - 1}")
    if share is None:
        share = 1.0 / np.bincount(own, minlength=n_flows)[own]
    mix = sp.csr_matrix((np.asarray(share, dtype=np.float64), (own, np.arange(s))), shape=(n_flows, s))
    out = (mix @ sp.csr_matrix(sub_incidence, dtype=np.float64)).tocsr()
    out.sum_duplicates()
    return out


def group_max(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Largest value per group, float64 ``(n_groups,)`` (0 for empty groups; rows with group -1 ignored)."""
    out = np.zeros(n_groups)
    g = np.asarray(group, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64)
    if COMPILED:  # np.maximum.at costs 50 ms on the 2 million flows of 32,768 GPUs; the C loop 5
        _maxmin.group_max(np.ascontiguousarray(v), None, np.ascontiguousarray(g), out)
        return out
    ok = g >= 0
    np.maximum.at(out, g[ok], v[ok])
    return out


def transfer_times(gbits: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Seconds each flow needs for its ``gbits`` at ``rate``: 0 without bits, ``inf`` at rate 0, float64 ``(F,)``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(gbits > 0, gbits / rate, 0.0)
    return np.where(np.isnan(t), np.inf, t)


def group_duration(gbits: np.ndarray, rate: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Seconds until the slowest flow of every group has moved its ``gbits``: ``group_max(transfer_times)``."""
    if COMPILED:  # one pass, no temporaries of the flows' size
        out = np.zeros(n_groups)
        _maxmin.group_max(np.ascontiguousarray(gbits, dtype=np.float64), np.ascontiguousarray(rate, dtype=np.float64),
                          np.ascontiguousarray(group, dtype=np.int64), out)
        return out
    return group_max(transfer_times(gbits, rate), group, n_groups)


def slowest_bottlenecks(gbits: np.ndarray, rate: np.ndarray, group: np.ndarray, t_min: np.ndarray,
                        bottleneck: np.ndarray, n_links: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``(group, link)`` pairs: the bottlenecks of the flows of each group that take at least ``t_min``.

    Flows of group -1, without a bottleneck (-1) or faster than their group's ``t_min`` are left out.
    Returns ``(group, link)``, int64, sorted by group then link.
    """
    g = np.ascontiguousarray(group, dtype=np.int64)
    n_groups = len(t_min)
    if COMPILED and n_groups * n_links <= 1 << 33:  # one pass, distinct pairs as met (a bit per group x link, 1 GiB
        # at most): no sort of the flows, no mask to scan
        seen = np.zeros(-(-n_groups * n_links // 8), dtype=np.uint8)
        out = np.empty(min(len(g), n_groups * n_links), dtype=np.int64)
        count = _maxmin.slowest_pairs(np.ascontiguousarray(gbits, dtype=np.float64),
                                      np.ascontiguousarray(rate, dtype=np.float64), g,
                                      np.ascontiguousarray(t_min, dtype=np.float64),
                                      np.ascontiguousarray(bottleneck, dtype=np.int64), n_links, seen, out)
        key = np.sort(out[:count])
    else:
        t_of = np.append(np.asarray(t_min, dtype=np.float64), np.inf)[np.where(g >= 0, g, n_groups)]
        slow = (g >= 0) & (bottleneck >= 0) & (transfer_times(gbits, rate) >= t_of)
        key = np.unique(g[slow] * n_links + bottleneck[slow])
    return key // n_links, key % n_links


def paced(rate1: np.ndarray, bits: np.ndarray, g: np.ndarray, t_group: np.ndarray,
           out: np.ndarray | None = None) -> np.ndarray:
    """Grouped flows at ``min(bits / t_group, rate1)`` (0 without bits), the others at ``rate1`` (``out`` may be it)."""
    out = np.empty(len(rate1)) if out is None else out
    if COMPILED:
        _maxmin.paced(np.ascontiguousarray(rate1), bits, g, np.ascontiguousarray(t_group), out)
        return out
    t_of = np.append(t_group, np.inf)[np.where(g >= 0, g, len(t_group))]
    with np.errstate(divide="ignore", invalid="ignore"):
        pace = np.where(bits > 0, bits / t_of, 0.0)
    out[:] = np.where(g >= 0, np.minimum(pace, rate1), rate1)
    return out


def solve_paced(
    incidence: sp.csr_matrix | Incidence,
    capacity: np.ndarray,
    demand: np.ndarray,
    weight: np.ndarray,
    gbits: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    priority: np.ndarray | None = None,
    *,
    kernel: str = "auto",
    out: tuple[np.ndarray, np.ndarray] | None = None,
    paced_load=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rates of flows that move in lock step within groups (the transfers of one collective).

    A collective ends when its slowest transfer does, after ``T = max(gbits / rate)``
    over its group, so a transfer cannot usefully run faster than its pace
    ``gbits / T``. Pass 1 solves all flows greedily and gives ``T`` and each flow's
    bottleneck. Pass 2 runs every grouped flow at its pace (at most its pass-1
    rate, so the result stays feasible and every collective still takes ``T``)
    and gives the independent flows their max-min fair rates on the capacity the
    paced flows leave. (Re-solving everything with paced demands instead is not
    self-consistent: max-min rates are not monotone in other flows' demands, so a
    collective's slowest transfer could drop below its own pace.)

    Parameters
    ----------
    incidence, capacity, demand, weight, priority, kernel :
        As for :func:`max_min_fair`.
    out : (ndarray, ndarray), optional
        As for :func:`max_min_fair`: the rate and bottleneck arrays returned.
    paced_load : callable, optional
        ``paced_load(duration, cols)``: the load the grouped flows, paced to ``gbits / duration`` of their
        group, put on the columns ``cols`` (float64 ``(len(cols),)``), for a caller that knows it without a
        walk over those columns (the emulator keeps every job's gigabits per link,
        :meth:`fabric_engine.incidence.Block.group_sums`). Default: summed from the rows.
    gbits : ndarray, float, shape ``(F,)``
        Gigabits each flow moves per collective (0 for flows outside a group).
    group : ndarray, int, shape ``(F,)``
        Group of every flow, ``0..n_groups-1``, or -1 for independent flows.

    Returns
    -------
    rate : ndarray, float64, ``(F,)``
    bottleneck : ndarray, int64, ``(F,)``
        Bottleneck links of pass 1 (see :func:`max_min_fair`).
    duration : ndarray, float64, ``(n_groups,)``
        Seconds one collective of every group takes (``inf`` if a flow of it gets nothing).

    Examples
    --------
    >>> m = sp.csr_matrix([[1, 0], [0, 1], [0, 1]])
    >>> rate, _, t = solve_paced(m, np.array([10.0, 10.0]), np.full(3, np.inf), np.ones(3),
    ...                          np.array([10.0, 10.0, 0.0]), np.array([0, 0, -1]), 1)
    >>> rate.tolist(), t.tolist()
    ([5.0, 5.0, 5.0], [2.0])
    """
    g = np.ascontiguousarray(group, dtype=np.int64)
    bits = np.ascontiguousarray(gbits, dtype=np.float64)
    inc = Incidence.of(incidence)
    rate1, bott = max_min_fair(inc, capacity, demand, weight, priority=priority, return_bottleneck=True, kernel=kernel,
                               out=out)
    t_group = group_duration(bits, rate1, g, n_groups)
    rate = paced(rate1, bits, g, t_group, out=rate1)  # pass 1's rates are not needed any more: paced in place
    grouped = g >= 0
    free = np.flatnonzero(~grouped & (np.asarray(demand) > 0))  # flows without demand keep their 0
    if free.size and grouped.any():
        # What the paced flows leave, on the links the free flows cross (the rest of the fabric does not matter).
        sub = inc.rows(free)
        cols = np.unique(sub.indices)
        left = np.asarray(capacity, dtype=np.float64).copy()
        used = inc.rmatvec_columns(rate, cols, group=g) if paced_load is None else paced_load(t_group, cols)
        left[cols] = np.maximum(left[cols] - used, 0.0)
        prio = None if priority is None else np.asarray(priority)[free]
        rate[free] = max_min_fair(sub, left, np.asarray(demand)[free], np.asarray(weight)[free],
                                  priority=prio, kernel=kernel)
    # Every grouped flow now runs at bits / T (rate1 >= pace by T's definition), so the collectives still take T:
    # the pass-1 durations are the answer (recomputing them from the paced rates differs by rounding only).
    return rate, bott, t_group
