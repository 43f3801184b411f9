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

__all__ = ["max_min_fair", "split_incidence", "solve_paced", "group_max"]

_REL_EPS = 1e-9
_CHUNK = 256
_TINY = 1e-300


def _gather_rows(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the nonzeros of ``rows`` in a CSR matrix and, for each, its index into ``rows``."""
    start = indptr[rows]
    length = indptr[rows + 1] - start
    ends = length.cumsum()
    if len(rows) == 0 or ends[-1] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = np.repeat(np.arange(len(rows)), length)
    return np.arange(ends[-1]) + (start - ends + length)[owner], owner


def _fill(a: sp.csr_matrix, at: sp.csr_matrix, cap: np.ndarray, dem: np.ndarray,
          w: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Progressive filling of one priority class; returns ``(rate, bottleneck_link, rounds)``.

    Every growing flow has ``rate = w * T`` for the common fill level ``T``. A round
    finds the next level at which a link saturates or a flow reaches its demand,
    freezes those flows and removes their load from the links they cross. The
    load is updated incrementally, so the work is ``O(nnz + F log F)`` plus
    ``O(live links)`` per round.
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


def max_min_fair(
    incidence: sp.csr_matrix,
    capacity: np.ndarray,
    demand: np.ndarray | None = None,
    weight: np.ndarray | None = None,
    *,
    priority: np.ndarray | None = None,
    return_bottleneck: bool = False,
    info: dict | None = None,
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
    incidence : scipy.sparse matrix, shape ``(F, E)``
        ``A[i, e] > 0`` is the share of flow ``i``'s rate carried by link ``e``
        (1 for static routing, fractions for adaptive routing; see
        :func:`split_incidence`).
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
    a = sp.csr_matrix(incidence, dtype=np.float64, copy=True)
    a.eliminate_zeros()
    a.sum_duplicates()
    f_count, e_count = a.shape
    if a.nnz and (a.data < 0).any():
        raise SolverError("incidence has negative entries")
    cap = np.asarray(capacity, dtype=np.float64)
    if cap.shape != (e_count,):
        raise SolverError(f"capacity has shape {cap.shape}, expected ({e_count},)")
    if (cap < 0).any() or np.isnan(cap).any():
        raise SolverError("negative or NaN link capacity")
    dem = np.full(f_count, np.inf) if demand is None else np.asarray(demand, dtype=np.float64)
    w = np.ones(f_count) if weight is None else np.asarray(weight, dtype=np.float64)
    if dem.shape != (f_count,) or w.shape != (f_count,):
        raise SolverError(f"demand and weight must have shape ({f_count},)")
    if not (w > 0).all() or not (dem >= 0).all():
        raise SolverError("weights must be positive and demands non-negative")
    if priority is None:
        rate, bott, rounds = _fill(a, a.T.tocsr(), cap, dem, w)
    else:
        prio = np.asarray(priority)
        if prio.shape != (f_count,):
            raise SolverError(f"priority must have shape ({f_count},)")
        rate = np.zeros(f_count)
        bott = np.full(f_count, -1, dtype=np.int64)
        left = cap.copy()
        rounds = 0
        for p in np.unique(prio)[::-1]:
            rows = np.flatnonzero(prio == p)
            sub = a[rows]
            r, b, n = _fill(sub, sub.T.tocsr(), left, dem[rows], w[rows])
            rate[rows], bott[rows] = r, b
            rounds += n
            left = np.maximum(left - np.asarray(sub.T @ r).ravel(), 0.0)
    if info is not None:
        info["rounds"] = rounds
    return (rate, bott) if return_bottleneck else rate


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
    ok = g >= 0
    np.maximum.at(out, g[ok], values[ok])
    return out


def solve_paced(
    incidence: sp.csr_matrix,
    capacity: np.ndarray,
    demand: np.ndarray,
    weight: np.ndarray,
    gbits: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    priority: np.ndarray | None = None,
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
    incidence, capacity, demand, weight, priority :
        As for :func:`max_min_fair`.
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
    g = np.asarray(group, dtype=np.int64)
    bits = np.asarray(gbits, dtype=np.float64)

    def durations(rate: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(bits > 0, bits / rate, 0.0)
        return group_max(np.where(np.isnan(t), np.inf, t), g, n_groups)

    rate1, bott = max_min_fair(incidence, capacity, demand, weight, priority=priority, return_bottleneck=True)
    t1 = durations(rate1)
    t_of = np.append(t1, np.inf)[np.where(g >= 0, g, n_groups)]
    with np.errstate(divide="ignore", invalid="ignore"):
        pace = np.where(bits > 0, bits / t_of, 0.0)
    grouped = g >= 0
    rate = np.where(grouped, np.minimum(pace, rate1), rate1)
    free = np.flatnonzero(~grouped)
    if free.size and grouped.any():
        inc = sp.csr_matrix(incidence)
        left = np.maximum(np.asarray(capacity, dtype=np.float64) - np.asarray(inc[grouped].T @ rate[grouped]).ravel(),
                          0.0)
        prio = None if priority is None else np.asarray(priority)[free]
        rate[free] = max_min_fair(inc[free], left, np.asarray(demand)[free], np.asarray(weight)[free], priority=prio)
    return rate, bott, durations(rate)
