"""The aggregation manager: allocates a streaming-aggregation tree per job and releases it.

Like SHARP's ``sharp_am`` in dynamic-tree mode (SHARP Rev 3.5, "Operating NVIDIA
SHARP in Dynamic Trees Allocation Mode"), a tree is built when a job asks for one
and deleted when the job ends. A request is refused, and the job falls back to its
host-based all-reduce, when the tenant is not allowed, the switches have no
streaming aggregation, the subnet's trees are used up, or every candidate root
would put a switch or a port over its limit (:class:`~.resources.SharpConfig`).
When the fabric lists its SHARP Aggregation Nodes (a fabric read from a real
capture: :attr:`Fabric.aggregation_switches`), only switches with one aggregate:
a tree through any other switch is refused. Every outcome is recorded as an event.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..routing import Routing
from ..routing.graph import switch_distances
from ..routing.levels import levels
from .resources import SharpConfig
from .tree import SharpTree, build_tree, candidate_roots

__all__ = ["AggregationManager", "Allocation", "EVENTS_KEPT"]

#: Number of recent events the manager keeps.
EVENTS_KEPT = 50


@dataclass(frozen=True)
class Allocation:
    """The outcome of a request: the tree, or ``None`` and the reason it was refused."""

    tree: SharpTree | None
    reason: str | None = None


class AggregationManager:
    """Streaming-aggregation trees of one fabric and the switch and port resources they hold.

    Parameters
    ----------
    routing : Routing
    config : SharpConfig

    Attributes
    ----------
    trees : dict
        Job name -> its :class:`SharpTree`.
    switch_trees : ndarray, int64 ``[S]``
        Active trees per switch (switch index order).
    port_trees : ndarray, int64 ``[P]``
        Active trees per port slot.
    events : deque of dict
        Recent ``{"t", "kind", "job", ...}`` with ``kind`` ``allocated``, ``released`` or ``fallback``.

    Examples
    --------
    >>> from fabric_engine.topology.generate import fat_tree
    >>> from fabric_engine.routing import route
    >>> f = fat_tree(hosts=8, radix=4)
    >>> am = AggregationManager(route(f), SharpConfig("quantum"))
    >>> [f.node_name[am.allocate(j, "t", h).tree.root] for j, h in (("a", f.hosts[:4]), ("b", f.hosts[4:]))]
    ['spine01', 'spine02']
    >>> am.allocate("c", "t", f.hosts[[0, 4]]).reason
    'no streaming tree left on leaf01 (1 per switch)'
    >>> am.release("a"), am.allocate("c", "t", f.hosts[[0, 4]]).reason
    (True, 'no streaming tree left on leaf03 (1 per switch)')
    """

    def __init__(self, routing: Routing, config: SharpConfig) -> None:
        self.routing = routing
        self.fabric = routing.fabric
        self.config = config
        self.levels = levels(self.fabric, switch_distances(self.fabric))
        self.trees: dict[str, SharpTree] = {}
        self.switch_trees = np.zeros(self.fabric.num_switches, dtype=np.int64)
        self.port_trees = np.zeros(int(self.fabric.nports.sum()), dtype=np.int64)
        self.events: deque[dict] = deque(maxlen=EVENTS_KEPT)
        an = self.fabric.aggregation_switches
        #: Per switch (switch index order): it has an Aggregation Node; ``None`` when the fabric lists none.
        self.capable: np.ndarray | None = None
        if an.size:
            self.capable = np.zeros(self.fabric.num_switches, dtype=bool)
            self.capable[self.fabric.switch_index[an]] = True

    # ---------------------------------------------------------------- trees
    def plan(self, hosts: np.ndarray) -> SharpTree | str:
        """A tree for ``hosts`` ignoring resources (the first candidate root), or why none exists."""
        roots = self._roots(hosts)
        if isinstance(roots, str):
            return roots
        return build_tree(self.routing, self.levels, hosts, int(roots[0]))

    def _roots(self, hosts: np.ndarray) -> np.ndarray | str:
        f = self.fabric
        leaves = np.unique(f.host_leaf[np.asarray(hosts, dtype=np.int64)])
        if (leaves < 0).any():
            return "a host of the job is not cabled"
        roots = candidate_roots(self.levels, f.switch_index[leaves])
        if roots.size == 0:
            return "the job's leaf switches have no common ancestor"
        # Least used roots first, then switch order (spreads trees over the spines).
        return roots[np.lexsort((roots, self.switch_trees[roots]))]

    def _over_limit(self, tree: SharpTree) -> str | None:
        f, cfg = self.fabric, self.config
        sw = f.switch_index[tree.switches]
        if self.capable is not None and not self.capable[sw].all():
            return f"{f.node_name[tree.switches[~self.capable[sw]][0]]} has no SHARP Aggregation Node"
        full = self.switch_trees[sw] >= cfg.switch_limit
        if full.any():
            return f"no streaming tree left on {f.node_name[tree.switches[full][0]]} ({cfg.switch_limit} per switch)"
        if cfg.port_limit is not None:
            slots = tree.port_slots(f)
            busy = self.port_trees[slots] >= cfg.port_limit
            if busy.any():
                s = slots[busy][0]
                return (f"port {int(f.port_num[s])} of {f.node_name[f.port_node[s]]} already carries "
                        f"{cfg.port_limit} active tree(s)")
        return None

    def allocate(self, job: str, tenant: str, hosts: np.ndarray, t: float = 0.0) -> Allocation:
        """Give ``job`` a tree, holding its resources, or refuse (an event says why)."""
        if job in self.trees:
            return Allocation(self.trees[job])
        cfg = self.config
        reason = None
        if not cfg.allows(tenant):
            reason = f"tenant {tenant} is not allowed to use SHARP"
        elif cfg.gen is None:
            reason = "the switches have no streaming aggregation"
        elif len(self.trees) >= cfg.tree_limit:
            reason = f"all {cfg.tree_limit} streaming trees of the subnet are in use"
        if reason is None:
            roots = self._roots(hosts)
            if isinstance(roots, str):
                reason = roots
            else:
                for r in roots:  # few candidate roots (the spines above the job)
                    tree = build_tree(self.routing, self.levels, hosts, int(r))
                    reason = tree if isinstance(tree, str) else self._over_limit(tree)
                    if reason is None:
                        return self._hold(job, tree, t)
        self.events.append({"t": round(float(t), 3), "kind": "fallback", "job": job, "reason": reason})
        return Allocation(None, reason)

    def _hold(self, job: str, tree: SharpTree, t: float) -> Allocation:
        f = self.fabric
        self.trees[job] = tree
        self.switch_trees[f.switch_index[tree.switches]] += 1
        self.port_trees[tree.port_slots(f)] += 1
        self.events.append({"t": round(float(t), 3), "kind": "allocated", "job": job,
                            "root": str(f.node_name[tree.root]), "switches": int(len(tree.switches))})
        return Allocation(tree)

    def release(self, job: str, t: float = 0.0) -> bool:
        """Free the tree of ``job``; returns whether it had one."""
        tree = self.trees.pop(job, None)
        if tree is None:
            return False
        f = self.fabric
        self.switch_trees[f.switch_index[tree.switches]] -= 1
        self.port_trees[tree.port_slots(f)] -= 1
        self.events.append({"t": round(float(t), 3), "kind": "released", "job": job})
        return True

    # --------------------------------------------------------------- report
    def switches_in_use(self) -> list[dict]:
        """Per switch holding trees: ``{"node", "name", "trees", "ports", "limit", "jobs"}``."""
        f = self.fabric
        used = np.flatnonzero(self.switch_trees > 0)
        nodes = f.switches[used]
        slot_used = self.port_trees > 0
        ports = np.bincount(f.port_node[slot_used], minlength=f.num_nodes)
        members: dict[int, list[str]] = {int(n): [] for n in nodes}
        for name, tree in self.trees.items():  # one entry per job
            for s in tree.switches:
                members[int(s)].append(name)
        return [{"node": int(n), "name": str(f.node_name[n]), "tier": int(f.tier[n]),
                 "trees": int(self.switch_trees[i]), "ports": int(ports[n]), "limit": self.config.switch_limit,
                 "jobs": sorted(members[int(n)])} for i, n in zip(used, nodes, strict=True)]
