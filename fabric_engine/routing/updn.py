"""Up*/Down* routing (OpenSM ``updn``): shortest legal paths, deadlock-free on any topology.

Switches are ranked by their distance from the *roots* (rank 0). A link is *up* from
the end of higher rank to the end of lower rank; between equal ranks the step from the
bigger GUID to the smaller one is up, and between two roots every step is up
(``updn_get_dir`` in OpenSM's ``osm_ucast_updn.c``). A legal path goes up zero or more
times, then down zero or more times, never down then up; the channel dependency graph of
such paths is acyclic (Schroeder et al., "Autonet", IEEE JSAC 1991).

As in OpenSM, the hop counts are those of the shortest *legal* path through each port
and the port is then chosen by the min-hop rule (least-loaded among the best ports, LIDs
in OpenSM's visiting order), so this module reuses :func:`minhop_tables` with the up/down
path metric.

Roots, as OpenSM finds them without a root GUID file (``updn_find_root_nodes_by_min_hop``):
for every switch, a histogram of the channel adapters by their switch's min-hop distance;
a switch is a root when exactly one bar holds more than 90 % of the adapters and no other
bar more than 5 % (the spines of a 2-level tree, the cores of a 3-level one; a spine or core
that lost a cable sees some adapters farther away and is no root). ``roots=`` takes node
GUIDs or names instead, like OpenSM's ``-a``/``--root_guid_file`` (:func:`read_root_guids`
reads such a file); GUIDs that are not switches of the fabric are skipped, as OpenSM does.
When no root is found OpenSM gives up updn and routes with minhop; so does :func:`updn`
(``info["fallback"]`` says why).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ..topology import Fabric
from .graph import bitset_bfs, switch_distances, switch_port_peers
from .minhop import minhop_tables
from .tables import Routing

__all__ = ["updn", "updn_ranks", "updn_distances", "find_roots", "read_root_guids"]


def find_roots(fabric: Fabric, dist: np.ndarray | None = None) -> np.ndarray:
    """Switch indices OpenSM's updn takes as roots by its min-hop histogram (see module doc), int64."""
    from .order import endport_links

    f = fabric
    dist = switch_distances(f) if dist is None else dist
    cas = endport_links(f)
    total = int(cas.sum())
    if total == 0 or f.num_switches == 0:
        return np.zeros(0, dtype=np.int64)
    top = int(dist.max(initial=0))
    over90 = np.zeros(f.num_switches, dtype=np.int64)
    over5 = np.zeros(f.num_switches, dtype=np.int64)
    for h in range(top + 1):  # one histogram bar per hop count, for every switch at once
        bar = (dist == h).astype(np.int64) @ cas
        over90 += bar > total * 0.9
        over5 += bar > total * 0.05
    return np.flatnonzero((over90 == 1) & (over5 == 1)).astype(np.int64)


def read_root_guids(data, source: str | None = None) -> list[int]:
    """GUIDs of a root GUID file (OpenSM ``--root_guid_file``), read as OpenSM does (:func:`.guid_files.read_guids`):
    ``data`` is a ``Path`` of the file or its text (a ``str`` is never taken for a file name).

    Raises :class:`~fabric_engine.errors.FormatError` naming the file and line of anything else.
    """
    from .guid_files import read_guids

    return read_guids(data, source)


def updn_ranks(fabric: Fabric, roots: Sequence[int | str] | None = None,
               dist: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(rank, root_switch_indices)``: distance of every switch from the nearest root (-1 unreachable).

    ``roots`` (node GUIDs or names) replaces the automatic choice; entries that are no switch of the
    fabric are skipped, as OpenSM skips them. No root at all gives an empty root list and rank -1.
    """
    f = fabric
    dist = switch_distances(f) if dist is None else dist
    if roots:
        idx = []
        for r in roots:
            try:
                node = f.node(r)
            except KeyError:
                continue
            if f.switch_index[node] >= 0:
                idx.append(int(f.switch_index[node]))
        root_idx = np.unique(np.array(idx, dtype=np.int64))
    else:
        root_idx = find_roots(f, dist)
    if root_idx.size == 0:
        return np.full(f.num_switches, -1, dtype=np.int16), root_idx
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
    up = (r_dst < r_src) | ((r_dst == r_src) & ((guid[dst] < guid[src]) | (r_src == 0)))
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
    if root_idx.size == 0:
        from .minhop import minhop

        why = ("none of the given root GUIDs is a switch of the fabric" if roots else
               "no switch qualifies as a root (no min-hop histogram bar holds over 90 % of the adapters)")
        if not roots and len(f.aggregation_nodes):
            why += (f"; the {len(f.aggregation_nodes)} SHARP Aggregation Nodes count as adapters there, as in OpenSM: "
                    "give the root switches with -a/--root-guid-file")
        fallback = minhop(f)
        info = dict(fallback.info, updn={"roots": [], "max_rank": -1},
                    fallback={"engine": "minhop", "reason": f"updn: {why}; routed with minhop, as OpenSM does"})
        return Routing(f, fallback.lft, "updn", info)
    any_, down_only, is_up = updn_distances(f, rank)
    peer = switch_port_peers(f)
    pc = np.maximum(peer, 0)
    valid = peer >= 0
    big = np.int32(1 << 20)
    any32 = np.where(any_ >= 0, any_, big).astype(np.int32)
    down32 = np.where(down_only >= 0, down_only, big).astype(np.int32)

    def cand(cols: np.ndarray) -> np.ndarray:
        a, d = any32[:, cols], down32[:, cols]
        via = np.where(is_up[:, :, None], a[pc], d[pc]) + 1  # [S, P, c]
        here = a
        return valid[:, :, None] & (via == here[:, None, :]) & (here > 0)[:, None, :] & (here < big)[:, None, :]

    lft, info = minhop_tables(f, dist=any_, cand_fn=cand)
    from .order import guid_key

    root_idx = root_idx[np.argsort(guid_key(f.guid[f.switches[root_idx]]), kind="stable")]
    names = [str(f.node_name[f.switches[i]]) for i in root_idx]
    info["updn"] = {"roots": names, "max_rank": int(rank.max(initial=-1))}
    return Routing(f, lft, "updn", info)
