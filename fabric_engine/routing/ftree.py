"""OpenSM's fat-tree routing (``ftree``), index based, in closed form.

OpenSM 3.3.23's ``osm_ucast_ftree.c`` routes every compute node in index order (leaf by
leaf, port by port, padding short leaves with dummy nodes so counters stay even;
``fabric_route_to_cns``). From the destination's leaf it climbs to the least-loaded up
port group (``counter_down``; lowest index on ties) and routes the destination down along
that *main path*; every switch below the main path routes up towards it, and every other
ancestor of the leaf routes down. On a full fat tree this is D-mod-k: every port carries the
same number of destinations and shift permutations are contention-free. Then every CA port
that is no compute node (``fabric_route_to_non_cns``: with a CN guid file, the CAs it does not
list -- SHARP Aggregation Nodes, management and storage nodes -- in node GUID order) gets a
main path of its own, from its own switch whatever its rank, on the loads the compute nodes
left; then the switch LIDs (``fabric_route_to_switches``, :func:`_switch_lid_table`). Which
CAs are compute nodes, which switches are roots and which rank is the leaves' come from
:mod:`.ftree_check` (OpenSM's guid files, :mod:`.guid_files`).

Here the main path of every destination is computed level by level for all
destinations at once: "least loaded, lowest index" is a round robin over the up groups
of a switch in the order destinations reach it, and over the ports of a group. The
tables then follow from the ancestry of the levelled fabric:

* a switch on the main path routes down along it;
* a switch below the lowest main-path switch ``Z`` covering it climbs to its first
  parent that ``Z`` covers (parallel cables taken round robin);
* another ancestor of the destination's switch routes down towards it;
* anything else (OpenSM's *secondary* paths, e.g. a spine of another plane) climbs
  to a parent above the destination's switch: round robin over its up groups when all
  of them lead there (OpenSM takes its groups in load order, which spreads them
  likewise), else the first such parent, else none (a spine of another plane has no
  route to an Aggregation Node on a spine, as in OpenSM). Only with
  ``on_irregular="balance"`` (our own balancing of a tree OpenSM refuses): from a leaf
  that lost the main-path cable, round robin over the parents above the destination
  (``info["ftree"]["leaf_detours"]``), and as a last resort a shortest path, spread round
  robin over the equal ports (``info["ftree"]["shortest_path_fallbacks"]``; not up/down).

Parallel cables follow OpenSM's per-port counters: a switch climbs over the next cable of the
upper switch's group (``counter_up``, moved by every route it sets that leads on -- below the main
path, or to a switch with an adapter), descends over the cable the main paths left least loaded
(``counter_down``); cables are ranked by the port of the switch that sets the route. A leaf that
lacks the cable to the main path climbs where OpenSM's secondary paths reach it first, and cables
between same-level switches below the roots carry the routes OpenSM's sibling groups give them
(:func:`_fill_from_siblings`); the routes OpenSM lays over them for dummy compute nodes also move
the up-group counters of the leaves' parents, and so their later up ports (:mod:`.ftree_counters`).

Spines cabled to each other (a Dragonfly+, which OpenSM accepts as a two-rank tree with sibling
links) carry routes to the other groups as OpenSM's ftree lays them (:mod:`.ftree_siblings`), and
switches outside OpenSM's indexed part take their up groups back and forth, as its bubble sort of
equal loads leaves them.

With ``on_irregular="balance"``, a degraded fat tree is not refused: ``info["ftree"]["notes"]`` says
which switches break the regular structure, and switch LIDs go on the first port of a shortest path.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ..errors import RoutingError
from ..topology import Fabric
from .ftree_check import UNINDEXED, check_fat_tree, ftree_structure, leaf_order, switch_tuples
from .ftree_counters import UpCounters, dummy_sibling_bumps
from .ftree_siblings import RootSiblings
from .graph import lid_targets, switch_distances, switch_port_peers
from .levels import Levels, levels
from .order import guid_key
from .tables import NO_PATH, Routing

__all__ = ["ftree", "first_shortest_table", "spread_shortest_ports"]

#: Destinations filled per step (bounds the ``switches x chunk`` temporaries).
_CHUNK = 2048


def first_shortest_table(dist: np.ndarray, peer: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``out[x, j]``: lowest port of switch ``x`` one hop closer to switch ``targets[j]``, uint8.

    0 at the target itself, NO_PATH when unreachable.
    """
    s_count, pmax = peer.shape
    small = dist.astype(np.int8) if dist.max(initial=0) < 100 else dist
    d_here = np.ascontiguousarray(small[:, targets])  # [S, T]
    want = np.where(d_here > 0, d_here - 1, -100).astype(d_here.dtype)  # -100: never matches
    out = np.where(d_here == 0, 0, NO_PATH).astype(np.uint8)
    pc = np.maximum(peer, 0)
    dead = peer < 0
    for p in range(pmax - 1, -1, -1):  # the lowest port written last wins
        hit = d_here[pc[:, p]] == want
        if dead[:, p].any():
            hit[dead[:, p]] = False
        np.copyto(out, np.uint8(p + 1), where=hit)
    return out


def spread_shortest_ports(dist: np.ndarray, peer: np.ndarray, xs: np.ndarray, ts: np.ndarray,
                          rank: np.ndarray) -> np.ndarray:
    """The ``rank mod n``-th of the ``n`` ports of switch ``xs[i]`` one hop closer to ``ts[i]`` (NO_PATH if none)."""
    p = peer[xs]
    d_here = dist[xs, ts].astype(np.int64)
    d_peer = np.where(p >= 0, dist[np.maximum(p, 0), ts[:, None]], -9)
    cand = (d_peer == (d_here - 1)[:, None]) & (d_here > 0)[:, None]
    cnt = cand.sum(axis=1)
    k = rank % np.maximum(cnt, 1)
    pick = (np.cumsum(cand, axis=1) - 1 == k[:, None]) & cand
    return np.where(cnt > 0, pick.argmax(axis=1) + 1, NO_PATH).astype(np.uint8)


class _Links:
    """Switch-to-switch cables grouped by ``(src, dst)``: pick the ``k``-th cable of a group."""

    def __init__(self, fabric: Fabric, level: np.ndarray | None = None) -> None:
        """``level`` (per switch): rank climbs only, over parallel cables to a higher level."""
        f = fabric
        si = f.switch_index
        d = np.flatnonzero((si[f.dl_src] >= 0) & (si[f.dl_dst] >= 0))
        src, dst = si[f.dl_src[d]].astype(np.int64), si[f.dl_dst[d]].astype(np.int64)
        # OpenSM sets a switch's entry from the switch at the cable's far end, taking that switch's
        # ports of the group in its own port order: cables are ranked by the far end's port.
        order = np.lexsort((f.dl_src_port[d], f.dl_dst_port[d], dst, src))
        self.s = s = f.num_switches
        key = src[order] * s + dst[order]
        port = f.dl_src_port[d][order].astype(np.uint8)
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, dtype=np.int64)
        rank = np.arange(len(key)) - np.repeat(first, np.diff(np.r_[first, len(key)]))
        self.kmax = int(rank.max(initial=0)) + 1
        # table[x, y, k]: port of the k-th cable from x to y; npar[x, y]: number of such cables.
        self.table = np.full((s, s, self.kmax), NO_PATH, dtype=np.uint8)
        self.table[key // s, key % s, rank] = port
        self.first = np.ascontiguousarray(self.table[:, :, 0])  # the first cable of every pair
        self.npar = np.zeros((s, s), dtype=np.int16)
        np.add.at(self.npar, (key // s, key % s), 1)
        # Switches with parallel cables (par_cols) and each one's place among their neighbours over them.
        self.multi = np.flatnonzero((self.npar > 1).any(axis=1))  # switches with parallel cables
        px, py = np.nonzero((self.npar > 1) if level is None else (self.npar > 1) & (level[None, :] > level[:, None]))
        self.par_cols = np.unique(px)
        col_of = np.searchsorted(self.par_cols, px)
        start = np.searchsorted(px, px)  # px is sorted (row-major nonzero)
        self.par_pos = np.full((len(self.par_cols), s), -1, dtype=np.int16)
        self.par_pos[col_of, py] = np.arange(len(px)) - start
        self.par_width = int((np.arange(len(px)) - start).max(initial=-1)) + 1
        self.par_nbr = np.full((len(self.par_cols), max(self.par_width, 1)), -1, dtype=np.int64)  # inverse
        self.par_nbr[col_of, np.arange(len(px)) - start] = py

    def port_to_rows(self, dst: np.ndarray, seen: np.ndarray | None = None,
                     counted: np.ndarray | None = None) -> np.ndarray:
        """``out[i, x]``: port of switch ``x`` towards ``dst[i, x]``.

        Parallel cables are taken round robin per ``(x, dst)`` in destination order, as
        OpenSM's per-port counters do; ``seen`` (int64 ``[S * S]``) carries the counts over calls.
        Where ``counted`` (bool, like ``dst``) is false the cable is read off the counter without
        moving it (OpenSM counts a route only when the switch it sets routes something new below).
        """
        s = self.s
        flat = np.arange(s, dtype=np.int32 if s * s < 1 << 31 else np.int64)[None, :] * s + np.maximum(dst, 0)
        out = self.first.ravel()[flat]
        if self.kmax > 1:  # only switches with parallel cables up need a rank: counted entries before, per (x, parent)
            cols = self.par_cols
            sub = np.ascontiguousarray(dst[:, cols])
            live = sub >= 0
            pos = self.par_pos[np.arange(len(cols))[None, :], np.maximum(sub, 0)]
            hit = (live & (pos >= 0)).ravel()
            if hit.any():
                width = self.par_width
                slot = (np.arange(len(cols), dtype=np.int32)[None, :] * width + pos).ravel()[hit]  # dest-major
                c = (np.ones(hit.sum(), dtype=np.int32) if counted is None
                     else counted[:, cols].ravel()[hit].astype(np.int32))
                order = np.argsort(slot.astype(np.int16) if len(cols) * width < 1 << 15 else slot, kind="stable")
                ss = slot[order]
                first = np.flatnonzero(np.r_[True, ss[1:] != ss[:-1]])
                co = c[order]
                run = np.cumsum(co) - co
                rank = np.empty(len(slot), dtype=np.int64)
                rank[order] = run - np.repeat(run[first], np.diff(np.r_[first, len(ss)]))
                key = (cols.astype(np.int32 if s * s < 1 << 31 else np.int64)[None, :] * s + sub).ravel()[hit]
                if seen is not None:
                    rank += seen[key]
                    seen += np.bincount(key[c > 0], minlength=len(seen))
                n = np.maximum(self.npar.ravel()[key], 1)
                sub_out = np.ascontiguousarray(out[:, cols])  # a[:, idx] may come out Fortran-ordered
                sub_out.reshape(-1)[hit] = self.table.ravel()[key * self.kmax + rank % n]
                out[:, cols] = sub_out
        return np.where(dst >= 0, out, np.uint8(NO_PATH))

    def port_to(self, src: np.ndarray, dst: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Port of the ``k mod n``-th cable from ``src`` to ``dst`` (NO_PATH where ``dst < 0``)."""
        dsafe = np.maximum(dst, 0)
        if self.kmax == 1:
            out = self.table[src, dsafe, 0]
        else:
            n = np.maximum(self.npar[src, dsafe], 1)
            out = self.table[src, dsafe, k % n]
        return np.where(dst >= 0, out, np.uint8(NO_PATH))


class _MainEdges:
    """Main paths over every cable group, in destination order: OpenSM's ``counter_down``."""

    def __init__(self, chain: np.ndarray, s_count: int) -> None:
        n = chain.shape[1]
        lo, hi = chain[:-1].ravel(), chain[1:].ravel()
        d = np.tile(np.arange(n, dtype=np.int64), chain.shape[0] - 1)
        ok = (lo >= 0) & (hi >= 0)
        self.n, self.s = max(n, 1), s_count
        self.keys = np.sort((lo[ok] * s_count + hi[ok]) * self.n + d[ok])

    def before(self, lower: np.ndarray, upper: np.ndarray, dest: np.ndarray) -> np.ndarray:
        """Main paths from ``lower`` up to ``upper`` of the destinations before ``dest`` (all of them: ``dest`` = n)."""
        base = (lower.astype(np.int64) * self.s + upper) * self.n
        return np.searchsorted(self.keys, base + dest) - np.searchsorted(self.keys, base)


def _first_related(lv: Levels, rel_src: np.ndarray, rel_dst: np.ndarray, s_count: int,
                   cols: np.ndarray, cond: np.ndarray) -> np.ndarray:
    """``out[x, j]``: the first ``rel_dst`` of switch ``x`` (lowest index) for which ``cond[rel_dst, j]`` holds."""
    order = np.lexsort((rel_dst, rel_src))
    a, b = rel_src[order], rel_dst[order]
    keep = np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])][:len(a)]
    a, b = a[keep], b[keep]
    start = np.searchsorted(a, np.arange(s_count))
    count = np.searchsorted(a, np.arange(s_count), side="right") - start
    width = int(count.max(initial=0))
    out = np.full((s_count, len(cols)), -1, dtype=np.int32)
    if width == 0:
        return out
    rel = np.full((s_count, width), -1, dtype=np.int64)  # related switches of every x, padded
    k = np.arange(width)[None, :]
    has = k < count[:, None]
    rel[has] = b[(start[:, None] + k)[has]]
    for j in range(width - 1, -1, -1):  # the lowest index written last wins
        r = rel[:, j]
        hit = cond[np.maximum(r, 0)] & (r >= 0)[:, None]
        np.copyto(out, r.astype(np.int32)[:, None], where=hit)
    return out


def ftree(fabric: Fabric, on_irregular: str = "minhop", roots: Sequence[int | str] | None = None,
          cns: Sequence[int | str] | None = None, ios: Sequence[int | str] | None = None,
          max_reverse_hops: int = 0) -> Routing:
    """Route a fat tree like OpenSM's ``ftree`` (see module doc).

    ``roots``, ``cns`` and ``ios`` are OpenSM's root GUID file (root switches' node GUIDs), compute node
    GUID file and I/O node GUID file (CA *port* GUIDs), ``None`` for no file (:mod:`.guid_files` reads
    them). Compute nodes are routed leaf by leaf in index order; every other CA port after them, in
    node GUID order, as a main path from its own switch, whatever its rank (``fabric_route_to_non_cns``:
    a SHARP Aggregation Node on a core is reached down from that core only).

    A fabric OpenSM's ftree refuses (:func:`~.ftree_check.check_fat_tree`: a degraded tree, a SHARP
    fabric without guid files, a compute node off the leaf rank, ...) is routed with minhop, as OpenSM
    does, and ``info["fallback"]`` carries OpenSM's reason; ``on_irregular="balance"`` routes it with
    this engine's own degraded-tree balancing instead (not OpenSM's behaviour; ``info["ftree"]["notes"]``
    says what is irregular). ``max_reverse_hops`` (OpenSM's ``-H``) lets I/O nodes be reached by routes
    that turn down and up again; that is not modelled, so a value above 0 with ``ios`` is refused.

    >>> from fabric_engine.topology.generate import fat_tree
    >>> from fabric_engine.routing.quality import port_loads
    >>> r = ftree(fat_tree(hosts=8, radix=4))
    >>> sorted(set(port_loads(r).up_counts().tolist()))  # every leaf up port carries 3 remote hosts
    [3]
    """
    if on_irregular not in ("minhop", "balance"):
        raise RoutingError(f"ftree: on_irregular must be 'minhop' or 'balance', not {on_irregular!r}")
    if max_reverse_hops < 0:
        raise RoutingError(f"ftree: max_reverse_hops must be >= 0, not {max_reverse_hops}")
    if max_reverse_hops > 0 and ios is not None:
        raise RoutingError("ftree: reverse hops for I/O nodes (max_reverse_hops > 0 with an I/O guid file) are not "
                           "modelled; with max_reverse_hops 0 (OpenSM's default) I/O nodes route as other non-compute "
                           "nodes")
    f = fabric
    s_count = f.num_switches
    tg = lid_targets(f)
    if not tg.is_host.any():
        raise RoutingError("ftree: the fabric has no host connected to a switch")
    st = ftree_structure(f, roots, cns, ios)
    refused = check_fat_tree(f, st)
    if refused is not None and on_irregular == "minhop":
        from .minhop import minhop

        fb = minhop(f)
        reason = f"ftree: {refused}; Fabric topology is not a fat-tree, routed with minhop as OpenSM does"
        return Routing(f, fb.lft, "ftree", dict(fb.info, ftree={"refused": refused, "notes": list(st.notes)},
                                                fallback={"engine": "minhop", "reason": reason}))
    dist = switch_distances(f)
    peer = switch_port_peers(f)
    if refused is None:  # OpenSM's ranks: leaves (the leaf rank) at level 1, roots at the top
        ok = (st.rank >= 0) & (st.rank <= st.leaf_rank)
        lv = levels(f, dist, np.where(ok, st.leaf_rank + 1 - st.rank, 0))
    else:
        lv = levels(f, dist)
    lft = np.full((s_count, f.max_lid + 1), NO_PATH, dtype=np.uint8)
    links = _Links(f, lv.level)
    # Roots cabled to each other (a Dragonfly+): OpenSM routes over those sibling groups too.
    sib = None
    if refused is None and lv.top == 2 and lv.sibling_links:
        sib = RootSiblings(f, lv, lambda x, y: links.port_to(x, y, 0))
        sib = sib if sib.sibling_cables else None

    # Compute nodes in index order: leaf by leaf (OpenSM's tuple order), port by port, short leaves
    # padded with dummies up to the most compute-node ports a leaf has; then the other CA ports.
    tuples = switch_tuples(f, st)
    cn = st.is_cn.copy()
    if refused is not None:  # our own balancing: compute nodes on leaves, Aggregation Nodes are none
        if st.cn_listed < 0:
            cn &= ~np.isin(f.port_node[st.ca_slot], f.aggregation_nodes)
        cn &= lv.level[st.ca_switch] == 1
    if refused is None:
        leaves = leaf_order(f, st, tuples)
    else:
        leaves = np.unique(st.ca_switch[cn])
        leaves = leaves[np.argsort(guid_key(f.guid[f.switches[leaves]]), kind="stable")]
    leaf_at = np.full(s_count, -1, dtype=np.int64)
    leaf_at[leaves] = np.arange(len(leaves))
    c_lid, c_leaf, c_exit = st.ca_lid[cn], st.ca_switch[cn], st.ca_exit[cn]
    o = np.lexsort((c_exit, leaf_at[c_leaf]))
    h_lid, h_leaf, h_exit = c_lid[o], c_leaf[o], c_exit[o]
    per_leaf = np.bincount(leaf_at[h_leaf], minlength=len(leaves))
    first_of = np.r_[0, np.cumsum(per_leaf)[:-1]]
    # OpenSM counts, for each adapter port on a leaf, all the compute-node ports of its adapter
    # (``fabric_set_max_cn_per_leaf``): a dual-port server on one leaf counts 4.
    owner = f.port_node[f.lid_to_slot[h_lid]]
    cn_ports = np.bincount(f.port_node[st.ca_slot[cn]], minlength=f.num_nodes)
    max_cn = int(np.bincount(leaf_at[h_leaf], weights=cn_ports[owner], minlength=len(leaves)).max(initial=0))
    slot = np.arange(len(h_leaf)) - np.repeat(first_of, per_leaf)
    n_all = len(leaves) * max_cn
    # Other CA ports (``fabric_route_to_non_cns``): CAs in node GUID order, ports in order, each a main
    # path from its own switch; CA ports on switches outside the levels stay unrouted.
    non = np.flatnonzero(~cn & (lv.level[st.ca_switch] > 0))
    n_lid, n_sw, n_exit = st.ca_lid[non], st.ca_switch[non], st.ca_exit[non]
    n_total = n_all + len(non)
    dest = np.r_[leaf_at[h_leaf] * max_cn + slot, n_all + np.arange(len(non))].astype(np.int64)
    dest_lid = np.r_[h_lid, n_lid].astype(np.int64)

    # Up groups (distinct upper neighbours) of every switch, in OpenSM's load order on even loads: by the
    # upper switch's index tuple (port_group_compare_load_down); groups towards switches the indexing never
    # reached compare equal and keep their creation (port) order.
    gkey = lv.up_src * s_count + lv.up_dst
    gfirst = np.flatnonzero(np.r_[True, gkey[1:] != gkey[:-1]]) if len(gkey) else np.zeros(0, dtype=np.int64)
    g_n = np.diff(np.r_[gfirst, len(gkey)])
    og = np.lexsort((lv.up_port[gfirst], tuples[lv.up_dst[gfirst]], lv.up_src[gfirst]))
    gfirst, g_n = gfirst[og], g_n[og]
    g_src, g_dst = lv.up_src[gfirst], lv.up_dst[gfirst]
    n_up = np.bincount(g_src, minlength=s_count)
    g0 = np.searchsorted(g_src, np.arange(s_count))
    # Bubble sort keeps equal loads in place when no tuple tells them apart: such a switch takes its up
    # groups forward, then backward, round after round (bubble_sort_down), instead of round robin.
    sway = (n_up > 0) & (np.bincount(g_src, weights=tuples[g_dst] != UNINDEXED, minlength=s_count) == 0)

    # Main paths: chain[l, i] is the level-l switch of destination i, down[l, i] its port towards i.
    # A main path starts at the destination's own switch (a leaf for compute nodes and dummies).
    top = max(1, lv.top)
    chain = np.full((top + 1, n_total), -1, dtype=np.int64)
    down = np.full((top + 1, n_total), NO_PATH, dtype=np.uint8)
    chain[1, :n_all] = np.repeat(leaves, max_cn)
    down[1, dest[:len(h_leaf)]] = h_exit
    n_lev = lv.level[n_sw].astype(np.int64)
    chain[n_lev, n_all + np.arange(len(non))] = n_sw
    down[n_lev, n_all + np.arange(len(non))] = n_exit
    z_of = np.r_[chain[1, :n_all], n_sw].astype(np.int64)  # every destination's own switch
    m_leaf = np.full(n_total, -1, dtype=np.int64)  # main paths the leaf routed before this one
    counters = None  # parents of leaves whose up counters sibling routes move (dummies only)
    has_ca = np.bincount(st.ca_switch, minlength=s_count) > 0
    for lev in range(1, top):
        cur = chain[lev]
        idx = np.flatnonzero((cur >= 0) & (n_up[np.maximum(cur, 0)] > 0))
        if idx.size == 0:
            continue
        c = cur[idx]
        order = np.argsort(c, kind="stable")
        sc = c[order]
        starts = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
        rank = np.empty(len(c), dtype=np.int64)
        rank[order] = np.arange(len(c)) - np.repeat(starts, np.diff(np.r_[starts, len(c)]))
        g = g0[c] + _picked(rank, n_up[c], sway[c])
        k = (rank // n_up[c]) % g_n[g]
        if lev == 2 and refused is None and sib is None and lv.sibling_links and n_all > len(h_leaf):
            counters = _sibling_counters(f, lv, chain, idx, c, dest[:len(h_leaf)], n_all, m_leaf, g0, n_up, sway,
                                         g_src, g_dst, has_ca)
            if counters is not None:
                on = np.isin(c, counters.switches)
                p, prior = counters.main_picks(c[on], idx[on])
                g[on] = g0[c[on]] + p
                k[on] = prior % g_n[g[on]]
        chain[lev + 1, idx] = g_dst[g]
        if lev == 1:
            m_leaf[idx] = rank
        down[lev + 1, idx] = lv.up_rport[gfirst[g] + k]

    main_edges = _MainEdges(chain, s_count) if links.kmax > 1 else None
    extra_load = None if counters is None else counters.extra_load(g0, len(g_src))
    # Switch LIDs, routed after every CA, when the main paths have set the up groups' loads.
    sw = ~tg.is_host
    late_switches = sib is None and refused is None and main_edges is not None
    if sib is None and not late_switches:
        if refused is None:
            table = _switch_lid_table(lv, links, chain, g_src, g_dst, tg.target[sw], extra_load=extra_load)
        else:
            table = first_shortest_table(dist, peer, tg.target[sw])
        lft[:, tg.lids[sw]] = table

    # Who to climb to (first parent covered by Z) and who to descend to (first child above a switch).
    anc = lv.anc
    anc_t = np.ascontiguousarray(anc.T)
    climb = _first_related(lv, lv.up_src, lv.up_dst, s_count, np.arange(s_count), anc_t)  # [X, Z]
    zs = np.unique(z_of[dest]) if len(dest) else np.zeros(0, dtype=np.int64)
    z_pos = np.full(s_count, -1, dtype=np.int64)
    z_pos[zs] = np.arange(len(zs))
    descend = _first_related(lv, lv.up_dst, lv.up_src, s_count, zs, anc[:, zs])  # [X, Z]

    lvl8 = lv.level.astype(np.int8)[None, :]
    first_up = _first_related(lv, lv.up_src, lv.up_dst, s_count, zs, anc[:, zs])  # [X, Z]
    if len(zs) > s_count:
        raise RoutingError("ftree: more destination switches than switches")
    # Destination-major tables: every per-destination lookup below is a row gather.
    # climb_t[z, x]: port of x towards its first parent covered by z (and so on for the others).
    all_x = np.broadcast_to(np.arange(s_count)[None, :], (s_count, s_count))
    climb_t = np.ascontiguousarray(climb.T)
    descend_t, first_up_t = np.ascontiguousarray(descend.T), np.ascontiguousarray(first_up.T)
    del climb, descend, first_up  # the transposed copies replace them (S x S int32 each on big fabrics)
    descend_sw = descend_t  # [z, X]: the first child of X above z (a switch index, before ports)
    if links.kmax == 1:  # no parallel cables: tables of ports straight away
        climb_t = links.port_to(all_x, climb_t, 0)
        descend_t = links.port_to(all_x[:len(zs)], descend_t, 0)
        first_up_t = links.port_to(all_x[:len(zs)], first_up_t, 0)
    # all_above_t[z, x]: every up group of x leads to an ancestor of z.
    grp = sp.csr_matrix((np.ones(len(g_src), dtype=np.int32), (g_src, g_dst)), shape=(s_count, s_count))
    n_above = np.asarray(grp @ anc[:, zs].astype(np.int32))
    all_above_t = np.ascontiguousarray(((n_above == n_up[:, None]) & (n_up[:, None] > 0)).T)
    g_port = lv.up_port[gfirst].astype(np.uint8)
    high = np.flatnonzero(lv.level > 1)  # switches with a level above the leaves
    low = np.flatnonzero(lv.level == 1)
    high_at = np.full(s_count, -1, dtype=np.int32)
    high_at[high] = np.arange(len(high))
    main_seen = np.zeros(len(high), dtype=np.int32)  # main paths through every high switch so far
    seen_to = 0  # destinations (dummies included) counted into main_seen
    parent_high = g_dst[np.minimum(g0[high], max(len(g_dst) - 1, 0))] if len(g_dst) else np.zeros(0, np.int64)
    g0_high = g0[high].astype(np.int32)
    first_up_high = np.ascontiguousarray(first_up_t[:, high])
    n_up_high = np.maximum(n_up[high], 1).astype(np.int32)
    # twin_at[z, h]: position in ``high`` of the twin of high switch h for destinations on z (-1: none, or
    # not every up group of h leads above z, so h takes its first parent above z instead)
    twin = descend_sw[:, parent_high] if len(parent_high) else np.zeros((len(zs), 0), np.int64)
    twin_at = np.where(twin >= 0, high_at[np.maximum(twin, 0)], -1)
    # twin_any_at: the twin even where some up group of h does not lead above z (a switch short of a cable)
    twin_any_at = np.ascontiguousarray(twin_at.astype(np.int32))
    twin_at = np.ascontiguousarray(np.where(all_above_t[:, high], twin_at, -1).astype(np.int32))
    # other_twin[z, h]: h's up groups differ from its twin's (a switch short of a cable, or its twin)
    other_twin = (twin_any_at >= 0) & ((twin_at < 0) | (n_up[high][None, :] != n_up[high[np.maximum(twin_at, 0)]]))
    if refused is not None or not other_twin.any():
        other_twin = None
    del twin
    # columns of the high switches: a slice when they are consecutive switch indices (the usual order)
    hcols = slice(int(high[0]), int(high[-1]) + 1) if len(high) and high[-1] - high[0] + 1 == len(high) else high
    cable_seen = np.zeros(s_count * s_count if links.kmax > 1 else 1, dtype=np.int64)
    sp_seen = np.zeros(s_count, dtype=np.int64)
    balanced = fallback_sp = far_sib = 0
    irregular = refused is not None  # detours and shortest-path last resorts: our own balancing only
    up_ptr = np.searchsorted(g_src, np.arange(s_count + 1))
    share: list[np.ndarray] = []  # [S, S]: two switches with a common root, computed once when needed
    # With parallel cables the dummies route too (no entries): their climbs move OpenSM's cable counters.
    loop_ids, loop_lids = dest, dest_lid
    if links.kmax > 1 and sib is None and n_all > len(h_leaf):
        loop_ids = np.arange(n_total, dtype=np.int64)
        loop_lids = np.full(n_total, -1, dtype=np.int64)
        loop_lids[dest] = dest_lid
    for c0 in range(0, len(loop_ids), _CHUNK):
        ids = loop_ids[c0:c0 + _CHUNK]
        n = len(ids)
        ar = np.arange(n)
        # The main-path switches of a destination cover nested sets of switches (each is the parent
        # of the one below); going from the top down, the lowest covering one has the last word.
        if links.kmax == 1:  # hop holds ports
            hop = np.full((n, s_count), NO_PATH, dtype=np.uint8)
        else:  # hop holds next switches
            hop = np.full((n, s_count), -1, dtype=np.int32)
        covered = np.zeros((n, s_count), dtype=bool)
        for lev in range(top, 1, -1):
            u = chain[lev, ids]
            ok = u >= 0
            cov = anc[np.maximum(u, 0)] & ok[:, None]
            np.copyto(hop, climb_t[np.maximum(u, 0)], where=cov)
            covered |= cov
        zz = z_of[ids]
        covered[ar, zz] = True
        zp = z_pos[zz]
        above = anc_t[zz] & ~covered
        np.copyto(hop, descend_t[zp], where=above)
        # Off the main structure (switch-to-CA routes of other planes, degraded fabrics): climb to a
        # parent above the destination's switch; the first one, or round robin from a leaf.
        secondary = ~(covered | above)
        secondary &= lvl8 > 0
        upper = secondary[:, hcols]
        if sib is None:
            # main paths through every high switch before each destination, dummies included (its load order)
            hits = _main_path_hits(chain, high_at, seen_to, int(ids[-1]) + 1, len(high))
            before = np.cumsum(hits, axis=0, dtype=np.int32) - hits + main_seen[None, :]
            main_seen += hits.sum(axis=0, dtype=np.int32)
            before = before[ids - seen_to]
            seen_to = int(ids[-1]) + 1
            if counters is not None:  # switches whose counters sibling routes moved: their least loaded group
                before[:, high_at[counters.switches]] = counters.next_pos(ids)
        if sib is None and upper.any():
            # Round robin over the up groups when all of them lead above the destination's switch (OpenSM's
            # secondary paths follow its load-sorted group order, which spreads them the same way) ...
            # OpenSM reaches such a switch x from the first parent in the load order of x's twin A: the
            # ancestor of the destination's switch cabled to the same parents (the spine of the leaf's pod
            # at x's position). A's order moves once per main path through A, so consecutive destinations go
            # up through one port in blocks (fabric_route_downgoing_by_going_up, bubble_sort_down).
            tw = twin_at[zp]
            rank = np.take_along_axis(before, np.maximum(tw, 0), axis=1)
            rank %= n_up_high[None, :]
            rank += g0_high[None, :]
            val = (g_port if links.kmax == 1 else g_dst)[np.minimum(rank, max(len(g_dst) - 1, 0))]
            # ... else the first parent above the destination's switch.
            np.copyto(val, first_up_high[zp], where=tw < 0, casting="unsafe")
            # A switch with other up groups than its twin: the first of the twin's parents, in the twin's
            # order, that it is cabled to (OpenSM walks the twin's up groups until one leads down to it).
            mi, mh = np.nonzero(upper & other_twin[zp]) if other_twin is not None else (np.zeros(0, np.int64),) * 2
            if mi.size:
                tw_any = twin_any_at[zp[mi], mh]
                a = high[tw_any]
                x = high[mh]
                p0, n_a = before[mi, tw_any].astype(np.int64), np.maximum(n_up[a], 1)
                pick = np.full(len(mi), -1, dtype=np.int64)
                for k in range(int(n_a.max(initial=0))):
                    cand = g_dst[g0[a] + (p0 + k) % n_a]
                    pick = np.where((pick < 0) & (k < n_a) & (links.npar[x, cand] > 0), cand, pick)
                    if (pick >= 0).all():
                        break
                val[mi, mh] = (links.port_to(x, pick, np.zeros(len(x), dtype=np.int64)) if links.kmax == 1
                               else pick)
            if isinstance(hcols, slice):
                np.copyto(hop[:, hcols], val, where=upper, casting="unsafe")
            else:
                hop[:, hcols] = np.where(upper, val, hop[:, hcols])
        if sib is None and not irregular:
            _stray_leaves(hop, secondary, low, zz, ids, m_leaf, lv, links, g0, n_up, sway, g_dst, share)
        if links.kmax == 1:
            port = hop
        else:  # parallel cables: climbs share one counter per cable, descents follow the main paths' counters
            for lev in range(1, top + 1):  # main-path switches go down along it (set below)
                u = chain[lev, ids]
                hop[ar[u >= 0], u[u >= 0]] = -1
            # a climb is counted when the climbing switch routes something new: it is below the main
            # path (its subtree is reached first there) or has an adapter of its own; descents (above)
            # are not counted there, they take the first cable here and are corrected below
            port = links.port_to_rows(hop, cable_seen, (covered | has_ca[None, :]) & ~above)
            dx = links.multi  # only descents over parallel cables need the main paths' counters
            di, dj = np.nonzero(above[:, dx])
            if di.size:
                dx = dx[dj]
                low_sw = hop[di, dx]
                par = links.npar[dx, np.maximum(low_sw, 0)] > 1
                di, dx, low_sw = di[par], dx[par], low_sw[par]
                port[di, dx] = links.port_to(dx, low_sw, main_edges.before(low_sw, dx, ids[di]))
        for lev in range(1, top + 1):  # switches on the main path go down along it
            u = chain[lev, ids]
            ok = u >= 0
            port[ar[ok], u[ok]] = down[lev, ids[ok]]
        if sib is not None:
            at_leaf = np.flatnonzero(lv.level[zz] == 1)  # CAs on roots: their own root's cone only
            sub = port[at_leaf]
            far_sib += _sibling_fill(sib, sub, secondary[at_leaf], zz[at_leaf], m_leaf[ids[at_leaf]], g0, n_up,
                                     sway, g_dst, up_ptr, low)
            port[at_leaf] = sub
        ri, rx = np.nonzero(secondary[:, low]) if sib is None and irregular else (np.zeros(0, np.int64),) * 2
        rx = low[rx]
        if rx.size:
            par = np.full((len(rx), int(n_up.max(initial=0)) or 1), -1, dtype=np.int64)
            for j in range(par.shape[1]):
                has = n_up[rx] > j
                par[has, j] = g_dst[g0[rx[has]] + j]
            good = (par >= 0) & anc[np.maximum(par, 0), zz[ri][:, None]]
            cnt = good.sum(axis=1)
            pick = np.where(cnt > 0, ids[ri] % np.maximum(cnt, 1), -1)
            col = (np.cumsum(good, axis=1) - 1 == pick[:, None]) & good
            chosen = np.where(cnt > 0, par[np.arange(len(rx)), col.argmax(axis=1)], -1)
            port[ri, rx] = links.port_to(rx, chosen, ids[ri] // np.maximum(cnt, 1))
            balanced += int((cnt > 0).sum())
        sj, sx = (np.nonzero(secondary & (port == NO_PATH)) if sib is None and irregular
                  else (np.zeros(0, np.int64),) * 2)
        if sx.size:
            order = np.argsort(sx, kind="stable")
            xs_sorted = sx[order]
            start = np.flatnonzero(np.r_[True, xs_sorted[1:] != xs_sorted[:-1]])
            rank = np.empty(len(sx), dtype=np.int64)
            rank[order] = np.arange(len(sx)) - np.repeat(start, np.diff(np.r_[start, len(sx)]))
            rank += sp_seen[sx]
            np.add.at(sp_seen, sx, 1)
            port[sj, sx] = spread_shortest_ports(dist, peer, sx, zz[sj], rank)
            fallback_sp += int(sx.size)
        cols = loop_lids[c0:c0 + n]
        if n and cols[-1] - cols[0] == n - 1 and np.all(np.diff(cols) == 1):
            lft[:, cols[0]:cols[-1] + 1] = port.T
        else:
            keep = cols >= 0  # dummies write nothing
            lft[:, cols[keep]] = port[keep].T

    if late_switches:  # parallel cables: the climbs go on counting, switch by switch in GUID order
        targets, sw_lids = tg.target[sw], tg.lids[sw]
        o = np.argsort(guid_key(f.guid[f.switches[targets]]), kind="stable")
        lft[:, sw_lids[o]] = _switch_lid_table(lv, links, chain, g_src, g_dst, targets[o], cable_seen, main_edges,
                                                  has_ca, extra_load)
    sibling_routes = 0
    if refused is None and sib is None and lv.sibling_links:
        own = np.full(lft.shape[1], -1, dtype=np.int64)
        own[tg.lids] = tg.target
        sibling_routes = _fill_from_siblings(f, lv, lft, own)
    notes = st.notes + lv.notes + _irregularities(f, lv, n_up)
    if sibling_routes:
        notes = [n for n in notes if "carry no up/down route" not in n]
        notes.append(f"{lv.sibling_links} cable(s) join switches of the same level: {sibling_routes} route(s) go over "
                     "them as OpenSM's ftree sets them (sibling groups: to the switch that delivers the LID, or "
                     "where no up/down route exists)")
    if sib is not None:
        sw_table, far = _sibling_switch_lids(sib, f, links, tg.target[sw], max_cn, g0, n_up, sway, g_dst, up_ptr,
                                             low)
        lft[:, tg.lids[sw]] = sw_table
        far_sib += far
        notes = [n for n in notes if "carry no up/down route" not in n]
        notes.append(f"{sib.sibling_cables} cable(s) join roots: routed over them as OpenSM's ftree does "
                     "(sibling groups, depth first, shortest kept)")
        if sib.parallel_pairs:
            notes.append(f"{sib.parallel_pairs} root pair(s) joined by parallel cables: the first cable is taken, "
                         "where OpenSM spreads routes over them by its counters")
        if far_sib:
            notes.append(f"{far_sib} route(s) cross two or more root-to-root cables; among equally short ones "
                         "the lowest port is taken, where OpenSM's depth-first order may pick another")
        if (lv.level[n_sw] > 1).any():
            notes.append(f"{int((lv.level[n_sw] > 1).sum())} CA port(s) on roots are reached from their own root's "
                         "cone only; OpenSM's routes to them over root-to-root cables are not modelled")
    names = f.node_name[f.switches]
    info = {"ftree": {
        "levels": int(lv.top), "leaves": int(len(leaves)), "max_hosts_per_leaf": max_cn,
        "dummy_nodes": int(n_all - len(h_leaf)), "leaf_detours": balanced,
        "shortest_path_fallbacks": fallback_sp, "sibling_cables": 0 if sib is None else sib.sibling_cables,
        "sibling_far_routes": far_sib, "sibling_routes": sibling_routes, "compute_nodes": int(len(h_lid)),
        "non_compute_nodes": int(len(non)),
        "io_nodes": int(st.is_io.sum()), "roots": [str(names[r]) for r in st.roots] if st.roots_given else None,
        "notes": notes,
    }}
    return Routing(f, lft, "ftree", info)


def _stray_leaves(hop: np.ndarray, secondary: np.ndarray, low: np.ndarray, zz: np.ndarray, ids: np.ndarray,
                  m_leaf: np.ndarray, lv: Levels, links: _Links, g0: np.ndarray, n_up: np.ndarray,
                  sway: np.ndarray, g_dst: np.ndarray, share: list[np.ndarray]) -> None:
    """Leaves no main-path switch covers (one lacks the cable to it): climb as OpenSM's secondary paths reach them.

    From the destination's leaf X, OpenSM walks X's up groups in load order (the main one first), each
    parent ``g`` going down to the leaves cabled to it, then up and down to the others. A stray leaf
    takes, among its parents ``p``, the one reached with the fewest hops (``p == g``: 1, ``p`` and
    ``g`` under a common root: 3), then through the earliest group of X, then its lowest port.
    ``hop[i, x]`` is set in place (next switch, or port without parallel cables).
    """
    i, j = np.nonzero(secondary[:, low])
    keep = lv.level[zz[i]] == 1
    i, x = i[keep], low[j[keep]]
    if not i.size:
        return
    width = int(n_up.max(initial=0))
    order = _load_order(zz[i], m_leaf[ids[i]], g0, n_up, sway, width)  # [P, W] up groups of X
    g = np.where(order >= 0, g_dst[np.maximum(order, 0)], -1)
    par = np.full((len(x), width), -1, dtype=np.int64)  # parents of the stray leaf, port order
    k = np.arange(width)[None, :]
    has = k < n_up[x][:, None]
    par[has] = g_dst[(g0[x][:, None] + k)[has]]
    pp, gg = par[:, :, None], g[:, None, :]  # [P, parents, groups]
    ok = (pp >= 0) & (gg >= 0)
    if not share:  # ``share`` caches the [S, S] common-root matrix over the chunks
        t = lv.anc[lv.level == lv.top].astype(np.float32)
        share.append((t.T @ t) > 0)
    common = share[0][np.maximum(pp, 0), np.maximum(gg, 0)]
    hops = np.where(ok & (pp == gg), 1, np.where(ok & common, 3, 99))
    key = (hops * (width + 1) + np.arange(width)[None, None, :]) * (width + 1) + np.arange(width)[None, :, None]
    best = key.reshape(len(x), -1).argmin(axis=1)
    reach = key.reshape(len(x), -1)[np.arange(len(x)), best] < 99 * (width + 1) ** 2
    p = par[np.arange(len(x)), best // width]
    p = np.where(reach, p, -1)
    if links.kmax == 1:
        hop[i, x] = links.port_to(x, p, np.zeros(len(x), dtype=np.int64))
    else:
        hop[i, x] = p


def _fill_from_siblings(fabric: Fabric, lv: Levels, lft: np.ndarray, own: np.ndarray) -> int:
    """Routes over cables between same-level switches (OpenSM's sibling groups); entries set.

    OpenSM's ftree walks a switch's sibling groups after its down and up groups
    (``fabric_route_upgoing_by_going_down``, ``fabric_route_downgoing_by_going_up``), keeping a
    route when it has fewer hops: a switch cabled to the switch that delivers a LID (``own``)
    goes straight to it; a switch left without a route reaches the target through a sibling
    that has one (not back through itself), the first such cable in port order, repeated for
    chains of siblings. Loops over the sibling cables, vectorized over LIDs.
    """
    f = fabric
    si = f.switch_index
    d = np.flatnonzero((si[f.dl_src] >= 0) & (si[f.dl_dst] >= 0))
    x, y = si[f.dl_src[d]].astype(np.int64), si[f.dl_dst[d]].astype(np.int64)
    same = (lv.level[x] == lv.level[y]) & (lv.level[x] > 0) & (x != y)
    x, y, px, py = x[same], y[same], f.dl_src_port[d][same], f.dl_dst_port[d][same]
    o = np.lexsort((px, x))
    x, y, px, py = x[o], y[o], px[o], py[o]
    total = 0
    before = lft[x].copy()
    for a, b, pa in zip(x.tolist(), y.tolist(), px.tolist(), strict=True):
        direct = own == b
        total += int((lft[a, direct] != pa).sum())
        lft[a, direct] = pa
    for _ in range(len(x)):
        changed = 0
        for a, b, pa in zip(x.tolist(), y.tolist(), px.tolist(), strict=True):
            back = py[(x == b) & (y == a)]  # ports of b cabled to a
            hole = (lft[a] == NO_PATH) & (lft[b] != NO_PATH) & ~np.isin(lft[b], back)
            hole[0] = False
            n = int(hole.sum())
            if n:
                lft[a, hole] = pa
                changed += n
        total += changed
        if not changed:
            break
    # A switch routed over a sibling cable goes on down (fabric_route_upgoing_by_going_down): its
    # children left without a route climb to it, the lowest port first, level by level.
    new = np.zeros(lft.shape, dtype=bool)
    new[x] = lft[x] != before
    up = np.isin(y_all := lv.up_dst, np.flatnonzero(new.any(axis=1)))
    for _ in range(int(lv.level.max(initial=0))):
        c, u, pc = lv.up_src[up], y_all[up], lv.up_port[up]
        if not len(c):
            break
        o = np.lexsort((pc, c))[::-1]  # the lowest port of a child written last
        c, u, pc = c[o], u[o], pc[o]
        hole = new[u] & (lft[c] == NO_PATH)  # [links, LIDs]
        li, lid = np.nonzero(hole)
        lft[c[li], lid] = pc[li].astype(np.uint8)
        total += len(np.unique(c[li] * lft.shape[1] + lid))
        got = np.zeros(lft.shape[0], dtype=bool)
        got[c[li]] = True
        new[:] = False
        new[c[li], lid] = True
        up = np.isin(y_all, np.flatnonzero(got))
    return total


def _sibling_counters(f: Fabric, lv: Levels, chain: np.ndarray, idx: np.ndarray, c: np.ndarray, real: np.ndarray,
                      n_all: int, m_leaf: np.ndarray, g0: np.ndarray, n_up: np.ndarray, sway: np.ndarray,
                      g_src: np.ndarray, g_dst: np.ndarray, has_ca: np.ndarray) -> UpCounters | None:
    """Up counters of the leaves' parents that route dummies over same-level cables (:mod:`.ftree_counters`).

    ``idx``/``c``: the destinations whose main path reaches a leaf's parent, and that parent.
    """
    si = f.switch_index
    d = np.flatnonzero((si[f.dl_src] >= 0) & (si[f.dl_dst] >= 0))
    a, b = si[f.dl_src[d]].astype(np.int64), si[f.dl_dst[d]].astype(np.int64)
    keep = (lv.level[a] == 2) & (lv.level[b] == 2) & (a != b) & (n_up[a] > 0) & ~sway[a]
    pair = np.unique(a[keep] * len(si) + b[keep])
    if not len(pair):
        return None
    s_count = len(n_up)
    sib_a, sib_b = pair // len(si), pair % len(si)
    # routing a sibling creates a route when an adapter hangs on it, its parents or their children
    up = sp.csr_matrix((np.ones(len(g_src), dtype=np.int32), (g_src, g_dst)), shape=(s_count, s_count))
    ca = has_ca.astype(np.int32)
    reach = has_ca | ((up @ ca) > 0) | ((up @ (up.T @ ca)) > 0)
    dummy = np.ones(n_all, dtype=bool)
    dummy[real] = False
    dm = np.flatnonzero(dummy)
    leaf = chain[1, dm]
    order = _load_order(leaf, m_leaf[dm], g0, n_up, sway, max(1, int(n_up.max(initial=0))))
    parents = np.where(order >= 0, g_dst[np.maximum(order, 0)], -1)
    bumps = dummy_sibling_bumps(parents, sib_a, sib_b, reach)
    if not bumps.any():
        return None
    bumpy = np.unique(parents[bumps > 0])
    on = np.isin(c, bumpy)
    extra = np.zeros(n_all + 1, dtype=np.int64)
    extra[dm] = bumps[:, 0]  # the main path's own parent: onto the group it just took
    mx, md = c[on], idx[on]
    ci, ck = np.nonzero(bumps[:, 1:] > 0)  # parents visited on secondary paths: onto their least loaded group
    x = np.r_[mx, parents[ci, ck + 1]]
    dd = np.r_[md, dm[ci]]
    inc = np.r_[1 + extra[np.minimum(md, n_all)] * (md < n_all), bumps[ci, ck + 1]]
    return UpCounters(x, dd, inc, np.r_[np.ones(len(mx), bool), np.zeros(len(ci), bool)], n_up)


def _main_path_hits(chain: np.ndarray, high_at: np.ndarray, lo: int, hi: int, n_high: int) -> np.ndarray:
    """``hits[i - lo, h]``: 1 where the main path of destination ``i`` (``lo <= i < hi``) passes high switch ``h``.

    A switch's up groups are load-sorted (``bubble_sort_down``) and its load moves once per main path,
    the dummy destinations' included: the running sum of these is how far its round robin has gone.
    """
    hits = np.zeros((hi - lo, n_high), dtype=np.int32)
    for lev in range(2, chain.shape[0]):
        u = chain[lev, lo:hi]
        i = np.flatnonzero(u >= 0)
        h = high_at[u[i]]
        hits[i[h >= 0], h[h >= 0]] = 1
    return hits


#: Targets x groups handled at once in :func:`_switch_lid_table`.
_SW_BLOCK = 1 << 22


def _switch_lid_table(lv: Levels, links: _Links, chain: np.ndarray, g_src: np.ndarray, g_dst: np.ndarray,
                      targets: np.ndarray, up_seen: np.ndarray | None = None,
                      main_edges: _MainEdges | None = None, has_ca: np.ndarray | None = None,
                      extra_load: np.ndarray | None = None) -> np.ndarray:
    """``out[x, j]``: port of switch ``x`` towards switch ``targets[j]``, as OpenSM's ftree routes switch LIDs.

    ``fabric_route_to_switches`` runs after every CA is routed: from the target T it sets every switch
    below T, then climbs depth first through T's up groups in load order (``bubble_sort_down``: main
    paths through the group, then the upper switch's index) and, at every switch it climbs to, sets the
    switches below that are not set yet with fewer hops. So a switch below T goes up to T; an
    ancestor of T goes down towards the child it was first reached from; any other switch goes up
    towards the lowest common ancestor first reached (fewest hops first, then depth-first order); a
    switch with no common ancestor gets none. Depth-first order is the order of the up-group positions
    along the way: a key with one digit per level, computed for all targets at once level by level.
    """
    s_count = lv.level.shape[0]
    out = np.full((s_count, len(targets)), NO_PATH, dtype=np.uint8)
    if not len(targets) or not len(g_src):
        out[targets, np.arange(len(targets))] = 0
        return out
    level = lv.level.astype(np.int64)
    top = int(level.max(initial=0))
    # Loads at switch-routing time: main paths through each up group, dummies included.
    gk = g_src * s_count + g_dst
    gsort = np.argsort(gk, kind="stable")
    load = np.zeros(len(g_src), dtype=np.int64)
    for lev in range(1, chain.shape[0] - 1):
        x, y = chain[lev], chain[lev + 1]
        ok = (x >= 0) & (y >= 0)
        np.add.at(load, gsort[np.searchsorted(gk[gsort], x[ok] * s_count + y[ok])], 1)
    if extra_load is not None:  # counts sibling routes added (:mod:`.ftree_counters`)
        load += extra_load
    o = np.lexsort((np.arange(len(g_src)), load, g_src))  # equal loads keep the index (tuple) order
    first_of_src = np.searchsorted(g_src, g_src)
    pos = np.empty(len(g_src), dtype=np.int64)
    pos[o] = np.arange(len(g_src)) - first_of_src[o]
    j_src = np.arange(len(g_src)) - first_of_src  # a parent's place among the switch's groups
    by_dst = np.argsort(g_dst, kind="stable")
    j_dst = np.empty(len(g_src), dtype=np.int64)  # a child's place among the upper switch's groups
    j_dst[by_dst] = np.arange(len(g_src)) - np.searchsorted(g_dst[by_dst], g_dst[by_dst])
    del by_dst
    dbits = int(max(pos.max(), j_dst.max(), j_src.max())).bit_length() or 1
    kbits = dbits * (top - 1)  # one digit per level climbed
    need = top.bit_length() + kbits + dbits + 1
    if need > 62:
        raise RoutingError(f"ftree: {top} levels of up to {1 << dbits} up groups are too many to order switch routes")
    dt = np.int32 if need <= 30 else np.int64
    inf = dt(1 << (top.bit_length() + kbits))  # above every (level, key); shifted by a digit it still fits
    mask = dt((1 << dbits) - 1)
    up_ptr = np.searchsorted(g_src, np.arange(s_count + 1))
    n_up = np.diff(up_ptr)
    downs = [np.flatnonzero(level[g_src] == lev) for lev in range(top - 1, 0, -1)]  # groups by lower switch
    down_seg = [np.flatnonzero(np.r_[True, g_src[g][1:] != g_src[g][:-1]]) for g in downs]
    step = max(1, _SW_BLOCK // len(g_src))
    for t0 in range(0, len(targets), step):
        t = targets[t0:t0 + step]
        b = np.arange(len(t))
        # Ancestors of every target (sparse): key = depth-first position digits, via = child first reached from.
        best = np.full((len(t), s_count), inf, dtype=dt)
        via = np.full((len(t), s_count), -1, dtype=np.int32)
        fb, fx, fk = b, t, np.zeros(len(t), dtype=np.int64)
        for lev in range(int(level[t].min(initial=1)), top + 1):
            on = level[fx] == lev
            best[fb[on], fx[on]] = (lev << kbits) | fk[on]
            cb, cx, ck = fb[on], fx[on], fk[on]
            rep = n_up[cx]
            g = np.repeat(up_ptr[cx], rep) + (np.arange(int(rep.sum())) - np.repeat(np.cumsum(rep) - rep, rep))
            nb, nx = np.repeat(cb, rep), g_dst[g]
            val = (((np.repeat(ck, rep) << dbits) | pos[g]) << dbits) | j_dst[g]
            o = np.lexsort((val, nx, nb))
            first = np.r_[True, (nb[o][1:] != nb[o][:-1]) | (nx[o][1:] != nx[o][:-1])] if len(o) else o.astype(bool)
            keep = o[first]
            via[nb[keep], nx[keep]] = g_src[g[keep]]
            rest = (fb, fx, fk)
            fb, fx, fk = (np.r_[rest[0][~on], nb[keep]], np.r_[rest[1][~on], nx[keep]],
                          np.r_[rest[2][~on], val[keep] >> dbits])
        # Every other switch: the best common ancestor of its parents (fewest hops, then depth-first order).
        climb_to = np.full((len(t), s_count), -1, dtype=np.int32)
        for g, seg in zip(downs, down_seg, strict=True):
            mins = np.minimum.reduceat((best[:, g_dst[g]] << dbits) | j_src[g].astype(dt), seg, axis=1)
            src = g_src[g][seg]
            best[:, src] = np.minimum(best[:, src], mins >> dbits)
            climb_to[:, src] = np.where(mins < (inf << dbits), g_dst[g][np.minimum(seg[None, :] + (mins & mask),
                                                                                 len(g) - 1)], -1)
        ai, ax = np.nonzero(via >= 0)
        if main_edges is None:
            x = np.broadcast_to(np.arange(s_count)[None, :], best.shape)
            port = links.port_to(x, climb_to, 0)
            port[ai, ax] = links.port_to(ax, via[ai, ax], 0)
        else:  # parallel cables: a climb takes the next cable of the upper switch's counter, a descent
            # the least loaded by main paths (OpenSM's counter_up and counter_down)
            climb_to[ai, ax] = -1
            climb_to[b, t] = -1
            # counted when the switch routes something new below: an adapter, or a child climbing to it
            counted = np.broadcast_to(has_ca[None, :], climb_to.shape).copy()
            if not has_ca.all():
                kid = climb_to[:, lv.up_src] == lv.up_dst[None, :]  # [targets, up links]
                ti, li = np.nonzero(kid)
                counted[ti, lv.up_dst[li]] = True
            port = links.port_to_rows(climb_to, up_seen, counted)
            low_sw = via[ai, ax]
            port[ai, ax] = links.port_to(ax, low_sw, 0)
            par = links.npar[ax, low_sw] > 1
            ai, ax, low_sw = ai[par], ax[par], low_sw[par]
            port[ai, ax] = links.port_to(ax, low_sw, main_edges.before(low_sw, ax, np.full(len(ax), main_edges.n)))
        port[b, t] = 0
        out[:, t0:t0 + len(t)] = port.T
    return out


def _picked(m: np.ndarray, n: np.ndarray, sway: np.ndarray) -> np.ndarray:
    """Position (in group order) of the up group a switch takes for its ``m``-th main path (``n`` groups)."""
    n = np.maximum(n, 1)
    pos, rnd = m % n, m // n
    return np.where(sway & (rnd % 2 == 1), n - 1 - pos, pos)


def _load_order(owner: np.ndarray, m: np.ndarray, g0: np.ndarray, n_up: np.ndarray, sway: np.ndarray,
                width: int) -> np.ndarray:
    """Up groups of ``owner`` as sorted before its ``m``-th main path (first: the one it takes), -1 padded.

    Round robin leaves the groups not yet taken this round first, then those taken (OpenSM's
    ``bubble_sort_down`` on ``counter_down``); a swaying switch has the taken ones in reverse.
    """
    n = np.maximum(n_up[owner], 1)[:, None]
    k = np.arange(max(width, 1))[None, :]
    p, rnd = (m[:, None] % n), (m[:, None] // n)
    after = k < n - p
    if sway.any():
        seq = np.where(after, p + k, p - 1 - (k - (n - p)))
        seq = np.where(sway[owner][:, None] & (rnd % 2 == 1), n - 1 - seq, seq)
    else:
        seq = (p + k) % n
    return np.where(k < n_up[owner][:, None], g0[owner][:, None] + seq, -1)


def _sources(sib: RootSiblings, groups: np.ndarray, g_dst: np.ndarray) -> np.ndarray:
    """Root positions of up groups (-1 stays -1)."""
    return np.where(groups >= 0, sib.root_at[g_dst[np.maximum(groups, 0)]], -1)


def _sibling_fill(sib: RootSiblings, port: np.ndarray, secondary: np.ndarray, leaf: np.ndarray, m: np.ndarray,
                  g0: np.ndarray, n_up: np.ndarray, sway: np.ndarray, g_dst: np.ndarray, up_ptr: np.ndarray,
                  low: np.ndarray) -> int:
    """Route the adapters of a chunk over the roots' sibling cables (``port[i, x]``, in place); far routes.

    Sources: the leaf's up groups in their load order at the destination's turn (``m`` main paths
    before it): the main path's root first, then the secondary paths OpenSM routes after it.
    """
    src = _sources(sib, _load_order(leaf, m, g0, n_up, sway, int(n_up.max(initial=0))), g_dst)
    root_port, leaf_port, _, far = sib.route(src, g_dst, up_ptr, low)
    r = sib.roots
    port[:, r] = np.where(secondary[:, r], root_port, port[:, r])
    port[:, low] = np.where(secondary[:, low], leaf_port, port[:, low])
    return far


def _sibling_switch_lids(sib: RootSiblings, f: Fabric, links: _Links, targets: np.ndarray, max_cn: int,
                         g0: np.ndarray, n_up: np.ndarray, sway: np.ndarray, g_dst: np.ndarray, up_ptr: np.ndarray,
                         low: np.ndarray) -> tuple[np.ndarray, int]:
    """``out[x, j]``: port of switch ``x`` towards switch ``targets[j]`` when roots are cabled to each other.

    OpenSM routes switch LIDs after the adapters (``fabric_route_to_switches``): a root's LID from the
    root alone; a leaf's LID from each of its up groups in the load order the adapters left (every
    leaf routed ``max_cn`` main paths, dummies included).
    """
    s_count = f.num_switches
    is_root = sib.root_at[targets] >= 0
    m = np.full(len(targets), max_cn, dtype=np.int64)
    src = _sources(sib, _load_order(targets, m, g0, n_up, sway, max(1, int(n_up.max(initial=0)))), g_dst)
    src[is_root] = -1
    src[is_root, 0] = sib.root_at[targets[is_root]]
    root_port, leaf_port, _, far = sib.route(src, g_dst, up_ptr, low)
    out = np.full((s_count, len(targets)), NO_PATH, dtype=np.uint8)
    out[sib.roots] = root_port.T
    out[low] = leaf_port.T
    # A leaf's own roots go down to it (first cable); every switch reaches itself through port 0.
    j, k = np.nonzero(src >= 0)
    own = ~is_root[j]
    out[sib.roots[src[j[own], k[own]]], j[own]] = links.port_to(sib.roots[src[j[own], k[own]]], targets[j[own]], 0)
    out[targets, np.arange(len(targets))] = 0
    return out, far


def _irregularities(fabric: Fabric, lv: Levels, n_up: np.ndarray) -> list[str]:
    """Why the fabric is not a regular fat tree (what OpenSM would refuse), in words."""
    notes = []
    names = fabric.node_name[fabric.switches]
    n_links_up = np.bincount(lv.up_src, minlength=len(n_up))
    for lev in range(1, lv.top):
        at = np.flatnonzero(lv.level == lev)
        if at.size == 0:
            continue
        most = np.bincount(n_links_up[at]).argmax()
        short = at[n_links_up[at] < most]
        if short.size:
            who = ", ".join(str(names[s]) for s in short[:5]) + (" ..." if short.size > 5 else "")
            notes.append(f"level {lev}: {short.size} switch(es) have fewer than {most} up links ({who}); "
                         "their destinations are spread over the up links they have")
    return notes
