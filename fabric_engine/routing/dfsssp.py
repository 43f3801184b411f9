"""Deadlock-free single-source shortest-path routing (DFSSSP, as OpenSM's ``dfsssp``).

Domke, Hoefler and Nagel, "Deadlock-Free Oblivious Routing for Arbitrary Topologies"
(IPDPS 2011), the algorithm behind OpenSM's ``osm_ucast_dfsssp.c``:

1. **Balanced shortest paths.** Destinations are routed one LID at a time with
   Dijkstra on link weights; after each destination every link's weight grows by
   the number of host sources whose path to it crosses the link, so later
   destinations avoid busy links (``scipy.sparse.csgraph.dijkstra``). A hop is
   weighted more than all the balancing a link can collect, so paths keep the
   fewest hops and the weights choose among the equally short ones.
2. **Virtual lanes against credit loops.** All destinations start on VL 0. While the
   channel dependency graph of a lane has a cycle, the destinations that create its
   weakest edge (the fewest destinations) move to the next lane; each lane ends
   acyclic. Lanes are given per destination LID (``info["vl_of_lid"]``; the SL of a
   path is its lane), at most ``max_vls`` (default 8, the data VLs most HCAs offer).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from ..errors import RoutingError
from ..topology import Fabric
from .graph import lid_targets
from .order import OpenSMOrder, switch_order
from .quality import _dependencies
from .tables import NO_PATH, Routing

__all__ = ["dfsssp", "assign_vls"]


def _switch_links(fabric: Fabric):
    """Directed switch-to-switch links: ``(link, src_sw, dst_sw, src_port)`` arrays."""
    f = fabric
    si = f.switch_index
    d = np.flatnonzero((si[f.dl_src] >= 0) & (si[f.dl_dst] >= 0))
    return d, si[f.dl_src[d]].astype(np.int64), si[f.dl_dst[d]].astype(np.int64), f.dl_src_port[d].astype(np.int64)


def dfsssp(fabric: Fabric, max_vls: int = 8) -> Routing:
    """Balanced shortest paths with virtual lanes that break every credit loop (see module doc).

    >>> from fabric_engine.topology.generate import fat_tree
    >>> r = dfsssp(fat_tree(hosts=8, radix=4))
    >>> r.info["dfsssp"]["vls"]
    1
    """
    f = fabric
    s_count = f.num_switches
    lft = np.full((s_count, f.max_lid + 1), NO_PATH, dtype=np.uint8)
    # Switches relabelled in GUID order and destinations in OpenSM's order, so ties in Dijkstra and
    # between equally light cables never depend on the order of records in the fabric's file.
    osm = OpenSMOrder(f)
    perm = switch_order(f)  # canonical label -> switch index
    canon = np.empty(s_count, dtype=np.int64)
    canon[perm] = np.arange(s_count)
    tg = osm.targets
    target_sw = osm.switch
    link, src, dst, sport = _switch_links(f)
    src, dst = canon[src], canon[dst]
    hosts_at = np.bincount(canon[target_sw[tg.is_host]], minlength=s_count).astype(np.float64)
    # A hop costs more than all the balancing a link can collect (hosts x destinations), so paths
    # stay minimal and the weights only choose among equally short ones.
    hop = 1.0 + hosts_at.sum() * tg.is_host.sum()
    weight = np.full(len(link), hop, dtype=np.float64)
    # Order: host LIDs first (they move the weights), then switch LIDs.
    order = np.argsort(~tg.is_host, kind="stable")
    rows = np.arange(s_count)
    for k in order:
        t = int(canon[target_sw[k]])
        # Dijkstra towards t: search from t over reversed links (weight of x -> y stored at [y, x]).
        # Parallel cables: keep the lightest (a csr matrix would sum them).
        g = _min_duplicates(dst, src, weight, s_count)
        dist, pred = dijkstra(g, directed=True, indices=t, return_predecessors=True)
        nxt = pred  # next switch of x towards t (-9999 at t or unreachable), canonical labels
        ok = nxt >= 0
        # Port of x to nxt[x]: the lightest cable between them (the lowest port among equals).
        port = _lightest_port(rows[ok], nxt[ok], src, dst, sport, weight)
        lft[perm[rows[ok]], tg.lids[k]] = port
        lft[target_sw[k], tg.lids[k]] = tg.exit_port[k]
        if tg.is_host[k]:
            used = _path_counts(nxt, hosts_at)  # host sources crossing x -> nxt[x]
            cab = _lightest_cable(rows[ok], nxt[ok], src, dst, weight, sport)
            np.add.at(weight, cab, used[rows[ok]])
    vl, n_vls = assign_vls(Routing(f, lft, "dfsssp"), max_vls)
    return Routing(f, lft, "dfsssp", {"vl_of_lid": vl, "dfsssp": {"vls": n_vls, "max_vls": max_vls}})


def _min_duplicates(r: np.ndarray, c: np.ndarray, w: np.ndarray, n: int) -> sp.csr_matrix:
    key = r * n + c
    order = np.lexsort((w, key))
    first = np.r_[True, key[order][1:] != key[order][:-1]]
    sel = order[first]
    return sp.csr_matrix((w[sel], (r[sel], c[sel])), shape=(n, n))


def _lightest_cable(xs, ys, src, dst, weight, sport) -> np.ndarray:
    """Index (into the switch-link arrays) of the lightest cable from ``xs[i]`` to ``ys[i]`` (lowest port on ties)."""
    n = int(max(src.max(initial=0), dst.max(initial=0))) + 1
    key = src * n + dst
    order = np.lexsort((sport, weight, key))
    skey = key[order]
    pos = np.searchsorted(skey, xs * n + ys)
    return order[pos]


def _lightest_port(xs, ys, src, dst, sport, weight) -> np.ndarray:
    return sport[_lightest_cable(xs, ys, src, dst, weight, sport)].astype(np.uint8)


def _path_counts(nxt: np.ndarray, hosts_at: np.ndarray) -> np.ndarray:
    """Host sources whose path crosses each switch's out link in the tree ``nxt`` (float ``[S]``)."""
    cnt = hosts_at.copy()
    # Depth in the tree, then accumulate from the deepest level up.
    depth = np.zeros(len(nxt), dtype=np.int64)
    valid = nxt >= 0
    cur = np.where(valid, nxt, -1)
    for _ in range(len(nxt)):
        live = cur >= 0
        if not live.any():
            break
        depth[live] += 1
        cur = np.where(live, np.where(nxt[np.maximum(cur, 0)] >= 0, nxt[np.maximum(cur, 0)], -1), -1)
    for dep in range(int(depth.max(initial=0)), 0, -1):
        at = np.flatnonzero((depth == dep) & valid)
        np.add.at(cnt, nxt[at], cnt[at])
    cnt[~valid] = 0
    return cnt


def assign_vls(routing: Routing, max_vls: int = 8) -> tuple[np.ndarray, int]:
    """Lanes per destination LID so that every lane's channel dependency graph is acyclic.

    Returns ``(vl_of_lid, lanes_used)``; ``vl_of_lid`` is uint8 ``[max_lid + 1]``.
    Raises :class:`RoutingError` when ``max_vls`` lanes are not enough.
    """
    from scipy.sparse.csgraph import connected_components

    f = routing.fabric
    tg = lid_targets(f)
    lids = tg.lids[tg.is_host]
    vl = np.zeros(len(lids), dtype=np.int64)
    n_links = 2 * f.num_links
    a, b, col = _dependencies(routing, lids, from_hosts=True)
    for lane in range(max_vls):
        while True:
            on = vl[col] == lane
            ea, eb, ec = a[on], b[on], col[on]
            if ea.size == 0:
                break
            g = sp.csr_matrix((np.ones(len(ea), dtype=np.int8), (ea, eb)), shape=(n_links, n_links))
            g.sum_duplicates()
            n_comp, labels = connected_components(g, directed=True, connection="strong")
            sizes = np.bincount(labels, minlength=n_comp)
            in_cycle = sizes[labels[ea]] > 1
            in_cycle &= labels[ea] == labels[eb]
            if not in_cycle.any():
                break
            if lane == max_vls - 1:
                raise RoutingError(f"dfsssp: {max_vls} virtual lanes are not enough to break the credit loops")
            # Edges inside cyclic components; move the destinations of the weakest such edge per component.
            ia, ib, ic = ea[in_cycle], eb[in_cycle], ec[in_cycle]
            key = ia * n_links + ib
            uk, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
            comp = labels[uk // n_links]
            order = np.lexsort((cnt, comp))
            first = order[np.r_[True, comp[order][1:] != comp[order][:-1]]]
            weak = np.isin(inv, first)
            vl[np.unique(ic[weak])] = lane + 1
    out = np.zeros(f.max_lid + 1, dtype=np.uint8)
    out[lids] = vl
    return out, int(vl.max(initial=0)) + 1
