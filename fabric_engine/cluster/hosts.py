"""Hosts joined across a cluster's fabrics: one host, several HCAs (a rail on each compute plane, storage).

Each fabric's HCAs are read into host names and rails by the cluster's node-description rules
(:class:`~fabric_engine.twin.hostmap.HostMap`, as the job sources read them); the same name on two
fabrics is one host. HCAs whose system image GUID is the same (the readers keep it in
``meta["host_sysimg"]``) are one host too, whatever their descriptions say: a storage fabric whose
HCAs are described ``dgx001-st`` still joins ``dgx001``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..topology import Fabric
from ..twin.hostmap import DEFAULT_PATTERNS, HostMap

__all__ = ["ClusterHosts", "join_hosts"]


@dataclass(frozen=True)
class ClusterHosts:
    """The cluster's hosts and where their HCAs are.

    ``names``: one name per host (the first fabric's); ``hcas[key]``: int64 ``[hosts, rails]`` node index on
    fabric ``key`` per host and rail (column ``r`` is rail ``rails[key][r]``; -1: none);
    ``by_sysimg``: hosts whose HCAs were joined by system image GUID across different names.
    """

    names: list[str]
    hcas: dict[str, np.ndarray]
    rails: dict[str, list[int]]
    by_sysimg: int

    def on_every(self, keys: Sequence[str]) -> np.ndarray:
        """Mask of the hosts with at least one HCA on each fabric of ``keys``."""
        mask = np.ones(len(self.names), dtype=bool)
        for key in keys:
            mask &= (self.hcas[key] >= 0).any(axis=1)
        return mask

    def nodes(self, key: str, names: Sequence[str]) -> np.ndarray:
        """Node indices on fabric ``key`` of the HCAs of the hosts ``names`` (every rail; unknown names skipped)."""
        at = {n: i for i, n in enumerate(self.names)}
        rows = np.fromiter((at[n] for n in names if n in at), dtype=np.int64)
        found = self.hcas[key][rows].ravel()
        return found[found >= 0]


class _Union:
    def __init__(self) -> None:
        self.parent: list[int] = []

    def add(self) -> int:
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[max(ra, rb)] = min(ra, rb)
        return True


def join_hosts(fabrics: dict[str, Fabric], patterns: Sequence[str] = DEFAULT_PATTERNS) -> ClusterHosts:
    """Join the HCAs of ``fabrics`` (key -> fabric, in the cluster's order) into hosts (once per topology)."""
    rules = HostMap(patterns or DEFAULT_PATTERNS)
    union = _Union()
    entries: list[tuple[str, str, int, int]] = []  # (fabric key, host name, rail, node)
    first_of_name: dict[str, int] = {}
    first_of_sysimg: dict[str, int] = {}
    by_sysimg = 0
    for key, fabric in fabrics.items():
        sysimg = fabric.meta.get("host_sysimg") or {}
        rules.index(fabric)  # refuses two HCAs of one host claiming the same rail
        for node in fabric.hosts.tolist():  # each HCA once (once per topology, not per tick)
            desc = str(fabric.node_name[node])
            host, rail = rules.split(desc) or (desc, 1)
            i = union.add()
            entries.append((key, host, rail, node))
            j = first_of_name.setdefault(host, i)
            if j != i:
                union.join(i, j)
            g = sysimg.get(str(node))
            if g:
                j = first_of_sysimg.setdefault(g, i)
                if j != i and entries[j][1] != host and union.join(i, j):
                    by_sysimg += 1
    roots = np.fromiter((union.find(i) for i in range(len(entries))), dtype=np.int64, count=len(entries))
    uniq, host_of = np.unique(roots, return_inverse=True)
    names = [entries[int(r)][1] for r in uniq]  # a root is its group's first entry: the first fabric's name
    hcas, rails_of = {}, {}
    keys = np.array([e[0] for e in entries], dtype=object)
    rail = np.fromiter((e[2] for e in entries), dtype=np.int64, count=len(entries))
    node = np.fromiter((e[3] for e in entries), dtype=np.int64, count=len(entries))
    for key in fabrics:
        mine = keys == key
        rails_of[key] = sorted(set(rail[mine].tolist()))
        table = np.full((len(names), max(len(rails_of[key]), 1)), -1, dtype=np.int64)
        column = np.searchsorted(np.asarray(rails_of[key], dtype=np.int64), rail[mine])
        table[host_of[mine], column] = node[mine]
        hcas[key] = table
    return ClusterHosts(names, hcas, rails_of, by_sysimg)
