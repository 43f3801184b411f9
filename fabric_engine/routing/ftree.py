"""OpenSM's fat-tree routing (``ftree``), index based, in closed form.

OpenSM's ``osm_ucast_ftree.c`` routes every compute node in index order (leaf by
leaf, port by port, padding short leaves with dummy nodes so counters stay even).
From the destination's leaf it climbs to the least-loaded up port group
(``counter_down``; lowest index on ties) and routes the destination down along that
*main path*; every switch below the main path routes up towards it, and every
other ancestor of the leaf routes down. On a full fat tree this is D-mod-k: every
port carries the same number of destinations and shift permutations are
contention-free.

Here the main path of every destination is computed level by level for all
destinations at once: with even counters, "least loaded, lowest index" is a round
robin over the up groups of a switch in the order destinations reach it, and over
the ports of a group. The tables then follow from the ancestry of the levelled
fabric:

* a switch on the main path routes down along it;
* a switch below the lowest main-path switch ``Z`` covering it climbs to its first
  parent that ``Z`` covers (parallel cables taken round robin);
* another ancestor of the destination's leaf routes down towards it;
* anything else (OpenSM's *secondary* paths, e.g. a spine of another plane) climbs
  to a parent above the leaf: round robin over its up groups when all of them lead
  there (OpenSM takes its groups in load order, which spreads them likewise), else
  the first such parent; from a leaf that lost the main-path cable (a degraded
  fabric), round robin over the parents above the destination, so the balance holds
  where the structure allows (``info["ftree"]["leaf_detours"]``); the last resort is
  a shortest path, spread round robin over the equal ports
  (``info["ftree"]["shortest_path_fallbacks"]``; such routes are not up/down).

Unlike OpenSM, a degraded fat tree is not refused: ``info["ftree"]["notes"]`` says
which switches break the regular structure. Switch LIDs go on the first port of a
shortest path, as OpenSM's ftree does for switch-to-switch routes (no balancing).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import RoutingError
from ..topology import Fabric
from .graph import lid_targets, switch_distances, switch_port_peers
from .levels import Levels, levels
from .tables import NO_PATH, Routing

__all__ = ["ftree", "first_shortest_table", "spread_shortest_ports"]

#: Destinations filled per step (bounds the ``switches x chunk`` temporaries).
_CHUNK = 4096


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

    def __init__(self, fabric: Fabric) -> None:
        f = fabric
        si = f.switch_index
        d = np.flatnonzero((si[f.dl_src] >= 0) & (si[f.dl_dst] >= 0))
        src, dst = si[f.dl_src[d]].astype(np.int64), si[f.dl_dst[d]].astype(np.int64)
        order = np.lexsort((f.dl_src_port[d], dst, src))
        self.s = s = f.num_switches
        key = src[order] * s + dst[order]
        port = f.dl_src_port[d][order].astype(np.uint8)
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, dtype=np.int64)
        rank = np.arange(len(key)) - np.repeat(first, np.diff(np.r_[first, len(key)]))
        self.kmax = int(rank.max(initial=0)) + 1
        # table[x, y, k]: port of the k-th cable from x to y; npar[x, y]: number of such cables.
        self.table = np.full((s, s, self.kmax), NO_PATH, dtype=np.uint8)
        self.table[key // s, key % s, rank] = port
        self.npar = np.zeros((s, s), dtype=np.int16)
        np.add.at(self.npar, (key // s, key % s), 1)

    def port_to_rows(self, dst: np.ndarray, seen: np.ndarray | None = None) -> np.ndarray:
        """``out[i, x]``: port of switch ``x`` towards ``dst[i, x]``.

        Parallel cables are taken round robin per ``(x, dst)`` in destination order, as
        OpenSM's per-port counters do; ``seen`` (int64 ``[S * S]``) carries the counts over calls.
        """
        s = self.s
        flat = np.arange(s, dtype=np.int64)[None, :] * s + np.maximum(dst, 0)
        if self.kmax == 1:
            out = self.table.ravel()[flat]
        else:
            live = dst >= 0
            key = np.where(live, flat, -1).ravel()  # destination-major: earlier destinations first
            order = np.argsort(key, kind="stable")
            sk = key[order]
            first = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
            rank = np.empty(len(key), dtype=np.int64)
            rank[order] = np.arange(len(key)) - np.repeat(first, np.diff(np.r_[first, len(key)]))
            rank = rank.reshape(dst.shape)
            if seen is not None:
                rank += seen[np.maximum(flat, 0)]
                np.add.at(seen, flat[live], 1)
            n = np.maximum(self.npar.ravel()[flat], 1)
            out = self.table.ravel()[flat * self.kmax + rank % n]
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


def ftree(fabric: Fabric) -> Routing:
    """Route a fat tree like OpenSM's ``ftree``, degraded fat trees included (see module doc).

    >>> from fabric_engine.topology.generate import fat_tree
    >>> from fabric_engine.routing.quality import port_loads
    >>> r = ftree(fat_tree(hosts=8, radix=4))
    >>> sorted(set(port_loads(r).up_counts().tolist()))  # every leaf up port carries 3 remote hosts
    [3]
    """
    f = fabric
    s_count = f.num_switches
    dist = switch_distances(f)
    peer = switch_port_peers(f)
    lv = levels(f, dist)
    tg = lid_targets(f)
    lft = np.full((s_count, f.max_lid + 1), NO_PATH, dtype=np.uint8)
    if not tg.is_host.any():
        raise RoutingError("ftree: the fabric has no host connected to a switch")
    links = _Links(f)

    # Switch LIDs: first port of a shortest path.
    sw = ~tg.is_host
    lft[:, tg.lids[sw]] = first_shortest_table(dist, peer, tg.target[sw])

    # Compute nodes in index order: leaf by leaf, port by port, short leaves padded with dummies.
    h = np.flatnonzero(tg.is_host)
    o = np.lexsort((tg.exit_port[h], tg.target[h]))
    h_lid, h_leaf, h_exit = tg.lids[h][o], tg.target[h][o], tg.exit_port[h][o]
    leaves, first_of, per_leaf = np.unique(h_leaf, return_index=True, return_counts=True)
    max_cn = int(per_leaf.max())
    slot = np.arange(len(h_leaf)) - np.repeat(first_of, per_leaf)
    dest = np.searchsorted(leaves, h_leaf) * max_cn + slot  # position among all (dummy) destinations
    n_all = len(leaves) * max_cn

    # Up groups (distinct upper neighbours) of every switch, in index order.
    gkey = lv.up_src * s_count + lv.up_dst
    gfirst = np.flatnonzero(np.r_[True, gkey[1:] != gkey[:-1]]) if len(gkey) else np.zeros(0, dtype=np.int64)
    g_src, g_dst = lv.up_src[gfirst], lv.up_dst[gfirst]
    g_n = np.diff(np.r_[gfirst, len(gkey)])
    n_up = np.bincount(g_src, minlength=s_count)
    g0 = np.searchsorted(g_src, np.arange(s_count))

    # Main paths: chain[l, i] is the level-l switch of destination i, down[l, i] its port towards i.
    top = max(1, lv.top)
    chain = np.full((top + 1, n_all), -1, dtype=np.int64)
    down = np.full((top + 1, n_all), NO_PATH, dtype=np.uint8)
    chain[1] = np.repeat(leaves, max_cn)
    down[1, dest] = h_exit
    for lev in range(1, top):
        cur = chain[lev]
        idx = np.flatnonzero((cur >= 0) & (n_up[np.maximum(cur, 0)] > 0))
        if idx.size == 0:
            break
        c = cur[idx]
        order = np.argsort(c, kind="stable")
        sc = c[order]
        starts = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
        rank = np.empty(len(c), dtype=np.int64)
        rank[order] = np.arange(len(c)) - np.repeat(starts, np.diff(np.r_[starts, len(c)]))
        g = g0[c] + rank % n_up[c]
        k = (rank // n_up[c]) % g_n[g]
        chain[lev + 1, idx] = g_dst[g]
        down[lev + 1, idx] = lv.up_rport[gfirst[g] + k]

    # Who to climb to (first parent covered by Z) and who to descend to (first child above a leaf).
    anc = lv.anc
    anc_t = np.ascontiguousarray(anc.T)
    climb = _first_related(lv, lv.up_src, lv.up_dst, s_count, np.arange(s_count), anc_t)  # [X, Z]
    leaf_pos = np.full(s_count, -1, dtype=np.int64)
    leaf_pos[leaves] = np.arange(len(leaves))
    descend = _first_related(lv, lv.up_dst, lv.up_src, s_count, leaves, anc[:, leaves])  # [X, leaf]

    lvl8 = lv.level.astype(np.int8)[None, :]
    if len(leaves) > s_count:
        raise RoutingError("ftree: more leaves than switches")
    first_up = _first_related(lv, lv.up_src, lv.up_dst, s_count, leaves, anc[:, leaves])  # [X, leaf]
    # Destination-major tables: every per-destination lookup below is a row gather.
    # climb_t[z, x]: port of x towards its first parent covered by z (and so on for the others).
    all_x = np.broadcast_to(np.arange(s_count)[None, :], (s_count, s_count))
    climb_t = np.ascontiguousarray(climb.T)
    descend_t, first_up_t = np.ascontiguousarray(descend.T), np.ascontiguousarray(first_up.T)
    if links.kmax == 1:  # no parallel cables: tables of ports straight away
        climb_t = links.port_to(all_x, climb_t, 0)
        descend_t = links.port_to(all_x[:len(leaves)], descend_t, 0)
        first_up_t = links.port_to(all_x[:len(leaves)], first_up_t, 0)
    # all_above_t[leaf, x]: every up group of x leads to an ancestor of the leaf.
    grp = sp.csr_matrix((np.ones(len(g_src), dtype=np.int32), (g_src, g_dst)), shape=(s_count, s_count))
    n_above = np.asarray(grp @ anc[:, leaves].astype(np.int32))
    all_above_t = np.ascontiguousarray(((n_above == n_up[:, None]) & (n_up[:, None] > 0)).T)
    g_port = lv.up_port[gfirst].astype(np.uint8)
    high = np.flatnonzero(lv.level > 1)  # switches with a level above the leaves
    low = np.flatnonzero(lv.level == 1)
    sec_seen = np.zeros(len(high), dtype=np.int32)
    g0_high = g0[high].astype(np.int32)
    all_above_high = np.ascontiguousarray(all_above_t[:, high])
    first_up_high = np.ascontiguousarray(first_up_t[:, high])
    n_up_high = np.maximum(n_up[high], 1).astype(np.int32)
    cable_seen = np.zeros(s_count * s_count if links.kmax > 1 else 1, dtype=np.int64)
    other_seen = np.zeros_like(cable_seen)
    sp_seen = np.zeros(s_count, dtype=np.int64)
    balanced = fallback_sp = 0
    for c0 in range(0, len(dest), _CHUNK):
        ids = dest[c0:c0 + _CHUNK]
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
        leaf = chain[1, ids]
        covered[ar, leaf] = True
        lpos = leaf_pos[leaf]
        above = anc_t[leaf] & ~covered
        np.copyto(hop, descend_t[lpos], where=above)
        # Off the main structure (switch-to-CA routes of other planes, degraded fabrics): climb to a
        # parent above the destination's leaf; the first one, or round robin from a leaf.
        secondary = ~(covered | above)
        secondary &= lvl8 > 0
        upper = secondary[:, high]
        if upper.any():
            # Round robin over the up groups when all of them lead above the leaf (OpenSM's secondary
            # paths follow its load-sorted group order, which spreads them the same way) ...
            rr = upper & all_above_high[lpos]
            rank = np.cumsum(rr, axis=0, dtype=np.int32)  # inclusive count per switch
            rank += sec_seen[None, :] - rr
            sec_seen += rr.sum(axis=0, dtype=np.int32)
            rank %= n_up_high[None, :]
            rank += g0_high[None, :]
            val = (g_port if links.kmax == 1 else g_dst)[np.minimum(rank, max(len(g_dst) - 1, 0))]
            # ... else the first parent above the leaf.
            val = np.where(rr, val, first_up_high[lpos]).astype(hop.dtype)
            hop[:, high] = np.where(upper, val, hop[:, high])
        if links.kmax == 1:
            port = hop
        else:  # parallel cables: main-path climbs and the other routes are spread separately
            port = np.where(covered, links.port_to_rows(np.where(covered, hop, -1), cable_seen),
                            links.port_to_rows(np.where(covered, -1, hop), other_seen))
        for lev in range(1, top + 1):  # switches on the main path go down along it
            u = chain[lev, ids]
            ok = u >= 0
            port[ar[ok], u[ok]] = down[lev, ids[ok]]
        ri, rx = np.nonzero(secondary[:, low])
        rx = low[rx]
        if rx.size:
            par = np.full((len(rx), int(n_up.max(initial=0)) or 1), -1, dtype=np.int64)
            for j in range(par.shape[1]):
                has = n_up[rx] > j
                par[has, j] = g_dst[g0[rx[has]] + j]
            good = (par >= 0) & anc[np.maximum(par, 0), leaf[ri][:, None]]
            cnt = good.sum(axis=1)
            pick = np.where(cnt > 0, ids[ri] % np.maximum(cnt, 1), -1)
            col = (np.cumsum(good, axis=1) - 1 == pick[:, None]) & good
            chosen = np.where(cnt > 0, par[np.arange(len(rx)), col.argmax(axis=1)], -1)
            port[ri, rx] = links.port_to(rx, chosen, ids[ri] // np.maximum(cnt, 1))
            balanced += int((cnt > 0).sum())
        sj, sx = np.nonzero(secondary & (port == NO_PATH))
        if sx.size:
            order = np.argsort(sx, kind="stable")
            xs_sorted = sx[order]
            start = np.flatnonzero(np.r_[True, xs_sorted[1:] != xs_sorted[:-1]])
            rank = np.empty(len(sx), dtype=np.int64)
            rank[order] = np.arange(len(sx)) - np.repeat(start, np.diff(np.r_[start, len(sx)]))
            rank += sp_seen[sx]
            np.add.at(sp_seen, sx, 1)
            port[sj, sx] = spread_shortest_ports(dist, peer, sx, leaf[sj], rank)
            fallback_sp += int(sx.size)
        cols = h_lid[c0:c0 + n]
        if n and cols[-1] - cols[0] == n - 1 and np.all(np.diff(cols) == 1):
            lft[:, cols[0]:cols[-1] + 1] = port.T
        else:
            lft[:, cols] = port.T

    info = {"ftree": {
        "levels": int(lv.top), "leaves": int(len(leaves)), "max_hosts_per_leaf": max_cn,
        "dummy_nodes": int(n_all - len(dest)), "leaf_detours": balanced,
        "shortest_path_fallbacks": fallback_sp, "notes": lv.notes + _irregularities(f, lv, n_up),
    }}
    return Routing(f, lft, "ftree", info)


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
