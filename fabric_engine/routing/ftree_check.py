"""Is this a fat tree OpenSM's ftree routes, and in which order does it take the leaves?

OpenSM 3.3.23's ``osm_ucast_ftree.c`` (``construct_fabric``) builds its view of the fabric in this
order, and :func:`ftree_structure` / :func:`check_fat_tree` follow it step by step:

* ranks (``fabric_rank``): with a root GUID file, breadth first from the file's switches (rank 0,
  ``fabric_rank_from_roots``; GUIDs that are no switch are skipped, ``ERR AB24``, and when none is left,
  ``ERR AB25``, the ranks come from the CAs as without a file). Without one, breadth first from every
  switch cabled to *any* CA (``fabric_rank_from_hcas``: compute node or not -- the CN file plays no part
  here), reversed, then again from the switches that came out rank 0 (``fabric_rerank_using_root``).
  Switches left unranked are dropped with their CAs (``fabric_remove_unranked_sw``); a tree whose
  highest rank is 0 is refused (``ERR AB2B: Found more than one root on fabric with maximum rank 0``) --
  what a SHARP fabric does without guid files: its Aggregation Node CAs put a CA on every switch;
* CA ports (``fabric_construct_hca_ports``): without a CN file every CA port is a compute node; with
  one, only the ports whose *port* GUID it lists; a port in the I/O file (and not in the CN file) is an
  I/O node, not a compute node. No compute node at all: ``Fabric has no valid compute nodes``;
* the leaf rank (``fabric_set_leaf_rank``): the highest rank without a root file; with one, the rank
  of the switch of the first compute node (CAs in node-GUID map order, ports in order). The tree
  (leaf rank + 1) must have 2 to 8 ranks; every compute node must hang on a switch of the leaf rank
  (``fabric_mark_leaf_switches``, ``ERR AB26``), and at least two leaves must have compute nodes
  (``fabric_create_leaf_switch_array``: ``Failed to find leaf switches``);
* only without a root file, the regularity checks of ``fabric_validate_topology``: two switches of
  one rank differ in their number of up groups (``ERR AB09``), of down groups -- CAs included --
  (``ERR AB0A``, not at the leaf rank), of cables in an up group (``ERR AB0B``) or in their first down
  group (``ERR AB0C``).

A cable from a switch to itself is ignored (``fabric_construct_sw_ports``). Whatever OpenSM refuses it
routes with minhop instead. :func:`check_fat_tree` returns OpenSM's message (with the offending switch
or port named), or ``None``.

:func:`leaf_order` gives the leaves in OpenSM's *index* order (``fabric_make_indexing``): tuples handed
out breadth first from the first leaf in GUID order, each switch's groups in port order, then leaves
sorted by tuple -- the order in which ftree routes the leaves' compute nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..topology import KIND_HOST, Fabric
from .order import guid_key

__all__ = ["FtreeStructure", "ftree_structure", "check_fat_tree", "switch_tuples", "leaf_order", "UNINDEXED",
           "resolve_guids"]

#: OpenSM's ``FAT_TREE_MIN_RANK`` / ``FAT_TREE_MAX_RANK``: ranks of a tree it routes.
MIN_TREE_RANK, MAX_TREE_RANK = 2, 8


@dataclass(frozen=True, eq=False)
class FtreeStructure:
    """OpenSM's view of a fabric as a fat tree, indexed by switch index.

    ``rank`` int64 ``[S]`` (0 = roots; -1 unranked, dropped), ``max_rank``, ``leaf_rank`` and
    ``is_leaf`` bool ``[S]`` (a ranked switch with a compute node). Switch-to-switch port groups (one
    per pair of cabled ranked switches), in creation order -- by switch, then by the group's lowest
    port: ``g_src``, ``g_dst`` (switch indices), ``g_dir`` (+1 up, 0 sibling, -1 down), ``g_size``
    (cables); ``g_ptr[s]:g_ptr[s + 1]`` are the groups of switch ``s``.

    CA ports cabled to a ranked switch, in OpenSM's ``hca_tbl`` order (node GUID map order, then port):
    ``ca_slot`` (port slot), ``ca_lid``, ``ca_switch`` (switch index), ``ca_exit`` (switch port),
    ``is_cn``, ``is_io``; ``cn_listed``/``io_listed``: GUIDs in the CN/I/O file (-1: no file).
    ``roots_given``: a root GUID file was given (even if none of it is valid); ``roots``: the valid
    ones (switch indices); ``notes``: what OpenSM logs on the way (``ERR AB24``...).
    """

    rank: np.ndarray
    leaf_rank: int
    is_leaf: np.ndarray
    g_src: np.ndarray
    g_dst: np.ndarray
    g_dir: np.ndarray
    g_size: np.ndarray
    g_ptr: np.ndarray
    max_rank: int = 0
    ca_slot: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    ca_lid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    ca_switch: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    ca_exit: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    is_cn: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    is_io: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    roots_given: bool = False
    roots: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    cn_listed: int = -1
    io_listed: int = -1
    notes: list = field(default_factory=list)


def resolve_guids(fabric: Fabric, keys: Sequence[int | str] | None) -> np.ndarray | None:
    """``keys`` (GUIDs, or node names for convenience) as uint64 GUIDs; a name stands for its node GUID."""
    if keys is None:
        return None
    out = []
    for k in keys:
        if isinstance(k, str):
            try:
                out.append(int(fabric.guid[fabric.node(k)]))
            except KeyError:
                continue
        else:
            out.append(int(k))
    return np.asarray(out, dtype=np.uint64)


def _bfs(a: np.ndarray, b: np.ndarray, s_count: int, start: np.ndarray) -> np.ndarray:
    """Hops from the nearest switch in ``start`` (bool ``[S]``) over the cables ``a -> b`` (-1 unreached)."""
    dist = np.where(start, 0, -1).astype(np.int64)
    frontier = start.copy()
    d = 0
    while frontier.any():
        d += 1
        nxt = np.zeros(s_count, dtype=bool)
        nxt[b[frontier[a]]] = True
        nxt &= dist < 0
        dist[nxt] = d
        frontier = nxt
    return dist


def _ca_ports(f: Fabric) -> tuple[np.ndarray, ...]:
    """``(slot, lid, switch, exit port)`` of every cabled CA port, in OpenSM's ``hca_tbl`` order (switch -1: a CA)."""
    slots = np.flatnonzero((f.kind[f.port_node] == KIND_HOST) & (f.port_out_link >= 0))
    d = f.port_out_link[slots]
    node = f.port_node[slots]
    o = np.lexsort((f.port_num[slots], guid_key(f.guid[node])))
    slots, d = slots[o], d[o]
    peer_sw = f.switch_index[f.dl_dst[d]].astype(np.int64)
    return slots, f.port_lid[slots].astype(np.int64), peer_sw, f.dl_dst_port[d].astype(np.int64)


def ftree_structure(fabric: Fabric, roots: Sequence[int | str] | None = None, cns: Sequence[int | str] | None = None,
                    ios: Sequence[int | str] | None = None) -> FtreeStructure:
    """Rank the switches, mark compute nodes and group ports the way OpenSM's ftree does (module doc; vectorised).

    ``roots``: root switch GUIDs (``--root_guid_file``); ``cns``: compute-node port GUIDs
    (``--cn_guid_file``); ``ios``: I/O node port GUIDs (``--io_guid_file``); ``None`` = no such file.
    """
    f = fabric
    s_count = f.num_switches
    si = f.switch_index
    sw_links = np.flatnonzero((si[f.dl_src] >= 0) & (si[f.dl_dst] >= 0) & (f.dl_src != f.dl_dst))
    a, b = si[f.dl_src[sw_links]].astype(np.int64), si[f.dl_dst[sw_links]].astype(np.int64)
    slots, lids, ca_sw, ca_exit = _ca_ports(f)
    notes: list[str] = []
    root_guids = resolve_guids(f, roots)
    root_idx = np.zeros(0, dtype=np.int64)
    if root_guids is not None:
        sw_guid = f.guid[f.switches]
        known = np.isin(root_guids, sw_guid)
        for g in root_guids[~known][:5]:
            notes.append(f"ERR AB24: Root switch GUID 0x{int(g):x} not found")
        root_idx = np.flatnonzero(np.isin(sw_guid, root_guids)).astype(np.int64)
        if not root_idx.size:
            notes.append("ERR AB25: No valid roots supplied; ranked from the CAs instead, as OpenSM does")
    if root_idx.size:
        start = np.zeros(s_count, dtype=bool)
        start[root_idx] = True
    else:  # from every switch with a CA, reversed, then again from those that came out rank 0
        near = np.zeros(s_count, dtype=bool)
        near[ca_sw[ca_sw >= 0]] = True
        d = _bfs(a, b, s_count, near)
        start = d == d.max(initial=0)
        start &= d >= 0
    rank = _bfs(a, b, s_count, start)
    if (rank < 0).any():
        names = f.node_name[f.switches[rank < 0]]
        notes.append(f"{int((rank < 0).sum())} switch(es) could not be ranked and are left out with their CAs, "
                     f"as OpenSM drops them ({', '.join(map(str, names[:5]))})")
    max_rank = int(rank.max(initial=0))
    # CA ports on ranked switches; compute nodes and I/O nodes by port GUID
    keep = (ca_sw >= 0) & (rank[np.maximum(ca_sw, 0)] >= 0)
    pg = f.port_guid[slots]
    cn_guids, io_guids = resolve_guids(f, cns), resolve_guids(f, ios)
    in_cn = np.isin(pg, cn_guids) if cn_guids is not None else np.zeros(len(pg), dtype=bool)
    is_io = ~in_cn & np.isin(pg, io_guids) if io_guids is not None else np.zeros(len(pg), dtype=bool)
    is_cn = (in_cn if cn_guids is not None else np.ones(len(pg), dtype=bool)) & ~is_io
    if cn_guids is not None:
        as_node = np.isin(cn_guids, f.guid[f.kind == KIND_HOST]) & ~np.isin(cn_guids, pg)
        if as_node.any():
            notes.append(f"{int(as_node.sum())} GUID(s) of the CN file are CA node GUIDs, not port GUIDs: OpenSM "
                         "matches compute nodes by port GUID")
    k = np.flatnonzero(keep)
    is_leaf = np.zeros(s_count, dtype=bool)
    is_leaf[ca_sw[k][is_cn[k]]] = True
    # with a root file, the rank of the first compute node's switch; else the highest rank
    first_cn_rank = int(rank[ca_sw[k][np.argmax(is_cn[k])]]) if is_cn[k].any() else max_rank
    leaf_rank = first_cn_rank if root_guids is not None else max_rank
    # Port groups: one per (switch, remote switch), created at its lowest port, both ends ranked.
    ranked = (rank[a] >= 0) & (rank[b] >= 0)
    a, b, port = a[ranked], b[ranked], f.dl_src_port[sw_links[ranked]].astype(np.int64)
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
    return FtreeStructure(rank, leaf_rank, is_leaf, g_src, g_dst, g_dir, size.astype(np.int64), g_ptr,
                          max_rank=max_rank, ca_slot=slots[k], ca_lid=lids[k], ca_switch=ca_sw[k],
                          ca_exit=ca_exit[k], is_cn=is_cn[k], is_io=is_io[k], roots_given=root_guids is not None,
                          roots=root_idx, cn_listed=-1 if cn_guids is None else len(cn_guids),
                          io_listed=-1 if io_guids is None else len(io_guids), notes=notes)


def _port_text(f: Fabric, slot: int) -> str:
    """``'name' port N (port GUID 0x...)`` of a port slot."""
    return (f"{f.node_name[f.port_node[slot]]} port {int(f.port_num[slot])} "
            f"(port GUID 0x{int(f.port_guid[slot]):016x})")


def _an_hint(f: Fabric, st: FtreeStructure) -> str:
    """Why Aggregation Nodes break OpenSM's ranking and which files fix it ('' when the fabric has none)."""
    an = f.aggregation_nodes
    if not an.size:
        return ""
    slot = int(f.port_offset[an[0]])
    d = int(f.port_out_link[slot])
    where = (f" (e.g. {f.node_name[an[0]]} on port {int(f.dl_dst_port[d])} of {f.node_name[f.dl_dst[d]]})"
             if d >= 0 else "")
    an_cn = st.cn_listed < 0 or bool(st.is_cn[np.isin(f.port_node[st.ca_slot], an)].any())
    need = []
    if not st.roots_given or not st.roots.size:
        need.append("the top switches' node GUIDs with -a/--root-guid-file (OpenSM's --root_guid_file): OpenSM "
                    "ranks from every switch with a CA, and an Aggregation Node is one")
    if an_cn:
        need.append("the compute nodes' port GUIDs with -u/--cn-guid-file (OpenSM's --cn_guid_file): without it "
                    "every CA, Aggregation Nodes included, is a compute node that must hang on a leaf")
    if not need:
        return ""
    return (f"; the fabric has {an.size} SHARP Aggregation Node(s){where}, CAs inside the switches: pass "
            + " and ".join(need) + " -- `python -m fabric_engine route FABRIC --engine ftree --write-guid-files DIR` "
            "writes both files from the fabric")


def check_fat_tree(fabric: Fabric, st: FtreeStructure | None = None) -> str | None:
    """OpenSM's reason to refuse ``fabric`` as a fat tree (its log message, the offender named), or ``None``."""
    f = fabric
    st = ftree_structure(f) if st is None else st
    s_count = f.num_switches
    if s_count < 2:
        return f"Fabric has {s_count} switches - topology is not fat-tree"
    if f.num_nodes - s_count < 2:
        return f"Fabric has {f.num_nodes} nodes ({s_count} switches) - topology is not fat-tree"
    if st.cn_listed == 0:
        return "ERR AB27: Compute node guids file has no valid guids"
    if st.io_listed == 0:
        return "ERR AB29: I/O node guids file has no valid guids"
    cabled = np.unique(f.port_node[(f.kind[f.port_node] == KIND_HOST) & (f.port_out_link >= 0)])
    if len(cabled) < 2:
        return f"Fabric has {len(cabled)} CAs - topology is not fat-tree"
    hh = np.flatnonzero((f.kind[f.dl_src] == KIND_HOST) & (f.kind[f.dl_dst] == KIND_HOST))
    if hh.size:
        d = int(hh[np.argmin(guid_key(f.guid[f.dl_src[hh]]))])  # the first CA in OpenSM's map order
        pair = (f"0x{int(f.guid[f.dl_src[d]]):016x} <---> 0x{int(f.guid[f.dl_dst[d]]):016x} "
                f"({f.node_name[f.dl_src[d]]} port {int(f.dl_src_port[d])} <-> {f.node_name[f.dl_dst[d]]} "
                f"port {int(f.dl_dst_port[d])})")
        if not st.roots.size:
            return f"ERR AB0F: CA connected directly to another CA: {pair}; ERR AB14: Subnet ranking failed"
    ranked = st.rank >= 0
    if st.max_rank == 0 and int(ranked.sum()) > 1:
        return (f"ERR AB2B: Found more than one root on fabric with maximum rank 0 (all {int(ranked.sum())} "
                f"switches are cabled to a CA, so every one ranks as a leaf and as a root){_an_hint(f, st)}")
    if hh.size:
        return f"ERR AB11: CA connected directly to another CA: {pair}"
    if not st.is_cn.any():
        why = ""
        if st.cn_listed > 0:
            why = " (none of the CN file's GUIDs is the port GUID of a CA port on a ranked switch"
            why += "".join(f"; {n}" for n in st.notes if "node GUIDs" in n) + ")"
        return f"Fabric has no valid compute nodes{why}"
    tree_rank = st.leaf_rank + 1
    first = int(np.argmax(st.is_cn))
    leaf_of = (f"the switch of the first compute node, {_port_text(f, int(st.ca_slot[first]))} on "
               f"{f.node_name[f.switches[st.ca_switch[first]]]}")
    if not MIN_TREE_RANK <= tree_rank <= MAX_TREE_RANK:
        where = f"; the leaf rank {st.leaf_rank} is that of {leaf_of}" if st.roots_given else ""
        return (f"Fabric rank is {tree_rank} (should be between {MIN_TREE_RANK} and {MAX_TREE_RANK}){where}"
                f"{_an_hint(f, st)}")
    bad = np.flatnonzero(st.is_cn & (st.rank[st.ca_switch] != st.leaf_rank))
    if bad.size:
        i = int(bad[0])
        sw = int(st.ca_switch[i])
        set_by = leaf_of if st.roots_given else "the lowest switches"
        return (f"ERR AB26: CN port 0x{int(f.port_guid[st.ca_slot[i]]):x} is connected to switch "
                f"0x{int(f.guid[f.switches[sw]]):x} with rank {int(st.rank[sw])}, while FatTree leaf rank is "
                f"{st.leaf_rank} ({_port_text(f, int(st.ca_slot[i]))} on {f.node_name[f.switches[sw]]} port "
                f"{int(st.ca_exit[i])}; the leaf rank is that of {set_by})"
                f"{_an_hint(f, st)}")
    if int(st.is_leaf.sum()) < 2:
        return "Failed to find leaf switches - topology is not fat-tree (compute nodes on fewer than two leaves)"
    if st.roots_given:
        return None  # OpenSM checks the tree's regularity only without a root file
    return _irregular(f, st)


def _irregular(f: Fabric, st: FtreeStructure) -> str | None:
    """``fabric_validate_topology``: the first switch (GUID order) that differs from its rank's first one."""
    s_count = f.num_switches
    up, down = st.g_dir > 0, st.g_dir < 0
    n_up = np.bincount(st.g_src[up], minlength=s_count)
    # down groups: lower switches and CA ports (one group per CA port LID)
    n_down = np.bincount(st.g_src[down], minlength=s_count) + np.bincount(st.ca_switch, minlength=s_count)
    first_up = np.full(s_count, -1, dtype=np.int64)  # cables in the first up / down group of each switch
    first_down = np.full(s_count, -1, dtype=np.int64)
    first_up[st.g_src[up][::-1]] = st.g_size[up][::-1]
    first_down[st.g_src[down][::-1]] = st.g_size[down][::-1]
    first_down = np.where((first_down < 0) & (n_down > 0), 1, first_down)  # only CAs below: groups of one port
    by_guid = np.argsort(guid_key(f.guid[f.switches]), kind="stable")
    by_guid = by_guid[st.rank[by_guid] >= 0]
    ref = np.full(int(st.rank.max(initial=0)) + 1, -1, dtype=np.int64)
    ranks, first = np.unique(st.rank[by_guid], return_index=True)
    ref[ranks] = by_guid[first]  # the first switch of each rank in GUID order is the reference
    r_of = ref[np.maximum(st.rank, 0)]
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
