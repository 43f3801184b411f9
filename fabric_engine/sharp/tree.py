"""SHARP reduction trees: the switches above a job's leaves, joined along the routing's up-ports.

A tree's root is a lowest common ancestor of the job's leaf switches (every leaf
reaches it going only up, :class:`~fabric_engine.routing.levels.Levels`). Each leaf
joins it along the LFTs toward the root's LID: destination routing makes the union
of those paths an in-tree, and on an up/down fabric every hop is an up-port. Each
host is a child of its leaf. A job on one leaf has a tree of that leaf alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..routing import MAX_HOPS, NO_PATH, Routing
from ..routing.levels import Levels

__all__ = ["SharpTree", "candidate_roots", "build_tree"]


@dataclass(frozen=True, eq=False)
class SharpTree:
    """A reduction tree.

    Attributes
    ----------
    root : int
        Node index of the root switch.
    hosts, host_links : ndarray of int64, ``(n,)``
        The job's hosts and the directed link from each to its leaf.
    child, parent, up_links : ndarray of int64, ``(m,)``
        Switch-to-switch edges: child and parent node, directed link child -> parent.
    """

    root: int
    hosts: np.ndarray
    host_links: np.ndarray
    child: np.ndarray
    parent: np.ndarray
    up_links: np.ndarray

    @property
    def switches(self) -> np.ndarray:
        """Node indices of the tree's switches, ascending."""
        return np.unique(np.concatenate([[self.root], self.child, self.parent]).astype(np.int64))

    @property
    def links_up(self) -> np.ndarray:
        """Directed links carrying data toward the root: host links, then switch edges."""
        return np.concatenate([self.host_links, self.up_links]).astype(np.int64)

    def links(self, fabric) -> np.ndarray:
        """Every directed link of the tree, both directions."""
        up = self.links_up
        return np.concatenate([up, fabric.reverse(up)]).astype(np.int64)

    def port_slots(self, fabric) -> np.ndarray:
        """Port slots of the switch ports the tree uses (leaf ports to hosts, both ends of switch edges)."""
        up = self.links_up
        lower = fabric.dl_src[self.up_links]
        slots = [fabric.port_offset[fabric.dl_dst[up]] + fabric.dl_dst_port[up] - 1,
                 fabric.port_offset[lower] + fabric.dl_src_port[self.up_links] - 1]
        return np.unique(np.concatenate(slots).astype(np.int64))

    def bottleneck_gbps(self, fabric) -> float:
        """The slowest link of the tree (Gb/s, either direction)."""
        return float(fabric.capacity_gbps[self.links(fabric)].min())

    def as_dict(self, fabric) -> dict:
        names = fabric.node_name
        return {"root": int(self.root), "root_name": str(names[self.root]),
                "switches": [int(s) for s in self.switches],
                "edges": [[int(c), int(p)] for c, p in zip(self.child, self.parent, strict=True)],
                "levels": int(len(np.unique(fabric.tier[self.switches])))}


def candidate_roots(lv: Levels, leaf_si: np.ndarray) -> np.ndarray:
    """Switch indices that are lowest common ancestors of the leaves ``leaf_si`` (empty when none)."""
    common = lv.anc[:, leaf_si].all(axis=1)
    if not common.any():
        return np.zeros(0, dtype=np.int64)
    lowest = lv.level[common].min()
    return np.flatnonzero(common & (lv.level == lowest)).astype(np.int64)


def build_tree(routing: Routing, lv: Levels, hosts: np.ndarray, root_si: int) -> SharpTree | str:
    """The tree of ``hosts`` rooted at switch index ``root_si``, or the reason it cannot be built."""
    f = routing.fabric
    hosts = np.asarray(hosts, dtype=np.int64)
    si = f.switch_index
    host_links = f.port_out_link[f.port_offset[hosts]].astype(np.int64)
    if (host_links < 0).any() or (si[f.host_leaf[hosts]] < 0).any():
        return "a host of the job is not cabled to a switch"
    root = int(f.switches[root_si])
    root_lid = int(f.lid[root])
    cur = np.unique(f.host_leaf[hosts]).astype(np.int64)
    cur = cur[cur != root]
    child, parent, links = [], [], []
    for _ in range(MAX_HOPS):  # one step up per level
        if cur.size == 0:
            break
        port = routing.lft[si[cur], root_lid].astype(np.int64)
        bad = (port == 0) | (port == NO_PATH) | (port > f.nports[cur])
        if bad.any():
            return f"no route from {f.node_name[cur[bad][0]]} to root {f.node_name[root]}"
        link = f.port_out_link[f.port_offset[cur] + port - 1].astype(np.int64)
        if (link < 0).any():
            return f"{f.node_name[cur[link < 0][0]]}: routed port toward {f.node_name[root]} is not cabled"
        nxt = f.dl_dst[link].astype(np.int64)
        not_up = (si[nxt] < 0) | (lv.level[np.maximum(si[nxt], 0)] != lv.level[si[cur]] + 1)
        if not_up.any():
            return f"route from {f.node_name[cur[not_up][0]]} toward {f.node_name[root]} is not an up-port"
        child.append(cur)
        parent.append(nxt)
        links.append(link)
        cur = np.unique(nxt)
        cur = cur[cur != root]
    else:
        return f"routes toward {f.node_name[root]} loop"
    cat = (lambda parts: np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64))
    return SharpTree(root, hosts, host_links, cat(child), cat(parent), cat(links))
