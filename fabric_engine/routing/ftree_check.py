"""Is this a fat tree OpenSM's ftree routes, and in which order does it take the leaves?

OpenSM's ``osm_ucast_ftree.c`` (``construct_fabric``) ranks switches from the adapters
(``fabric_rank_from_hcas``: rank = farthest distance from a leaf minus the switch's own
distance, roots rank 0), groups each switch's ports by remote node into up, down and
sibling groups, then refuses the fabric (and OpenSM routes it with minhop) when

* a channel adapter is cabled to another adapter (``ERR AB0F``/``AB11``),
* there are fewer than two switches or two adapters, or the tree has fewer than 2 or more
  than 8 ranks,
* two switches of one rank differ in their number of up groups (``ERR AB09``), of down
  groups (``ERR AB0A``, not checked at the leaf rank), of cables in an up group (``ERR AB0B``,
  against the first up group of the first switch of the rank) or in their first down group
  (``ERR AB0C``) -- ``fabric_validate_topology``, then ``ERR AB0D: Fabric topology hasn't been
  identified as FatTree``.

:func:`check_fat_tree` does the same checks and returns OpenSM's message, or ``None``.
:func:`leaf_order` gives the leaves in OpenSM's *index* order (``fabric_make_indexing``):
tuples handed out breadth first from the first leaf in GUID order, each switch's groups in
port order, then leaves sorted by tuple -- the order in which ftree routes the leaves' adapters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..topology import KIND_HOST, Fabric
from .order import guid_key

__all__ = ["FtreeStructure", "ftree_structure", "check_fat_tree", "switch_tuples", "leaf_order", "UNINDEXED"]


@dataclass(frozen=True, eq=False)
class FtreeStructure:
    """OpenSM's view of a fabric as a fat tree, indexed by switch index.

    ``rank`` int64 ``[S]`` (0 = roots, ``leaf_rank`` = switches with adapters; -1 unranked),
    ``is_leaf`` bool ``[S]``. Switch-to-switch port groups (one per pair of cabled switches), in
    creation order -- by switch, then by the group's lowest port: ``g_src``, ``g_dst`` (switch
    indices), ``g_dir`` (+1 up, 0 sibling, -1 down), ``g_size`` (cables); ``g_ptr[s]:g_ptr[s + 1]``
    are the groups of switch ``s``.
    """

    rank: np.ndarray
    leaf_rank: int
    is_leaf: np.ndarray
    g_src: np.ndarray
    g_dst: np.ndarray
    g_dir: np.ndarray
    g_size: np.ndarray
    g_ptr: np.ndarray


def ftree_structure(fabric: Fabric) -> FtreeStructure:
    """Rank the switches and group their ports the way OpenSM's ftree does (vectorised)."""
    f = fabric
    s_count = f.num_switches
    si = f.switch_index
    sw_links = np.flatnonzero((si[f.dl_src] >= 0) & (si[f.dl_dst] >= 0) & (f.dl_src != f.dl_dst))
    host_links = np.flatnonzero((si[f.dl_src] >= 0) & (f.kind[f.dl_dst] == KIND_HOST))
    is_leaf = np.zeros(s_count, dtype=bool)
    is_leaf[si[f.dl_src[host_links]]] = True
    # Distance from the nearest leaf (breadth first over switch cables), then reversed: roots are farthest.
    a, b = si[f.dl_src[sw_links]].astype(np.int64), si[f.dl_dst[sw_links]].astype(np.int64)
    dist = np.full(s_count, -1, dtype=np.int64)
    dist[is_leaf] = 0
    frontier = is_leaf.copy()
    d = 0
    while frontier.any():
        d += 1
        nxt = np.zeros(s_count, dtype=bool)
        nxt[b[frontier[a]]] = True
        nxt &= dist < 0
        dist[nxt] = d
        frontier = nxt
    top = int(dist.max(initial=0))
    rank = np.where(dist >= 0, top - dist, -1)
    # Port groups: one per (switch, remote switch), created at its lowest port.
    port = f.dl_src_port[sw_links].astype(np.int64)
    key = a * max(s_count, 1) + b
    o = np.lexsort((port, key))
    k_sorted = key[o]
    first = np.flatnonzero(np.r_[True, k_sorted[1:] != k_sorted[:-1]]) if len(o) else np.zeros(0, np.int64)
    size = np.diff(np.r_[first, len(o)])
    g_src, g_dst, g_low = a[o][first], b[o][first], port[o][first]
    order = np.lexsort((g_low, g_src))
    g_src, g_dst, size = g_src[order], g_dst[order], size[order]
    g_dir = np.sign(rank[g_src] - rank[g_dst]).astype(np.int64)  # a higher rank number is lower in the tree
    g_ptr = np.searchsorted(g_src, np.arange(s_count + 1))
    return FtreeStructure(rank, top, is_leaf, g_src, g_dst, g_dir, size.astype(np.int64), g_ptr)


def check_fat_tree(fabric: Fabric, st: FtreeStructure | None = None) -> str | None:
    """OpenSM's reason to refuse ``fabric`` as a fat tree (its log message), or ``None`` when it routes it."""
    f = fabric
    st = ftree_structure(f) if st is None else st
    si = f.switch_index
    hh = (f.kind[f.dl_src] == KIND_HOST) & (f.kind[f.dl_dst] == KIND_HOST)
    if hh.any():
        d = int(np.flatnonzero(hh)[0])
        return (f"ERR AB11: CA connected directly to another CA ({f.node_name[f.dl_src[d]]} <-> "
                f"{f.node_name[f.dl_dst[d]]})")
    if f.num_switches < 2:
        return f"Fabric has {f.num_switches} switches - topology is not fat-tree"
    cas = len(np.unique(f.dl_src[(f.kind[f.dl_src] == KIND_HOST) & (si[f.dl_dst] >= 0)]))
    if cas < 2:
        return f"Fabric has {cas} CAs - topology is not fat-tree"
    if (st.rank < 0).any():
        return "some switches reach no switch with adapters"
    tree_rank = st.leaf_rank + 1
    if not 2 <= tree_rank <= 8:
        return f"Fabric rank is {tree_rank} (should be between 2 and 8)"
    s_count = f.num_switches
    up, down = st.g_dir > 0, st.g_dir < 0
    n_up = np.bincount(st.g_src[up], minlength=s_count)
    n_down = np.bincount(st.g_src[down], minlength=s_count)
    first_up = np.full(s_count, -1, dtype=np.int64)  # cables in the first up / down group of each switch
    first_down = np.full(s_count, -1, dtype=np.int64)
    first_up[st.g_src[up][::-1]] = st.g_size[up][::-1]
    first_down[st.g_src[down][::-1]] = st.g_size[down][::-1]
    by_guid = np.argsort(guid_key(f.guid[f.switches]), kind="stable")
    ref = np.full(int(st.rank.max()) + 1, -1, dtype=np.int64)
    ranks, first = np.unique(st.rank[by_guid], return_index=True)
    ref[ranks] = by_guid[first]  # the first switch of each rank in GUID order is the reference
    r_of = ref[st.rank]
    up_size_bad = np.zeros(s_count, dtype=bool)
    np.logical_or.at(up_size_bad, st.g_src[up], st.g_size[up] != first_up[r_of[st.g_src[up]]])
    not_leaf = st.rank != st.leaf_rank
    checks = [
        ("ERR AB09: Different number of upward port groups", n_up != n_up[r_of], n_up),
        ("ERR AB0A: Different number of downward port groups", not_leaf & (n_down != n_down[r_of]), n_down),
        ("ERR AB0B: Different number of ports in an upward port group", (first_up[r_of] >= 0) & up_size_bad, None),
        ("ERR AB0C: Different number of ports in an downward port group",
         not_leaf & (first_down[r_of] >= 0) & (n_down > 0) & (first_down != first_down[r_of]), None),
    ]
    differs = np.flatnonzero(np.any([bad for _, bad, _ in checks], axis=0)[by_guid])
    if not len(differs):
        return None
    s = int(by_guid[differs[0]])  # OpenSM stops at the first switch (GUID order) that differs
    what, _, count = next(c for c in checks if c[1][s])
    names = f.node_name[f.switches]
    extra = f": {count[r_of[s]]} and {count[s]}" if count is not None else ""
    return f"{what} on switches {names[r_of[s]]} and {names[s]} (rank {int(st.rank[s])}){extra}"


#: Tuple key of a switch the indexing never reached (``tuple_init``: every byte 0xFF).
UNINDEXED = np.uint64(0xFFFFFFFFFFFFFFFF)


def switch_tuples(fabric: Fabric, st: FtreeStructure | None = None) -> np.ndarray:
    """OpenSM's index tuple of every switch as a sortable key, uint64 ``[S]`` (``UNINDEXED`` if never reached).

    ``fabric_make_indexing``: the first leaf in GUID order gets ``[rank].0.0...``; breadth first, each
    switch hands its down groups, then its up groups (port order), the first free tuple one rank below or
    above. Sibling groups hand out nothing, so a part of the fabric joined only by them stays unindexed.
    The key orders tuples as ``compare_switches_by_index`` does (byte 0 first).
    """
    f = fabric
    st = ftree_structure(f) if st is None else st
    keys = np.full(f.num_switches, UNINDEXED, dtype=np.uint64)
    by_guid = np.argsort(guid_key(f.guid[f.switches]), kind="stable")
    if not st.is_leaf.any():
        return keys
    start = int(by_guid[np.argmax(st.is_leaf[by_guid])])
    tup: dict[int, tuple] = {}
    taken: set[tuple] = set()
    # next_free[(base, var)]: no tuple below it at position ``var`` of ``base`` is free (taken only grows),
    # so the search for the lowest free value resumes there instead of at 0 for every child.
    next_free: dict[tuple, int] = {}
    r0 = int(st.rank[start])
    tup[start] = (r0,) + (0,) * r0 + (0xFF,) * (7 - r0)
    taken.add(tup[start])
    queue = [start]
    head = 0
    rank, g_dst, g_dir, g_ptr = st.rank.tolist(), st.g_dst.tolist(), st.g_dir.tolist(), st.g_ptr.tolist()
    while head < len(queue):
        s = queue[head]
        head += 1
        r = rank[s]
        for direction, enabled in ((-1, r < st.leaf_rank), (1, r != 0)):
            if not enabled:
                continue
            for g in range(g_ptr[s], g_ptr[s + 1]):
                y = g_dst[g]
                if g_dir[g] != direction or y in tup:
                    continue
                t = list(tup[s])
                var = t[0] + 1 if direction < 0 else t[0]
                t[0] += -direction
                t[var] = -1
                base = (tuple(t), var)
                i = next_free.get(base, 0)
                t[var] = i
                while i < 0xFE and tuple(t) in taken:
                    i += 1
                    t[var] = i
                next_free[base] = i
                tup[y] = tuple(t)
                taken.add(tup[y])
                queue.append(y)
    for s, t in tup.items():
        keys[s] = np.uint64(int.from_bytes(bytes(t), "big"))
    return keys


def leaf_order(fabric: Fabric, st: FtreeStructure | None = None, tuples: np.ndarray | None = None) -> np.ndarray:
    """Leaf-rank switch indices in OpenSM's index order, first to last leaf with adapters (``leaf_switches``)."""
    f = fabric
    st = ftree_structure(f) if st is None else st
    tuples = switch_tuples(f, st) if tuples is None else tuples
    by_guid = np.argsort(guid_key(f.guid[f.switches]), kind="stable")
    # every switch of the leaf rank; those the indexing never reached (only siblings lead there) have
    # no tuple and sort last, in GUID order (fabric_create_leaf_switch_array)
    at_leaf = by_guid[st.rank[by_guid] == st.leaf_rank]
    at_leaf = at_leaf[np.argsort(tuples[at_leaf], kind="stable")]
    real = np.flatnonzero(st.is_leaf[at_leaf])
    return at_leaf[real[0]:real[-1] + 1].astype(np.int64) if real.size else np.zeros(0, dtype=np.int64)
