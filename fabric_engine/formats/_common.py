"""Conventions shared by the text formats: node names, roles, tiers and LIDs.

Node names
----------
Real ``ibnetdiscover`` output names a node only by its NodeDescription, and host
HCAs describe themselves as ``"<hostname> HCA-<n>"`` (older OFED) or
``"<hostname> mlx5_<n>"`` (rdma-core). A host's name is its description with that
suffix removed (``"gpu0001 HCA-1"`` -> ``"gpu0001"``) when the result is unique;
otherwise (two HCAs of one host, each its own CA) the full description is kept.
Names still repeated after that -- e.g. SHARP aggregation nodes, which all describe
themselves as ``"Mellanox Technologies Aggregation Node"`` -- get the node GUID
appended (``"... Aggregation Node 0x0002c90300a1b2c4"``). The writers add
``" HCA-1"`` to a host name that has no such suffix, so names survive
generate -> ibsim net -> ibsim -> ibnetdiscover -> parse.

Roles and tiers
---------------
Neither file format carries roles or tiers. Host roles come from name patterns
(:data:`ROLE_PATTERNS`: ``stor*`` -> storage, ``mgmt*``/``ufm*`` -> mgmt, the rest
gpu); SHARP Aggregation Nodes get the role ``aggregation`` and are no hosts
(:mod:`.records`). Switch tiers come from the graph: a switch cabled to a host
(aggregation nodes aside) is a leaf (tier 1); any other switch is one tier above
its hop distance from the nearest leaf (spine 2, core 3; deeper ones stay 3).
"""

from __future__ import annotations

import re

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra

from ..errors import FormatError, TopologyError
from ..topology import KIND_HOST, KIND_SWITCH, ROLES, Fabric
from ..topology.limits import MAX_UNICAST_LID

__all__ = ["HCA_SUFFIX", "ROLE_PATTERNS", "AGGREGATION_NODE", "AN_DESCRIPTION", "node_names", "host_description",
           "infer_roles", "infer_tiers", "fill_lids", "build"]

# The look-behind lets a search try a run of blanks only from its first blank: linear, not quadratic.
HCA_SUFFIX = re.compile(r"(?<!\s)\s+(?:HCA-\d+|mlx\d+_\d+)$")
AGGREGATION_NODE = "Aggregation Node"
#: The NodeDescription every SHARP Aggregation Node of NVIDIA's switches reports.
AN_DESCRIPTION = "Mellanox Technologies Aggregation Node"
#: (role, regex on the node name), first match wins; hosts that match none are ``gpu``.
ROLE_PATTERNS: tuple[tuple[str, str], ...] = (
    ("storage", r"^(?:stor|storage|nfs|lustre|gpfs|ddn|vast|weka|oss|mds)"),
    ("mgmt", r"^(?:mgmt|mgt|ufm|head|login|admin)"),
)


def host_description(name: str) -> str:
    """NodeDescription a writer gives a host: its name plus ``" HCA-1"`` unless it has such a suffix."""
    return name if HCA_SUFFIX.search(name) else f"{name} HCA-1"


def node_names(kind: np.ndarray, desc: list[str], guid: np.ndarray) -> list[str]:
    """Unique node names from descriptions (see the module docstring)."""
    names = [HCA_SUFFIX.sub("", d) if k == KIND_HOST else d for k, d in zip(kind.tolist(), desc, strict=True)]
    counts: dict[str, int] = {}
    for nm in names:
        counts[nm] = counts.get(nm, 0) + 1
    names = [d if counts[nm] > 1 and nm != d else nm for nm, d in zip(names, desc, strict=True)]
    counts = {}
    for nm in names:
        counts[nm] = counts.get(nm, 0) + 1
    return [f"{nm} 0x{int(g):016x}" if counts[nm] > 1 else nm for nm, g in zip(names, guid.tolist(), strict=True)]


def infer_roles(kind: np.ndarray, names: list[str]) -> np.ndarray:
    """Role code of every node (switches ``switch``; hosts by :data:`ROLE_PATTERNS`)."""
    role = np.full(len(kind), ROLES.index("gpu"), dtype=np.int8)
    role[kind == KIND_SWITCH] = ROLES.index("switch")
    compiled = [(ROLES.index(r), re.compile(p, re.I)) for r, p in ROLE_PATTERNS]
    for i in np.flatnonzero(kind == KIND_HOST).tolist():
        for code, rx in compiled:
            if rx.search(names[i]):
                role[i] = code
                break
    return role


def infer_tiers(kind: np.ndarray, a_node: np.ndarray, b_node: np.ndarray, ignore_hosts: np.ndarray) -> np.ndarray:
    """Tier of every node: hosts 0, leaves 1, then 1 + hop distance from the nearest leaf (max 3)."""
    n = len(kind)
    tier = np.zeros(n, dtype=np.int8)
    sw = kind == KIND_SWITCH
    if not sw.any():
        return tier
    host_end = (kind[a_node] == KIND_HOST) & ~ignore_hosts[a_node] | (kind[b_node] == KIND_HOST) & ~ignore_hosts[b_node]
    leaf = np.zeros(n, dtype=bool)
    leaf[a_node[host_end]] = True
    leaf[b_node[host_end]] = True
    leaf &= sw
    ss = sw[a_node] & sw[b_node]
    # Graph of switch-to-switch cables plus a virtual source (index n) one hop from every leaf.
    src = np.concatenate([a_node[ss], b_node[ss], np.full(int(leaf.sum()), n)])
    dst = np.concatenate([b_node[ss], a_node[ss], np.flatnonzero(leaf)])
    graph = coo_matrix((np.ones(len(src)), (src, dst)), shape=(n + 1, n + 1)).tocsr()
    dist = dijkstra(graph, indices=n, unweighted=True)[:n]
    hops = np.where(np.isfinite(dist), dist, 2)  # switches out of reach of any leaf count as spines
    tier[sw] = np.clip(hops[sw], 1, 3).astype(np.int8)
    return tier


def fill_lids(port_lid: np.ndarray, is_host_port: np.ndarray, switch_lid: np.ndarray) -> tuple[np.ndarray, int]:
    """Give every host port and switch without a LID (0) a free unicast LID, in order.

    Files written before a subnet manager ran (or unconnected HCA ports, which have
    no LID) carry LID 0, but a :class:`Fabric` needs one LID per host port and
    switch. Returns the filled arrays (host port LIDs, then switch LIDs, concatenated
    as given) and how many were filled. Filled LIDs are the lowest unused ones.
    LIDs must already be in 0..0xBFFF; raises :class:`TopologyError` when too few
    unicast LIDs are free.
    """
    lids = np.concatenate([port_lid[is_host_port], switch_lid]).astype(np.int64)
    if lids.size and (lids.min() < 0 or lids.max() > MAX_UNICAST_LID):
        raise TopologyError(f"LIDs must be 0 (none yet) or unicast (1..{MAX_UNICAST_LID})")
    missing = np.flatnonzero(lids == 0)
    if missing.size:
        used = np.zeros(MAX_UNICAST_LID + 1, dtype=bool)
        used[lids[lids > 0]] = True
        used[0] = True
        free = np.flatnonzero(~used)[: missing.size]
        if free.size < missing.size:
            raise TopologyError(f"{missing.size:,} ports and switches have no LID and only {free.size:,} of the "
                                f"{MAX_UNICAST_LID:,} unicast LIDs are free")
        lids[missing] = free
    return lids, int(missing.size)


def build(source: str, name: str, **arrays) -> Fabric:
    """``Fabric.build`` whose :class:`TopologyError` becomes a :class:`FormatError` naming ``source``."""
    try:
        return Fabric.build(name, **arrays)
    except TopologyError as exc:
        raise FormatError(source, None, str(exc)) from None
