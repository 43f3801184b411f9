"""Levelled (fat-tree-like) structure of a fabric: leaves, up and down links, ancestry.

Leaves are the switches with hosts (level 1; SHARP Aggregation Nodes, CAs inside the switches,
make no leaf); every other switch is one level above its nearest leaf. ``level=`` gives the levels
instead (ftree passes OpenSM's ranks). A link between levels ``l`` and ``l + 1`` is *up* from the
lower end; a link inside one level is a *sibling* link (not used by up/down style engines); a
cable from a switch to itself is neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..topology import Fabric

__all__ = ["Levels", "levels"]


@dataclass(frozen=True, eq=False)
class Levels:
    """Switch levels and the up/down link structure, indexed by switch index.

    Attributes
    ----------
    level : int16 ``[S]``
        1 for leaves, ``1 + distance to the nearest leaf`` otherwise, 0 when no leaf is reachable.
    up_src, up_dst, up_port, up_rport : int arrays ``[U]``
        Every up link (switch index at the lower end, at the upper end, port at each end),
        sorted by ``(up_src, up_dst, up_port)``.
    anc : bool ``[S, S]``
        ``anc[a, x]``: ``x`` can be reached from ``a`` going only down (``anc[a, a]`` is true).
    sibling_links : int
        Number of cables inside one level.
    """

    level: np.ndarray
    up_src: np.ndarray
    up_dst: np.ndarray
    up_port: np.ndarray
    up_rport: np.ndarray
    anc: np.ndarray
    sibling_links: int
    notes: list = field(default_factory=list)

    @property
    def top(self) -> int:
        return int(self.level.max(initial=0))


def levels(fabric: Fabric, dist: np.ndarray | None, level: np.ndarray | None = None) -> Levels:
    """Rank the switches of ``fabric`` from its leaves (``dist``: switch hop counts, -1 unreachable).

    ``level`` (int ``[S]``, 1 = leaves, 0 = none) replaces the ranking from the leaves; ``dist`` is then unused.
    """
    f = fabric
    s_count = f.num_switches
    si = f.switch_index
    is_host = np.zeros(f.num_nodes, dtype=bool)
    is_host[f.hosts] = True
    host_links = is_host[f.dl_src] & (si[f.dl_dst] >= 0)
    leaf = np.zeros(s_count, dtype=bool)
    leaf[si[f.dl_dst[host_links]]] = True
    if level is not None:
        level = np.asarray(level, dtype=np.int16)
    elif leaf.any():
        d = np.where(dist[:, leaf] >= 0, dist[:, leaf], np.iinfo(np.int16).max).min(axis=1)
        level = np.where(d < np.iinfo(np.int16).max, d + 1, 0).astype(np.int16)
    else:
        level = np.zeros(s_count, dtype=np.int16)
    sw = np.flatnonzero((si[f.dl_src] >= 0) & (si[f.dl_dst] >= 0) & (f.dl_src != f.dl_dst))
    a, b = si[f.dl_src[sw]], si[f.dl_dst[sw]]
    la, lb = level[a], level[b]
    up = (la > 0) & (lb == la + 1)
    order = np.lexsort((f.dl_src_port[sw][up], b[up], a[up]))
    up_src, up_dst = a[up][order].astype(np.int64), b[up][order].astype(np.int64)
    up_port = f.dl_src_port[sw][up][order].astype(np.int64)
    up_rport = f.dl_dst_port[sw][up][order].astype(np.int64)
    sibling = int(((la == lb) & (la > 0)).sum() // 2)
    # Ancestry: anc = I + down . anc, iterated once per level.
    down = sp.csr_matrix((np.ones(len(up_src), dtype=np.int8), (up_dst, up_src)), shape=(s_count, s_count))
    eye = sp.identity(s_count, dtype=np.int8, format="csr")
    anc = eye
    for _ in range(max(1, int(level.max(initial=0)))):
        anc = eye + down @ anc
        anc.data[:] = 1
    notes = []
    if sibling:
        notes.append(f"{sibling} cable(s) join switches of the same level; they carry no up/down route")
    if (level == 0).any():
        notes.append(f"{int((level == 0).sum())} switch(es) reach no leaf")
    return Levels(level, up_src, up_dst, up_port, up_rport, anc.toarray().astype(bool), sibling, notes)
