"""Deterministic generators of real cluster fabric designs.

Every generator assigns names, GUIDs and LIDs in a stable order (leaves, then
spines, then cores, hosts last) and validates the
result: no port above the radix, no port used twice, every cable joins two ports.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopologyError
from .fabric import KIND_HOST, KIND_SWITCH, ROLES, Fabric
from .speeds import speed_code

__all__ = ["fat_tree"]

SWITCH_GUID_BASE = 0x98039B0300000000  # NVIDIA/Mellanox OUI 98:03:9b
HOST_GUID_BASE = 0xB83FD20300000000  # NVIDIA/Mellanox OUI b8:3f:d2
HOST_GUID_STRIDE = 0x10  # room for the port GUIDs of multi-port HCAs


class _Builder:
    """Collects nodes and cables; port numbers are handed out per node in call order."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.kind: list[int] = []
        self.nports: list[int] = []
        self.role: list[int] = []
        self.tier: list[int] = []
        self.group: list[int] = []
        self.next_port: list[int] = []
        self.links: list[tuple[int, int, int, int]] = []

    def add(self, name: str, kind: int, nports: int, role: str, tier: int, group: int = -1) -> int:
        self.names.append(name)
        self.kind.append(kind)
        self.nports.append(nports)
        self.role.append(ROLES.index(role))
        self.tier.append(tier)
        self.group.append(group)
        self.next_port.append(1)
        return len(self.names) - 1

    def port(self, node: int) -> int:
        p = self.next_port[node]
        if p > self.nports[node]:
            raise TopologyError(f"{self.names[node]} has no free port left (radix {self.nports[node]})")
        self.next_port[node] = p + 1
        return p

    def cable(self, a: int, b: int) -> None:
        self.links.append((a, self.port(a), b, self.port(b)))

    def build(self, name: str, speed: str, width: int, meta: dict) -> Fabric:
        kind = np.array(self.kind, dtype=np.int8)
        sw = np.flatnonzero(kind == KIND_SWITCH)
        hosts = np.flatnonzero(kind == KIND_HOST)
        nports = np.array(self.nports)
        guid = np.zeros(len(kind), dtype=np.uint64)
        guid[sw] = SWITCH_GUID_BASE + np.arange(1, len(sw) + 1, dtype=np.uint64)
        guid[hosts] = HOST_GUID_BASE + np.arange(1, len(hosts) + 1, dtype=np.uint64) * HOST_GUID_STRIDE
        lid = np.zeros(len(kind), dtype=np.int32)
        lid[sw] = np.arange(1, len(sw) + 1)
        # Hosts take one LID per port, consecutively after the switches.
        host_ports = nports[hosts]
        lid[hosts] = len(sw) + 1 + np.concatenate([[0], np.cumsum(host_ports)[:-1]]).astype(np.int32)
        links = np.array(self.links, dtype=np.int64).reshape(-1, 4)
        try:
            code = speed_code(speed)
        except KeyError:
            raise TopologyError(f"unknown link speed {speed!r}") from None
        return Fabric.build(
            name, kind=kind, node_name=self.names, guid=guid, lid=lid, nports=nports,
            role=self.role, tier=self.tier, group=self.group,
            a_node=links[:, 0], a_port=links[:, 1], b_node=links[:, 2], b_port=links[:, 3],
            width=width, speed=code, meta=meta,
        )


def _leaf_split(radix: int, oversubscription: float) -> tuple[int, int]:
    """Down and up ports of a leaf of ``radix`` ports at ``oversubscription``:1."""
    if oversubscription < 1:
        raise TopologyError("oversubscription must be >= 1")
    up = int(round(radix / (1 + oversubscription)))
    return radix - up, up


def fat_tree(
    hosts: int,
    radix: int = 64,
    levels: int = 2,
    oversubscription: float = 1.0,
    cores: int | None = None,
    speed: str = "NDR",
    width: int = 4,
    name: str | None = None,
    host_prefix: str = "gpu",
) -> Fabric:
    """A 2- or 3-level folded-Clos fat tree of ``hosts`` single-port hosts.

    Parameters
    ----------
    hosts : int
        Number of hosts; the last leaf may be partly filled.
    radix : int
        Ports per switch.
    levels : int
        2 (leaf, spine) or 3 (leaf, spine, core; spines and leaves grouped in pods).
    oversubscription : float
        Ratio of host-facing to spine-facing bandwidth at the leaf (1, 2, 3, ...).
    cores : int, optional
        Number of core switches for 3 levels (default: enough for full bisection
        among the pods' spine up-ports).
    speed, width :
        Link lane speed name and width in lanes for every cable.

    Examples
    --------
    >>> f = fat_tree(hosts=512, radix=64)
    >>> f.num_hosts, f.num_switches, f.num_links
    (512, 48, 1024)
    """
    if hosts < 1 or radix < 2:
        raise TopologyError("need at least one host and a radix of at least 2")
    down, up = _leaf_split(radix, oversubscription)
    if up < 1:
        raise TopologyError(f"oversubscription {oversubscription} leaves no uplink on a radix-{radix} leaf")
    n_leaves = -(-hosts // down)
    meta = {"generator": "fat_tree", "hosts": hosts, "radix": radix, "levels": levels,
            "oversubscription": oversubscription, "speed": speed}
    b = _Builder()
    if levels == 2:
        if n_leaves > radix:
            raise TopologyError(f"{n_leaves} leaves exceed the radix {radix} of a 2-level tree; use levels=3")
        leaves = [b.add(f"leaf{i + 1:02d}", KIND_SWITCH, radix, "switch", 1) for i in range(n_leaves)]
        spines = [b.add(f"spine{i + 1:02d}", KIND_SWITCH, radix, "switch", 2) for i in range(up)]
        hs = [b.add(f"{host_prefix}{i + 1:04d}", KIND_HOST, 1, "gpu", 0) for i in range(hosts)]
        for i, h in enumerate(hs):
            b.cable(leaves[i // down], h)
        for leaf in leaves:
            for spine in spines:
                b.cable(leaf, spine)
    elif levels == 3:
        leaves_per_pod = radix // 2
        n_pods = -(-n_leaves // leaves_per_pod)
        spine_up = radix - leaves_per_pod
        n_cores = cores if cores is not None else up * spine_up
        if n_cores % up:
            raise TopologyError(f"cores ({n_cores}) must be a multiple of the spines per pod ({up})")
        per_plane = n_cores // up  # cores reached by spine j of every pod
        if per_plane > spine_up:
            raise TopologyError(f"{n_cores} cores need more than the {spine_up} up-ports of a spine")
        if n_pods * (spine_up // per_plane) > radix:
            raise TopologyError(f"{n_pods} pods exceed the radix {radix} of the core switches")
        pod_of_leaf = [i // leaves_per_pod for i in range(n_leaves)]
        leaves = [b.add(f"leaf{i + 1:03d}", KIND_SWITCH, radix, "switch", 1, pod_of_leaf[i]) for i in range(n_leaves)]
        spines = [[b.add(f"spine{p + 1:02d}-{j + 1:02d}", KIND_SWITCH, radix, "switch", 2, p) for j in range(up)]
                  for p in range(n_pods)]
        core = [b.add(f"core{i + 1:03d}", KIND_SWITCH, radix, "switch", 3) for i in range(n_cores)]
        hs = [b.add(f"{host_prefix}{i + 1:05d}", KIND_HOST, 1, "gpu", 0, pod_of_leaf[i // down]) for i in range(hosts)]
        for i, h in enumerate(hs):
            b.cable(leaves[i // down], h)
        for i, leaf in enumerate(leaves):
            for s in spines[pod_of_leaf[i]]:
                b.cable(leaf, s)
        links_per_core = spine_up // per_plane
        for pod in spines:
            for j, s in enumerate(pod):
                for c in range(per_plane):
                    for _ in range(links_per_core):
                        b.cable(s, core[j * per_plane + c])
    else:
        raise TopologyError("levels must be 2 or 3")
    return b.build(name or f"fat-tree-{hosts}", speed, width, meta)
