"""Up*/Down* routing (OpenSM ``updn``): shortest legal paths, deadlock-free on any topology.

Switches are ranked by their distance from the *roots* (rank 0). A link is *up* from
the end of higher rank to the end of lower rank (lower GUID is up between equal
ranks, as in OpenSM's ``osm_ucast_updn.c``). A legal path goes up zero or more times,
then down zero or more times, never down then up; the channel dependency graph of
such paths is acyclic (Schroeder et al., "Autonet", IEEE JSAC 1991).

As in OpenSM, the hop counts are those of the shortest *legal* path through each port
and the port is then chosen by the min-hop rule (least-loaded among the best ports),
so this module reuses :func:`minhop_tables` with the up/down path metric.

Roots: by default the switches of the highest level of a levelled fabric (the spines
of a 2-level tree, the cores of a 3-level one); on a fabric without hosts, the
graph centre. ``roots=`` takes node GUIDs or names instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ..errors import RoutingError
from ..topology import Fabric
from .graph import bitset_bfs, switch_distances, switch_port_peers
from .levels import levels
from .minhop import minhop_tables
from .tables import Routing

__all__ = ["updn", "updn_ranks", "updn_distances"]


def updn_ranks(fabric: Fabric, roots: Sequence[int | str] | None = None,
               dist: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(rank, root_switch_indices)``: distance of every switch from the nearest root (-1 unreachable)."""
    f = fabric
    dist = switch_distances(f) if dist is None else dist
    if roots:
        idx = []
        for r in roots:
            try:
                node = f.node(r)
            except KeyError:
                raise RoutingError(f"updn: root {r!r} is not a node of {f.name!r}") from None
            if f.switch_index[node] < 0:
                raise RoutingError(f"updn: root {r!r} is not a switch")
            idx.append(int(f.switch_index[node]))
        root_idx = np.unique(np.array(idx, dtype=np.int64))
    else:
        lv = levels(f, dist)
        if lv.top > 0:
            root_idx = np.flatnonzero(lv.level == lv.top)
        else:
            reach = np.where(dist >= 0, dist, np.iinfo(np.int16).max).max(axis=1)
            root_idx = np.flatnonzero(reach == reach.min())
    d = dist[root_idx]
    rank = np.where((d >= 0).any(axis=0), np.where(d >= 0, d, np.iinfo(np.int16).max).min(axis=0), -1)
    return rank.astype(np.int16), root_idx


def updn_distances(fabric: Fabric, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Legal-path hop counts ``(any, down_only, is_up)``.

    ``any[x, t]``: shortest up*/down* path from switch ``x`` to ``t``; ``down_only[x, t]``:
    shortest path going only down; both int16 ``[S, S]``, -1 where there is none.
    ``is_up[s, p - 1]``: port ``p`` of switch ``s`` leads up (bool).
    """
    f = fabric
    peer = switch_port_peers(f)
    s_count = f.num_switches
    guid = f.guid[f.switches]
    src, port = np.nonzero(peer >= 0)
    dst = peer[src, port]
    r_src, r_dst = rank[src].astype(np.int64), rank[dst].astype(np.int64)
    up = (r_dst < r_src) | ((r_dst == r_src) & (guid[dst] < guid[src]))
    up &= (r_src >= 0) & (r_dst >= 0)
    down = (~up) & (r_src >= 0) & (r_dst >= 0)
    # State graph: node x (may still go up) and node S + x (only down from here on).
    rows = np.r_[src[up], src[down], s_count + src[down]]
    cols = np.r_[dst[up], s_count + dst[down], s_count + dst[down]]
    g = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(2 * s_count, 2 * s_count))
    d = bitset_bfs(g)
    a, b = d[:s_count, :s_count], d[:s_count, s_count:]
    big = np.iinfo(np.int16).max
    any_ = np.minimum(np.where(a >= 0, a, big), np.where(b >= 0, b, big))
    any_ = np.where(any_ == big, -1, any_).astype(np.int16)
    down_only = d[s_count:, s_count:]
    is_up = np.zeros(peer.shape, dtype=bool)
    is_up[src[up], port[up]] = True
    return any_, down_only, is_up


def updn(fabric: Fabric, roots: Sequence[int | str] | None = None) -> Routing:
    """Route ``fabric`` with Up*/Down* (see module doc); unreachable legal pairs get NO_PATH.

    >>> from fabric_engine.topology.generate import fat_tree
    >>> r = updn(fat_tree(hosts=8, radix=4))
    >>> r.info["updn"]["roots"]
    ['spine01', 'spine02']
    """
    f = fabric
    dist = switch_distances(f)
    rank, root_idx = updn_ranks(f, roots, dist)
    any_, down_only, is_up = updn_distances(f, rank)
    peer = switch_port_peers(f)
    pc = np.maximum(peer, 0)
    valid = peer >= 0
    big = np.int32(1 << 20)
    any32 = np.where(any_ >= 0, any_, big).astype(np.int32)
    down32 = np.where(down_only >= 0, down_only, big).astype(np.int32)

    def cand(t0: int, t1: int) -> np.ndarray:
        via = np.where(is_up[:, :, None], any32[pc, t0:t1], down32[pc, t0:t1]) + 1  # [S, P, c]
        here = any32[:, t0:t1]
        return valid[:, :, None] & (via == here[:, None, :]) & (here > 0)[:, None, :] & (here < big)[:, None, :]

    lft, info = minhop_tables(f, dist=any_, cand_fn=cand)
    names = [str(f.node_name[f.switches[i]]) for i in root_idx]
    info["updn"] = {"roots": names, "max_rank": int(rank.max(initial=-1))}
    return Routing(f, lft, "updn", info)
