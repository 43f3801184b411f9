"""Adaptive routing as a path model: every flow split evenly over its minimal next hops.

With adaptive routing (AR) a switch picks, per packet or flowlet, among the output
ports that lie on a shortest path; in a fat tree these are the up ports while
climbing (going down is unique). On average a flow is therefore spread evenly over
its minimal next hops at every switch. :func:`adaptive_paths` returns that average
as a fractional flows x directed-links matrix, the same shape as
:meth:`Routing.paths`, for the congestion solver to use instead of static LFT paths.

The split is computed once per (source switch, destination switch) pair that the
flows need -- a breadth-first sweep towards each destination switch that carries
the fractions hop by hop as sparse matrix products -- and flows pick up their row.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import RoutingError
from ..topology import Fabric
from .graph import switch_distances

__all__ = ["adaptive_paths", "switch_pair_split"]


def switch_pair_split(fabric: Fabric, src_sw: np.ndarray, dst_sw: np.ndarray,
                      dist: np.ndarray | None = None) -> sp.csr_matrix:
    """Average link use of AR between switch pairs, CSR float64 ``[len(src_sw), 2L]``.

    Row ``i`` holds, for every directed switch-to-switch link, the fraction of the traffic
    from switch ``src_sw[i]`` to switch ``dst_sw[i]`` (switch indices) that crosses it.
    """
    f = fabric
    dist = switch_distances(f) if dist is None else dist
    si = f.switch_index
    d = np.flatnonzero((si[f.dl_src] >= 0) & (si[f.dl_dst] >= 0))
    a, b = si[f.dl_src[d]].astype(np.int64), si[f.dl_dst[d]].astype(np.int64)
    s_count = f.num_switches
    n = len(src_sw)
    rows, cols, vals = [], [], []
    for t in np.unique(dst_sw):
        sel = np.flatnonzero(dst_sw == t)
        dt = dist[:, t].astype(np.int64)
        minimal = (dt[a] >= 1) & (dt[b] == dt[a] - 1)  # link a -> b gets one hop closer to t
        la, lb, ld = a[minimal], b[minimal], d[minimal]
        n_next = np.bincount(la, minlength=s_count).astype(np.float64)
        # Transition from link-source switch to link: fraction 1 / (minimal links out of it).
        step = sp.csr_matrix((1.0 / n_next[la], (la, np.arange(len(la)))), shape=(s_count, len(la)))
        arrive = sp.csr_matrix((np.ones(len(la)), (np.arange(len(la)), lb)), shape=(len(la), s_count))
        at = sp.csr_matrix((np.ones(len(sel)), (np.arange(len(sel)), src_sw[sel])), shape=(len(sel), s_count))
        use = sp.csr_matrix((len(sel), len(la)))
        for _ in range(int(dt.max(initial=0))):
            on_link = at @ step
            if on_link.nnz == 0:
                break
            use = use + on_link
            at = on_link @ arrive
            at = at.multiply(np.asarray((np.arange(s_count) != t), dtype=np.float64)[None, :]).tocsr()
        use = use.tocoo()
        rows.append(sel[use.row])
        cols.append(ld[use.col])
        vals.append(use.data)
    if not rows:
        return sp.csr_matrix((n, 2 * f.num_links))
    m = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, 2 * f.num_links))
    m.sum_duplicates()
    return m


def adaptive_paths(fabric: Fabric, src_hosts: np.ndarray, dst_hosts: np.ndarray,
                   dist: np.ndarray | None = None) -> sp.csr_matrix:
    """Fractional incidence of host flows under adaptive routing, CSR float64 ``[F, 2L]``.

    Each row sums the host's cable to its switch (1.0), the AR split between the two
    switches, and the destination switch's cable to the host (1.0). A flow whose hosts
    share a switch uses only the two host cables; a flow between unconnected or
    unreachable hosts gets an empty row.

    >>> from fabric_engine.topology.generate import fat_tree
    >>> f = fat_tree(hosts=8, radix=4)
    >>> m = adaptive_paths(f, f.hosts[:1], f.hosts[-1:])
    >>> sorted(set(np.round(m.data, 2).tolist()))   # host cables 1.0, each of the 2 spines 0.5
    [0.5, 1.0]
    """
    f = fabric
    src = np.asarray(src_hosts, dtype=np.int64)
    dst = np.asarray(dst_hosts, dtype=np.int64)
    if src.shape != dst.shape:
        raise RoutingError("src_hosts and dst_hosts differ in length")
    dist = switch_distances(f) if dist is None else dist
    up = f.port_out_link[f.port_offset[src]]  # host -> switch
    down_rev = f.port_out_link[f.port_offset[dst]]  # dst host -> its switch; reverse is switch -> host
    s_sw = np.where(up >= 0, f.switch_index[f.dl_dst[np.maximum(up, 0)]], -1)
    d_sw = np.where(down_rev >= 0, f.switch_index[f.dl_dst[np.maximum(down_rev, 0)]], -1)
    ok = (s_sw >= 0) & (d_sw >= 0) & (src != dst)
    ok &= dist[np.maximum(s_sw, 0), np.maximum(d_sw, 0)] >= 0
    pairs = np.unique(np.stack([s_sw[ok], d_sw[ok]], axis=1), axis=0) if ok.any() else np.zeros((0, 2), np.int64)
    split = switch_pair_split(f, pairs[:, 0], pairs[:, 1], dist)
    pair_id = np.full(len(src), -1, dtype=np.int64)
    if ok.any():
        key = pairs[:, 0] * f.num_switches + pairs[:, 1]
        pair_id[ok] = np.searchsorted(key, s_sw[ok] * f.num_switches + d_sw[ok])
    idx = np.flatnonzero(ok)
    body = split[pair_id[idx]].tocoo()
    host = np.ones(2 * len(idx))
    rows = np.concatenate([idx[body.row], idx, idx])
    cols = np.concatenate([body.col, up[idx], f.reverse(down_rev[idx])])
    vals = np.concatenate([body.data, host])
    m = sp.csr_matrix((vals, (rows, cols)), shape=(len(src), 2 * f.num_links))
    m.sum_duplicates()
    return m
