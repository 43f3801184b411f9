"""Weighted max-min fair rates of flows over shared links (progressive filling)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .errors import SolverError

__all__ = ["max_min_fair"]

_REL_EPS = 1e-9


def max_min_fair(
    incidence: sp.csr_matrix,
    capacity: np.ndarray,
    demand: np.ndarray | None = None,
    weight: np.ndarray | None = None,
) -> np.ndarray:
    """Exact weighted max-min fair rates by progressive filling.

    All unfrozen flows grow together, flow ``i`` at speed ``weight[i]``, until a
    link saturates or a flow reaches its demand; flows on saturated links and
    flows at their demand freeze; repeat. The result is the unique allocation in
    which every flow is at its demand or crosses a saturated link on which its
    ``rate / weight`` is the largest.

    Parameters
    ----------
    incidence : scipy.sparse.csr_matrix, shape ``(F, E)``
        Nonzero where flow ``i`` crosses link ``e`` (values are ignored).
    capacity : ndarray, float, shape ``(E,)``
        Link capacities (Gb/s).
    demand : ndarray, float, shape ``(F,)``, optional
        Upper bound of each flow's rate; ``inf`` (the default) for greedy flows.
    weight : ndarray, float, shape ``(F,)``, optional
        Positive share weights (default 1).

    Returns
    -------
    ndarray, float64, shape ``(F,)``

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix([[1, 1], [1, 0], [0, 1]])
    >>> max_min_fair(m, np.array([10.0, 4.0])).tolist()
    [2.0, 8.0, 2.0]
    """
    a = sp.csr_matrix(incidence, dtype=np.float64, copy=True)
    a.data[:] = 1.0
    f_count, e_count = a.shape
    cap = np.asarray(capacity, dtype=np.float64)
    if cap.shape != (e_count,):
        raise SolverError(f"capacity has shape {cap.shape}, expected ({e_count},)")
    if (cap < 0).any():
        raise SolverError("negative link capacity")
    dem = np.full(f_count, np.inf) if demand is None else np.asarray(demand, dtype=np.float64)
    w = np.ones(f_count) if weight is None else np.asarray(weight, dtype=np.float64)
    if dem.shape != (f_count,) or w.shape != (f_count,):
        raise SolverError(f"demand and weight must have shape ({f_count},)")
    if (w <= 0).any() or (dem < 0).any():
        raise SolverError("weights must be positive and demands non-negative")
    at = a.T.tocsr()
    rate = np.zeros(f_count)
    free = cap.copy()
    active = dem > 0
    # A flow that crosses no link is only bounded by its demand.
    unbounded = active & (np.diff(a.indptr) == 0)
    rate[unbounded] = dem[unbounded]
    active &= ~unbounded
    tol = _REL_EPS * np.maximum(cap, 1.0)
    while active.any():
        load = at @ (w * active)  # summed weight of growing flows per link
        used = load > 0
        link_t = np.full(e_count, np.inf)
        link_t[used] = free[used] / load[used]
        flow_t = np.where(active, (dem - rate) / w, np.inf)
        step = min(link_t.min(), flow_t.min())
        if not np.isfinite(step):
            raise SolverError("a greedy flow crosses only links of infinite capacity")
        rate[active] += w[active] * step
        free -= load * step
        saturated = used & (free <= tol)
        free[saturated] = 0.0
        hit = (a @ saturated.astype(np.float64)) > 0
        active &= ~hit & (rate < dem * (1 - _REL_EPS))
    return rate
