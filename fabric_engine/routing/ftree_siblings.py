"""Routes over cables between roots (a Dragonfly+'s global links), as OpenSM's ftree takes them.

OpenSM's ftree ranks switches from the adapters; a cable between two switches of one rank
becomes a *sibling* port group (``osm_ucast_ftree.c``, ``fabric_construct_sw_ports``). On a
two-rank tree whose roots are cabled to each other -- a Dragonfly+: leaves and spines per
group, spine ``j`` of every group cabled to spine ``j`` of the others -- OpenSM accepts the
fabric and, for a *real* LID, ``fabric_route_upgoing_by_going_down`` walks the sibling groups
of every switch it reaches after its down groups, depth first, keeping a route only when it
is shorter than the one already set (``least_hops``). The result for one destination:

* the *sources* are the roots that reach the destination without a sibling hop: for an
  adapter, its leaf's main-path root first, then the leaf's other up groups in OpenSM's load
  order (routed after the main path, ``fabric_route_downgoing_by_going_up``); for a leaf
  switch's LID, its up groups in load order; for a root's LID, the root alone;
* every other root takes the port towards its parent on a shortest sibling path from the
  first source (in that order) that is nearest to it;
* a leaf not yet routed climbs to the adjacent root that was reached first at the fewest hops
  (earlier source first, then the source's sibling-group order, then the leaf's port order).

Roots one sibling hop from their source -- every root of a Dragonfly+ -- are routed exactly as
OpenSM routes them. Farther roots take their lowest-port parent one hop closer, where OpenSM's
depth-first order may pick another equally short one (``far_routes`` counts such entries).
Whatever no source reaches stays unrouted, as OpenSM leaves it. Where two roots are joined by
parallel cables the first is taken; OpenSM spreads its routes over them by counters its walk updates.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from ..topology import Fabric
from .levels import Levels
from .tables import NO_PATH

__all__ = ["RootSiblings"]

_FAR = np.int16(np.iinfo(np.int16).max // 4)  # "unreachable" sibling distance
#: Elements per temporary (rows x sources x roots) before a batch is split.
_BUDGET = 1 << 23


class RootSiblings:
    """The sibling cables among the roots (level ``lv.top``) of a two-level tree.

    Attributes
    ----------
    roots : int64 ``[R]``
        Switch indices of the roots.
    root_at : int64 ``[S]``
        Position of every switch in ``roots`` (-1 for other switches).
    dist : int16 ``[R, R]``
        Sibling hops between roots (``_FAR`` when no sibling path joins them).
    parent : int64 ``[R, R]``
        ``parent[s, x]``: the root ``x`` forwards to on its way to source ``s`` (-1 at ``s`` or unreachable).
    pos : int16 ``[R, R]``
        ``pos[s, x]``: rank of ``x`` among the sibling groups of ``s`` in port order (for ties at a leaf).
    """

    def __init__(self, fabric: Fabric, lv: Levels, cable_port) -> None:
        f = fabric
        s_count = f.num_switches
        self.roots = roots = np.flatnonzero(lv.level == lv.top).astype(np.int64)
        r = len(roots)
        self.root_at = np.full(s_count, -1, dtype=np.int64)
        self.root_at[roots] = np.arange(r)
        self._cable_port = cable_port
        si = f.switch_index
        d = np.flatnonzero((si[f.dl_src] >= 0) & (si[f.dl_dst] >= 0))
        a, b = self.root_at[si[f.dl_src[d]]], self.root_at[si[f.dl_dst[d]]]
        keep = (a >= 0) & (b >= 0) & (a != b)
        a, b, port = a[keep], b[keep], f.dl_src_port[d][keep].astype(np.int64)
        self.sibling_cables = int(keep.sum() // 2)
        adj = sp.csr_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(r, r))
        adj.sum_duplicates()
        self.parallel_pairs = int((adj.data > 1).sum() // 2)  # root pairs joined by more than one cable
        dist = shortest_path(adj, method="D", unweighted=True)
        self.dist = np.where(np.isfinite(dist), dist, _FAR).astype(np.int16)
        # Neighbours of every root in port order (its sibling groups as OpenSM creates them).
        o = np.lexsort((port, b, a))
        a, b, port = a[o], b[o], port[o]
        first = np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])] if len(a) else np.zeros(0, bool)
        a, b, port = a[first], b[first], port[first]
        o = np.lexsort((port, a))
        a, b = a[o], b[o]
        count = np.bincount(a, minlength=r)
        width = int(count.max(initial=0))
        start = np.r_[0, np.cumsum(count)[:-1]]
        k = np.arange(len(a)) - np.repeat(start, count)
        self.nbr = nbr = np.full((r, max(width, 1)), -1, dtype=np.int64)
        nbr[a, k] = b
        self.pos = np.full((r, r), width, dtype=np.int16)
        self.pos[a, b] = k
        self.parent = self._parents(nbr)

    def _parents(self, nbr: np.ndarray) -> np.ndarray:
        """``parent[s, x]``: the lowest-port neighbour of ``x`` one sibling hop closer to ``s``."""
        r = len(self.roots)
        out = np.full((r, r), -1, dtype=np.int64)
        if r == 0:
            return out
        live = nbr >= 0
        step = max(1, _BUDGET // max(1, r * nbr.shape[1]))
        for s0 in range(0, r, step):
            d = self.dist[s0:s0 + step].astype(np.int32)  # [s, x]
            dn = d[:, np.maximum(nbr, 0)]  # [s, x, w]
            cand = (dn == (d - 1)[:, :, None]) & live[None, :, :] & (d < _FAR)[:, :, None]
            has = cand.any(axis=2)
            pick = nbr[np.arange(r)[None, :], cand.argmax(axis=2)]
            out[s0:s0 + step] = np.where(has, pick, -1)
        return out

    def route(self, sources: np.ndarray, up_dst: np.ndarray, up_ptr: np.ndarray,
              leaves: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Ports of the roots and leaves towards destinations reached from ``sources``.

        Parameters
        ----------
        sources : int64 ``[n, K]``
            Per destination, the source roots (root positions) in OpenSM's order, -1 padded.
        up_dst, up_ptr : int64
            Up groups of the switches (upper switch index), ``up_ptr[x]:up_ptr[x + 1]`` those of ``x``
            in OpenSM's group order.
        leaves : int64 ``[L]``
            Switch indices of the leaves to route (climb to an adjacent root).

        Returns
        -------
        root_port : uint8 ``[n, R]``
            Port of every non-source root towards the destination (NO_PATH at sources and where unreached).
        leaf_port : uint8 ``[n, L]``
            Port of every leaf up to its chosen root (NO_PATH where no adjacent root is reached).
        hops : int32 ``[n, R]``
            Sibling hops from the winning source (``_FAR`` where unreached).
        far : int
            Entries that go over two or more sibling hops (order may differ from OpenSM's).
        """
        n, k_src = sources.shape
        r = len(self.roots)
        root_port = np.full((n, r), NO_PATH, dtype=np.uint8)
        leaf_port = np.full((n, len(leaves)), NO_PATH, dtype=np.uint8)
        hops = np.full((n, r), int(_FAR), dtype=np.int32)
        far = 0
        step = max(1, _BUDGET // max(1, k_src * r))
        for i0 in range(0, n, step):
            src = sources[i0:i0 + step]
            m = len(src)
            d = np.where((src >= 0)[:, :, None], self.dist[np.maximum(src, 0)], _FAR)  # [m, K, R]
            win_k = d.argmin(axis=1)  # first source at the fewest hops
            best = np.take_along_axis(d, win_k[:, None, :], axis=1)[:, 0, :].astype(np.int32)
            win = np.take_along_axis(src, win_k, axis=1)  # [m, R] winning source root
            par = self.parent[np.maximum(win, 0), np.arange(r)[None, :]]
            ok = (best > 0) & (best < _FAR) & (par >= 0)
            far += int((ok & (best > 1)).sum())
            x_sw = np.broadcast_to(self.roots[None, :], (m, r))
            ports = self._cable_port(x_sw, np.where(ok, self.roots[np.maximum(par, 0)], -1))
            root_port[i0:i0 + m] = np.where(ok, ports, NO_PATH)
            hops[i0:i0 + m] = best
            # Leaves: adjacent root with the fewest hops, then the earliest source, then its sibling order.
            tie = np.where(best == 1, self.pos[np.maximum(win, 0), np.arange(r)[None, :]], 0).astype(np.int64)
            key = (best.astype(np.int64) * (k_src + 1) + win_k) * (r + 1) + tie
            key = np.where(best < _FAR, key, np.iinfo(np.int64).max)
            width = int(np.diff(up_ptr)[leaves].max(initial=0))
            if width == 0 or len(leaves) == 0:
                continue
            j = np.arange(width)
            has = j[None, :] < np.diff(up_ptr)[leaves][:, None]  # [L, W]
            up = np.where(has, up_dst[np.minimum(up_ptr[leaves][:, None] + j[None, :], len(up_dst) - 1)], -1)
            up_root = np.where(has, self.root_at[np.maximum(up, 0)], -1)
            kk = np.where((up_root >= 0)[None, :, :], key[:, np.maximum(up_root, 0)], np.iinfo(np.int64).max)
            pick = kk.argmin(axis=2)  # [m, L]
            reached = np.take_along_axis(kk, pick[:, :, None], axis=2)[:, :, 0] < np.iinfo(np.int64).max
            chosen = np.where(reached, up[np.arange(len(leaves))[None, :], pick], -1)
            lp = self._cable_port(np.broadcast_to(leaves[None, :], chosen.shape), chosen)
            leaf_port[i0:i0 + m] = np.where(reached, lp, NO_PATH)
        return root_port, leaf_port, hops, far
