"""Deterministic generators of real cluster fabric designs.

* :func:`fat_tree` -- 2- or 3-level folded Clos from a switch radix, a host count and
  a leaf oversubscription ratio.
* :func:`rail_optimized` -- DGX SuperPOD-style scalable units (SUs): every node has one
  HCA per GPU ("rail"); rail ``r`` of every node of an SU goes to that SU's leaf ``r``;
  leaves go to spines across SUs (full Clos), optionally through a core tier.
* :func:`dragonfly_plus` -- groups whose leaves and spines form a complete bipartite
  graph; spine ``j`` of every group is joined to spine ``j`` of every other group by
  global links.

All three can add storage servers (``storage_servers=N`` hosts of ``storage_ports``
HCA ports each, role ``storage``) and management nodes (``mgmt_nodes``, role
``mgmt``), either on dedicated service leaves or spread over free leaf ports.

Every generator assigns names, GUIDs and LIDs in a stable order (leaves, then
spines, then cores, hosts last; switch LIDs first, then one LID per host port) and
validates the result: no port above the radix, no port used twice, every cable
joins two ports (:class:`TopologyError` otherwise). Cables are built as numpy
blocks; a 65,536-host tree is generated in well under a second.

LID space
---------
One InfiniBand subnet has 49,151 unicast LIDs (0x0001-0xBFFF, IBA Vol. 1 sec. 4.1.3),
one per switch and one per host port (LMC 0). A design that needs more (e.g. a
65,536-host fat tree: 65,536 host LIDs + 5,120 switch LIDs) cannot be one subnet:
with the default ``lids="subnet"`` the generator raises :class:`TopologyError`
saying so. ``lids="none"`` returns a :class:`TopologyDesign` instead -- the same
validated nodes and cables with GUIDs but without LIDs -- for offline modelling of
designs larger than a subnet (cabling, port budgets, bisection); it is not a
:class:`Fabric` because routing needs LIDs.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..errors import TopologyError
from .fabric import KIND_HOST, KIND_SWITCH, ROLES, Fabric
from .limits import (
    MAX_DESIGN_NODES,
    MAX_DESIGN_PORTS,
    MAX_FABRIC_PORTS,
    MAX_UNICAST_LID,
    check_generator_parameters,
)
from .speeds import WIDTHS, speed_code

__all__ = ["fat_tree", "rail_optimized", "dragonfly_plus", "TopologyDesign", "MAX_UNICAST_LID", "GENERATORS"]

SWITCH_GUID_BASE = 0x98039B0300000000  # NVIDIA/Mellanox OUI 98:03:9b
HOST_GUID_BASE = 0xB83FD20300000000  # NVIDIA/Mellanox OUI b8:3f:d2
HOST_GUID_STRIDE = 0x10  # room for the port GUIDs of multi-port HCAs
_PLACEMENTS = ("dedicated", "spread")


def _cumcount(x: np.ndarray) -> np.ndarray:
    """Rank of every element among the equal elements before it (0, 1, 2, ... per value)."""
    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.concatenate([[True], xs[1:] != xs[:-1]]))
    run_start = np.repeat(starts, np.diff(np.append(starts, n)))
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = np.arange(n) - run_start
    return ranks


def _checked(generator):
    """Check a generator's arguments against :data:`~.limits.GENERATOR_PARAMETERS` before it runs."""
    signature = inspect.signature(generator)

    @functools.wraps(generator)
    def run(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TopologyError(f"{generator.__name__}: {exc}") from None
        check_generator_parameters(generator.__name__, bound.arguments, generator.__name__)
        return generator(*args, **kwargs)

    return run


def _beyond_subnet(name: str, hosts: int, switches: int, lids: int, so_far: bool = False) -> str:
    return (f"{name}: {hosts:,} hosts and {switches:,} switches{' so far' if so_far else ''} need {lids:,} LIDs, but "
            f"one subnet has {MAX_UNICAST_LID:,} unicast LIDs (0x0001-0xBFFF); split the design into subnets, or "
            f"pass lids='none' to model it offline as a TopologyDesign")


def _too_many_hosts(name: str, host_ports: int, lids: str) -> None:
    """Refuse, before building anything, a design whose host ports alone exceed what it may hold."""
    if lids == "none" and host_ports > MAX_DESIGN_NODES:
        raise TopologyError(f"{name}: {host_ports:,} host ports, but an offline design holds at most "
                            f"{MAX_DESIGN_NODES:,}")
    if lids != "none" and host_ports > MAX_UNICAST_LID:
        raise TopologyError(f"{name}: {host_ports:,} host ports need as many LIDs, but one subnet has "
                            f"{MAX_UNICAST_LID:,} unicast LIDs (0x0001-0xBFFF)")


@dataclass(frozen=True, eq=False)
class TopologyDesign:
    """Validated nodes and cables of a design, before LIDs are assigned.

    Arrays as in :class:`Fabric` (``kind``, ``node_name``, ``guid``, ``nports``, ``role``,
    ``tier``, ``group`` per node; ``a_node``, ``a_port``, ``b_node``, ``b_port`` per cable).
    :meth:`to_fabric` assigns LIDs (switches first, then one per host port) and builds
    the :class:`Fabric`; it raises :class:`TopologyError` when the design needs more
    than the 49,151 unicast LIDs of one subnet.
    """

    name: str
    kind: np.ndarray
    node_name: list
    guid: np.ndarray
    nports: np.ndarray
    role: np.ndarray
    tier: np.ndarray
    group: np.ndarray
    a_node: np.ndarray
    a_port: np.ndarray
    b_node: np.ndarray
    b_port: np.ndarray
    width: int
    speed: int
    meta: dict = field(default_factory=dict)

    @property
    def num_hosts(self) -> int:
        return int((self.kind == KIND_HOST).sum())

    @property
    def num_switches(self) -> int:
        return int((self.kind == KIND_SWITCH).sum())

    @property
    def num_links(self) -> int:
        return len(self.a_node)

    @property
    def lids_needed(self) -> int:
        """Unicast LIDs the design needs at LMC 0: one per switch, one per host port."""
        return self.num_switches + int(self.nports[self.kind == KIND_HOST].sum())

    def to_fabric(self) -> Fabric:
        """Assign LIDs and build the :class:`Fabric`."""
        need = self.lids_needed
        if need > MAX_UNICAST_LID:
            raise TopologyError(_beyond_subnet(self.name, self.num_hosts, self.num_switches, need))
        sw = self.kind == KIND_SWITCH
        hosts = np.flatnonzero(~sw)
        lid = np.zeros(len(self.kind), dtype=np.int32)
        lid[sw] = np.arange(1, int(sw.sum()) + 1)
        host_ports = self.nports[hosts].astype(np.int64)
        lid[hosts] = int(sw.sum()) + 1 + np.concatenate([[0], np.cumsum(host_ports)[:-1]])
        return Fabric.build(
            self.name, kind=self.kind, node_name=self.node_name, guid=self.guid, lid=lid, nports=self.nports,
            role=self.role, tier=self.tier, group=self.group,
            a_node=self.a_node, a_port=self.a_port, b_node=self.b_node, b_port=self.b_port,
            width=self.width, speed=self.speed, meta=self.meta,
        )


class _Builder:
    """Collects node blocks and cable blocks; ports are handed out per node in cable order.

    Refuses, before allocating them, nodes or ports beyond what a subnet (``lids="subnet"``)
    or an offline design (``lids="none"``) may hold.
    """

    def __init__(self, name: str, lids: str = "subnet") -> None:
        if lids not in ("subnet", "none"):
            raise TopologyError(f"lids must be 'subnet' or 'none', not {lids!r}")
        self.name = name
        self.max_nodes, self.max_ports = ((MAX_DESIGN_NODES, MAX_DESIGN_PORTS) if lids == "none"
                                          else (MAX_UNICAST_LID, MAX_FABRIC_PORTS))
        self.ports = self.hosts = self.switches = self.lids = 0
        self.names: list[str] = []
        self._cols: dict[str, list[np.ndarray]] = {k: [] for k in ("kind", "nports", "role", "tier", "group")}
        self.n = 0
        self._next = np.ones(0, dtype=np.int64)
        self._nports = np.zeros(0, dtype=np.int64)
        self._cables: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, k: int, names: Iterable[str], kind: int, nports, role: str, tier: int, group=-1) -> np.ndarray:
        """Add ``k`` nodes named by ``names`` (read only after the sizes are checked); returns their indices.

        ``nports``/``group`` may be scalars or arrays.
        """
        ports = int(np.sum(nports)) if np.ndim(nports) else k * int(nports)
        switch = kind == KIND_SWITCH
        hosts, switches = self.hosts + (0 if switch else k), self.switches + (k if switch else 0)
        lids = self.lids + (k if switch else ports)
        if self.max_nodes == MAX_UNICAST_LID and lids > MAX_UNICAST_LID:
            raise TopologyError(_beyond_subnet(self.name, hosts, switches, lids, so_far=True))
        if self.n + k > self.max_nodes or self.ports + ports > self.max_ports:
            raise TopologyError(
                f"{self.name}: {self.n + k:,} nodes with {self.ports + ports:,} ports so far, more than "
                + (f"one subnet's fabric holds ({MAX_FABRIC_PORTS:,} ports)" if self.max_nodes == MAX_UNICAST_LID else
                   f"an offline design holds ({MAX_DESIGN_NODES:,} nodes, {MAX_DESIGN_PORTS:,} ports)"))
        self.hosts, self.switches, self.lids = hosts, switches, lids
        self.ports += ports
        idx = np.arange(self.n, self.n + k, dtype=np.int64)
        names = list(names)
        if len(names) != k:
            raise TopologyError(f"{len(names)} names for {k} nodes")
        self.names.extend(names)
        values = {"kind": kind, "nports": nports, "role": ROLES.index(role), "tier": tier, "group": group}
        for key, v in values.items():
            self._cols[key].append(np.broadcast_to(np.asarray(v, dtype=np.int64), (k,)).copy())
        self.n += k
        self._next = np.concatenate([self._next, np.ones(k, dtype=np.int64)])
        self._nports = np.concatenate([self._nports, self._cols["nports"][-1]])
        return idx

    def cables(self, a, b) -> None:
        """Cable ``a[i]`` to ``b[i]`` using each node's next free ports (a-ends first)."""
        a = np.asarray(a, dtype=np.int64).ravel()
        b = np.asarray(b, dtype=np.int64).ravel()
        if len(a) != len(b):
            raise TopologyError("cable block ends differ in length")
        if not len(a):
            return
        if 2 * len(a) > self.ports - int(self._next.sum()) + self.n:
            raise TopologyError(f"{self.name}: {len(a):,} more cables than the free ports can take")
        both = np.concatenate([a, b])
        ports = self._next[both] + _cumcount(both)
        over = np.flatnonzero(ports > self._nports[both])
        if over.size:
            node = int(both[over[0]])
            raise TopologyError(f"{self.names[node]} has no free port left (radix {int(self._nports[node])})")
        self._next += np.bincount(both, minlength=self.n)
        self._cables.append((a, ports[: len(a)], b, ports[len(a):]))

    def free_ports(self, nodes: np.ndarray) -> np.ndarray:
        return self._nports[nodes] - self._next[nodes] + 1

    def design(self, name: str, speed: str, width: int, meta: dict) -> TopologyDesign:
        try:
            code = speed_code(speed)
        except KeyError:
            raise TopologyError(f"unknown link speed {speed!r}") from None
        if width not in WIDTHS:
            raise TopologyError(f"link width {width} is not one of {WIDTHS}")
        cols = {k: np.concatenate(v) if v else np.zeros(0, dtype=np.int64) for k, v in self._cols.items()}
        kind = cols["kind"].astype(np.int8)
        sw = np.flatnonzero(kind == KIND_SWITCH)
        hosts = np.flatnonzero(kind == KIND_HOST)
        guid = np.zeros(len(kind), dtype=np.uint64)
        guid[sw] = SWITCH_GUID_BASE + np.arange(1, len(sw) + 1, dtype=np.uint64)
        guid[hosts] = HOST_GUID_BASE + np.arange(1, len(hosts) + 1, dtype=np.uint64) * HOST_GUID_STRIDE
        if len(hosts) and cols["nports"][hosts].max() >= HOST_GUID_STRIDE:
            raise TopologyError(f"hosts have at most {HOST_GUID_STRIDE - 1} ports")
        parts = list(zip(*self._cables, strict=True)) if self._cables else [[np.zeros(0, np.int64)]] * 4
        a_node, a_port, b_node, b_port = (np.concatenate(p) for p in parts)
        return TopologyDesign(
            name=name, kind=kind, node_name=self.names, guid=guid, nports=cols["nports"].astype(np.int16),
            role=cols["role"].astype(np.int8), tier=cols["tier"].astype(np.int8), group=cols["group"].astype(np.int32),
            a_node=a_node, a_port=a_port, b_node=b_node, b_port=b_port, width=width, speed=code, meta=meta,
        )


def _finish(b: _Builder, name: str, speed: str, width: int, meta: dict, lids: str) -> Fabric | TopologyDesign:
    design = b.design(name, speed, width, meta)
    return design if lids == "none" else design.to_fabric()


def _leaf_split(radix: int, oversubscription: float) -> tuple[int, int]:
    """Down and up ports of a leaf of ``radix`` ports at ``oversubscription``:1."""
    if oversubscription < 1:
        raise TopologyError("oversubscription must be >= 1")
    up = int(round(radix / (1 + oversubscription)))
    return radix - up, up


def _round_robin_slots(leaves: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Leaf of every free down port, ordered round-robin over ``leaves`` (first free port of each, then second...)."""
    free = np.maximum(free, 0)
    leaf = np.repeat(leaves, free)
    rank = _cumcount(leaf)
    return leaf[np.lexsort((leaf, rank))]


class _Clos:
    """Spine (and core) tiers above a list of leaves, as in a folded Clos.

    Two levels: ``spines`` spines, each leaf sends ``up // spines`` cables to every
    spine. Three levels: leaves form pods of ``leaves_per_pod``; each pod has ``up``
    spines, one cable from every leaf of the pod to each; spine ``j`` of every pod
    reaches ``cores // up`` cores of plane ``j`` with equal cable counts.
    """

    def __init__(self, b: _Builder, n_leaves: int, up: int, radix: int, levels: int, spines: int | None,
                 cores: int | None, leaves_per_pod: int | None = None) -> None:
        self.b, self.up, self.levels = b, up, levels
        if levels == 2:
            n_spines = up if spines is None else spines
            if n_spines < 1 or up % n_spines:
                raise TopologyError(f"spines ({n_spines}) must divide the leaf up-ports ({up})")
            self.per_pair = up // n_spines
            if n_leaves * self.per_pair > radix:
                raise TopologyError(f"{n_leaves} leaves exceed the radix {radix} of a 2-level tree; use levels=3")
            self.pod_of_leaf = np.full(n_leaves, -1, dtype=np.int64)
            self.spines = b.add(n_spines, (f"spine{i + 1:02d}" for i in range(n_spines)), KIND_SWITCH, radix,
                                "switch", 2)
            self.cores = np.zeros(0, dtype=np.int64)
        elif levels == 3:
            lpp = radix // 2 if leaves_per_pod is None else leaves_per_pod
            if lpp < 1 or lpp >= radix:
                raise TopologyError(f"leaves per pod ({lpp}) must be between 1 and radix-1 ({radix - 1})")
            if up > radix:
                raise TopologyError(f"{up} spines per pod exceed the radix {radix}")
            n_pods = -(-n_leaves // lpp)
            spine_up = radix - lpp
            if cores is None:
                # Fewest cores for full bisection: each plane needs n_pods * spine_up core ports.
                need = -(-n_pods * spine_up // radix)
                if need > spine_up:
                    raise TopologyError(f"{n_pods} pods exceed the radix {radix} of the core switches")
                per_plane = next(d for d in range(max(need, 1), spine_up + 1) if spine_up % d == 0)
                n_cores = up * per_plane
            else:
                n_cores = cores
            if n_cores < up or n_cores % up:
                raise TopologyError(f"cores ({n_cores}) must be a positive multiple of the spines per pod ({up})")
            self.per_plane = n_cores // up  # cores reached by spine j of every pod
            if self.per_plane > spine_up:
                raise TopologyError(f"{n_cores} cores need more than the {spine_up} up-ports of a spine")
            self.links_per_core = spine_up // self.per_plane
            if n_pods * self.links_per_core > radix:
                raise TopologyError(f"{n_pods} pods exceed the radix {radix} of the core switches")
            self.pod_of_leaf = np.arange(n_leaves) // lpp
            names = (f"spine{p + 1:02d}-{j + 1:02d}" for p in range(n_pods) for j in range(up))
            if n_pods * up + n_cores > b.max_nodes:
                raise TopologyError(f"{b.name}: {n_pods * up:,} spines and {n_cores:,} cores are more switches than "
                                    f"the {b.max_nodes:,} nodes it may hold")
            self.spines = b.add(n_pods * up, names, KIND_SWITCH, radix, "switch", 2, np.repeat(np.arange(n_pods), up))
            self.cores = b.add(n_cores, (f"core{i + 1:03d}" for i in range(n_cores)), KIND_SWITCH, radix, "switch",
                               3)
        else:
            raise TopologyError("levels must be 2 or 3")

    def wire(self, leaves: np.ndarray) -> None:
        b, up = self.b, self.up
        n = len(leaves)
        if self.levels == 2:
            b.cables(np.repeat(leaves, up), np.tile(np.repeat(self.spines, self.per_pair), n))
            return
        spines = self.spines.reshape(-1, up)
        b.cables(np.repeat(leaves, up), spines[self.pod_of_leaf].ravel())
        per_spine = self.per_plane * self.links_per_core
        plane = np.arange(up)
        core_of = (plane[:, None] * self.per_plane + np.repeat(np.arange(self.per_plane), self.links_per_core))
        b.cables(np.repeat(spines.ravel(), per_spine), self.cores[np.tile(core_of, (len(spines), 1)).ravel()])


def _service_hosts(b: _Builder, slots_of, storage_servers: int, storage_ports: int, mgmt_nodes: int,
                   group_of_leaf) -> None:
    """Add storage servers and mgmt nodes and cable them to the leaf slots ``slots_of(count)`` gives."""
    if storage_servers < 0 or mgmt_nodes < 0:
        raise TopologyError("storage_servers and mgmt_nodes must be >= 0")
    if storage_servers and not 1 <= storage_ports < HOST_GUID_STRIDE:
        raise TopologyError(f"storage_ports must be between 1 and {HOST_GUID_STRIDE - 1}")
    total = storage_servers * storage_ports + mgmt_nodes
    if not total:
        return
    slots = slots_of(total)
    if len(slots) < total:
        raise TopologyError(f"{storage_servers} storage servers x {storage_ports} ports and {mgmt_nodes} mgmt "
                            f"nodes need {total} leaf ports; only {len(slots)} are free")
    slots = slots[:total]
    if storage_servers:
        first = slots[: storage_servers * storage_ports : storage_ports]
        stor = b.add(storage_servers, (f"stor{i + 1:03d}" for i in range(storage_servers)), KIND_HOST, storage_ports,
                     "storage", 0, group_of_leaf(first))
        b.cables(slots[: storage_servers * storage_ports], np.repeat(stor, storage_ports))
    if mgmt_nodes:
        leaf = slots[storage_servers * storage_ports:]
        mgmt = b.add(mgmt_nodes, (f"mgmt{i + 1:02d}" for i in range(mgmt_nodes)), KIND_HOST, 1, "mgmt", 0,
                     group_of_leaf(leaf))
        b.cables(leaf, mgmt)


def _check_placement(storage_placement: str) -> None:
    if storage_placement not in _PLACEMENTS:
        raise TopologyError(f"storage_placement must be one of {_PLACEMENTS}, not {storage_placement!r}")


@_checked
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
    *,
    spines: int | None = None,
    storage_servers: int = 0,
    storage_ports: int = 2,
    storage_placement: str = "dedicated",
    mgmt_nodes: int = 0,
    lids: str = "subnet",
) -> Fabric | TopologyDesign:
    """A 2- or 3-level folded-Clos fat tree of ``hosts`` single-port hosts.

    Parameters
    ----------
    hosts : int
        Number of GPU hosts; the last leaf may be partly filled.
    radix : int
        Ports per switch.
    levels : int
        2 (leaf, spine) or 3 (leaf, spine, core; leaves and spines grouped in pods of
        ``radix // 2`` leaves, ``group`` = pod).
    oversubscription : float
        Ratio of host-facing to spine-facing ports at the leaf (1, 2, 3, ...).
    cores : int, optional
        Number of core switches for 3 levels; a multiple of the spines per pod
        (default: the fewest cores that take every spine up-port, i.e. full bisection).
    speed, width :
        Link lane speed name and width in lanes for every cable.
    spines : int, optional
        2 levels only: spine count, a divisor of the leaf up-ports (default: one
        spine per up-port, one cable from every leaf to each).
    storage_servers, storage_ports : int
        Storage servers (role ``storage``, named ``stor001``...) of ``storage_ports``
        HCA ports each.
    storage_placement : {"dedicated", "spread"}
        ``dedicated``: storage and mgmt ports go on extra service leaves (named
        ``sleaf..``) wired into the Clos like the others; ``spread``: on the free
        ports of the GPU leaves, round-robin, so a server's ports land on different leaves.
    mgmt_nodes : int
        Single-port management nodes (role ``mgmt``, ``mgmt01``...), placed like storage.
    lids : {"subnet", "none"}
        ``subnet`` returns a :class:`Fabric` (raises if the design needs more than the
        49,151 unicast LIDs of one subnet); ``none`` returns a :class:`TopologyDesign`
        without LIDs for offline modelling of larger designs.

    Examples
    --------
    >>> f = fat_tree(hosts=512, radix=64)
    >>> f.num_hosts, f.num_switches, f.num_links
    (512, 48, 1024)
    >>> fat_tree(hosts=65536, radix=64, levels=3, lids="none").num_links
    196608
    """
    if hosts < 1 or radix < 2:
        raise TopologyError("need at least one host and a radix of at least 2")
    _check_placement(storage_placement)
    down, up = _leaf_split(radix, oversubscription)
    if up < 1 or down < 1:
        raise TopologyError(f"oversubscription {oversubscription} leaves no {'up' if up < 1 else 'down'}link "
                            f"on a radix-{radix} leaf")
    n_leaves = -(-hosts // down)
    service_ports = storage_servers * storage_ports + mgmt_nodes
    n_service = -(-service_ports // down) if storage_placement == "dedicated" else 0
    meta = {"generator": "fat_tree", "hosts": hosts, "radix": radix, "levels": levels,
            "oversubscription": oversubscription, "speed": speed}
    if storage_servers or mgmt_nodes:
        meta.update(storage_servers=storage_servers, storage_ports=storage_ports, mgmt_nodes=mgmt_nodes,
                    storage_placement=storage_placement)
    if levels not in (2, 3):
        raise TopologyError("levels must be 2 or 3")
    if spines is not None and levels == 3:
        raise TopologyError("spines= applies to 2 levels; 3 levels have one spine per leaf up-port in each pod")
    name = name or f"fat-tree-{hosts}"
    _too_many_hosts(name, hosts + service_ports, lids)
    b = _Builder(name, lids)
    digits = 2 if levels == 2 else 3
    lpp = radix // 2
    pod = (np.arange(n_leaves + n_service) // lpp) if levels == 3 else np.full(n_leaves + n_service, -1)
    leaves = b.add(n_leaves, (f"leaf{i + 1:0{digits}d}" for i in range(n_leaves)), KIND_SWITCH, radix, "switch", 1,
                   pod[:n_leaves])
    service = b.add(n_service, (f"sleaf{i + 1:0{digits}d}" for i in range(n_service)), KIND_SWITCH, radix, "switch",
                    1, pod[n_leaves:])
    all_leaves = np.concatenate([leaves, service])
    clos = _Clos(b, len(all_leaves), up, radix, levels, spines if levels == 2 else None, cores)
    host_leaf = np.arange(hosts) // down
    hs = b.add(hosts, (f"{host_prefix}{i + 1:0{4 if levels == 2 else 5}d}" for i in range(hosts)), KIND_HOST, 1,
               "gpu", 0, pod[host_leaf])
    b.cables(leaves[host_leaf], hs)
    group_of = dict(zip(all_leaves.tolist(), pod.tolist(), strict=True))

    def slots_of(count: int) -> np.ndarray:
        if storage_placement == "dedicated":
            return _round_robin_slots(service, np.full(n_service, down))
        return _round_robin_slots(leaves, b.free_ports(leaves) - up)

    _service_hosts(b, slots_of, storage_servers, storage_ports, mgmt_nodes,
                   lambda lv: np.array([group_of[int(x)] for x in lv], dtype=np.int64))
    clos.wire(all_leaves)
    return _finish(b, name, speed, width, meta, lids)


@_checked
def rail_optimized(
    nodes: int = 32,
    gpus_per_node: int = 8,
    nodes_per_su: int = 32,
    radix: int = 64,
    levels: int = 2,
    speed: str = "NDR",
    width: int = 4,
    name: str | None = None,
    node_prefix: str = "dgx",
    *,
    spines: int | None = None,
    cores: int | None = None,
    storage_servers: int = 0,
    storage_ports: int = 2,
    storage_placement: str = "dedicated",
    mgmt_nodes: int = 0,
    lids: str = "subnet",
) -> Fabric | TopologyDesign:
    """A rail-optimized fabric of DGX SuperPOD-style scalable units.

    Every GPU node has ``gpus_per_node`` single-port HCAs, one per rail; each HCA is a
    host (role ``gpu``) named ``dgx0001-hca1`` .. ``dgx0001-hca8``. Scalable unit ``s``
    (``nodes_per_su`` nodes, ``group`` = SU) has one leaf per rail (``su01-leaf1``..);
    HCA ``r`` of every node of the SU is cabled to leaf ``r``, so same-rail traffic
    inside an SU crosses one switch. Leaves use ``nodes_per_su`` down-ports and the rest
    of the radix as up-ports to spines shared by all SUs (a full Clos, as in the
    NVIDIA DGX SuperPOD reference architecture's compute fabric); ``levels=3`` adds a
    core tier above pods of ``radix // 2`` leaves (whole SUs when ``radix // 2`` is a
    multiple of ``gpus_per_node``).

    Examples
    --------
    >>> f = rail_optimized(nodes=64)
    >>> f.num_hosts, f.num_switches
    (512, 48)
    """
    if nodes < 1 or gpus_per_node < 1 or nodes_per_su < 1:
        raise TopologyError("nodes, gpus_per_node and nodes_per_su must be >= 1")
    if nodes_per_su >= radix:
        raise TopologyError(f"{nodes_per_su} nodes per SU leave no up-port on a radix-{radix} leaf")
    _check_placement(storage_placement)
    if levels not in (2, 3):
        raise TopologyError("levels must be 2 or 3")
    down = nodes_per_su
    up = radix - down
    n_su = -(-nodes // nodes_per_su)
    service_ports = storage_servers * storage_ports + mgmt_nodes
    n_service = -(-service_ports // down) if storage_placement == "dedicated" else 0
    if levels == 3 and (radix // 2) % gpus_per_node:
        raise TopologyError(f"a pod of {radix // 2} leaves must hold whole SUs of {gpus_per_node} rail leaves")
    meta = {"generator": "rail_optimized", "nodes": nodes, "gpus_per_node": gpus_per_node,
            "nodes_per_su": nodes_per_su, "radix": radix, "levels": levels, "speed": speed}
    if storage_servers or mgmt_nodes:
        meta.update(storage_servers=storage_servers, storage_ports=storage_ports, mgmt_nodes=mgmt_nodes,
                    storage_placement=storage_placement)
    name = name or f"rail-optimized-{nodes}x{gpus_per_node}"
    _too_many_hosts(name, nodes * gpus_per_node + service_ports, lids)
    b = _Builder(name, lids)
    su_of_leaf = np.repeat(np.arange(n_su), gpus_per_node)
    leaves = b.add(n_su * gpus_per_node,
                   (f"su{s + 1:02d}-leaf{r + 1}" for s in range(n_su) for r in range(gpus_per_node)),
                   KIND_SWITCH, radix, "switch", 1, su_of_leaf)
    service = b.add(n_service, (f"sleaf{i + 1:02d}" for i in range(n_service)), KIND_SWITCH, radix, "switch", 1, -1)
    all_leaves = np.concatenate([leaves, service])
    clos = _Clos(b, len(all_leaves), up, radix, levels, spines if levels == 2 else None, cores)
    node_of = np.repeat(np.arange(nodes), gpus_per_node)
    rail = np.tile(np.arange(gpus_per_node), nodes)
    su = node_of // nodes_per_su
    hs = b.add(nodes * gpus_per_node,
               (f"{node_prefix}{n + 1:04d}-hca{r + 1}" for n in range(nodes) for r in range(gpus_per_node)),
               KIND_HOST, 1, "gpu", 0, su)
    b.cables(leaves[su * gpus_per_node + rail], hs)
    group_of = np.concatenate([su_of_leaf, np.full(n_service, -1)])
    leaf_pos = {int(x): i for i, x in enumerate(all_leaves)}

    def slots_of(count: int) -> np.ndarray:
        if storage_placement == "dedicated":
            return _round_robin_slots(service, np.full(n_service, down))
        return _round_robin_slots(leaves, b.free_ports(leaves) - up)

    _service_hosts(b, slots_of, storage_servers, storage_ports, mgmt_nodes,
                   lambda lv: group_of[[leaf_pos[int(x)] for x in lv]])
    clos.wire(all_leaves)
    return _finish(b, name, speed, width, meta, lids)


@_checked
def dragonfly_plus(
    groups: int = 4,
    leaves_per_group: int = 4,
    spines_per_group: int = 4,
    hosts_per_leaf: int | None = None,
    radix: int = 64,
    global_links: int | None = None,
    speed: str = "NDR",
    width: int = 4,
    name: str | None = None,
    host_prefix: str = "gpu",
    *,
    storage_servers: int = 0,
    storage_ports: int = 2,
    mgmt_nodes: int = 0,
    lids: str = "subnet",
) -> Fabric | TopologyDesign:
    """A Dragonfly+ fabric: bipartite groups joined spine-to-spine by global links.

    Inside group ``g`` (``group`` = g) every leaf has one cable to every spine. Spine
    ``j`` of each group is joined to spine ``j`` of every other group by
    ``global_links // (groups - 1)`` cables (default ``global_links = groups - 1``:
    one cable per pair of groups per spine plane). Hosts fill ``hosts_per_leaf`` leaf
    ports (default: ``radix - spines_per_group``). Storage and mgmt nodes go on free
    leaf ports, round-robin over all leaves.

    Examples
    --------
    >>> f = dragonfly_plus(groups=3, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=4, radix=8)
    >>> f.num_hosts, f.num_switches, f.num_links
    (24, 12, 42)
    """
    if groups < 1 or leaves_per_group < 1 or spines_per_group < 1:
        raise TopologyError("groups, leaves_per_group and spines_per_group must be >= 1")
    hpl = radix - spines_per_group if hosts_per_leaf is None else hosts_per_leaf
    if hpl < 0 or hpl + spines_per_group > radix:
        raise TopologyError(f"{hpl} hosts + {spines_per_group} spine links exceed the leaf radix {radix}")
    others = groups - 1
    glinks = others if global_links is None else global_links
    per_pair = glinks // others if others else 0
    if others and (glinks < others or glinks % others):
        raise TopologyError(f"global_links ({glinks}) must be a positive multiple of groups-1 ({others})")
    if leaves_per_group + glinks * (others > 0) > radix:
        raise TopologyError(f"{leaves_per_group} leaf links + {glinks} global links exceed the spine radix {radix}")
    meta = {"generator": "dragonfly_plus", "groups": groups, "leaves_per_group": leaves_per_group,
            "spines_per_group": spines_per_group, "hosts_per_leaf": hpl, "radix": radix,
            "global_links": glinks if others else 0, "speed": speed}
    if storage_servers or mgmt_nodes:
        meta.update(storage_servers=storage_servers, storage_ports=storage_ports, mgmt_nodes=mgmt_nodes)
    name = name or f"dragonfly-plus-{groups}g"
    _too_many_hosts(name, groups * leaves_per_group * hpl + storage_servers * storage_ports + mgmt_nodes, lids)
    b = _Builder(name, lids)
    g_leaf = np.repeat(np.arange(groups), leaves_per_group)
    leaves = b.add(groups * leaves_per_group,
                   (f"g{g + 1:02d}-leaf{i + 1:02d}" for g in range(groups) for i in range(leaves_per_group)),
                   KIND_SWITCH, radix, "switch", 1, g_leaf)
    g_spine = np.repeat(np.arange(groups), spines_per_group)
    spines = b.add(groups * spines_per_group,
                   (f"g{g + 1:02d}-spine{j + 1:02d}" for g in range(groups) for j in range(spines_per_group)),
                   KIND_SWITCH, radix, "switch", 2, g_spine).reshape(groups, spines_per_group)
    n_hosts = len(leaves) * hpl
    host_leaf = np.repeat(np.arange(len(leaves)), hpl)
    hs = b.add(n_hosts, (f"{host_prefix}{i + 1:04d}" for i in range(n_hosts)), KIND_HOST, 1, "gpu", 0,
               g_leaf[host_leaf])
    b.cables(leaves[host_leaf], hs)
    leaf_pos = {int(x): i for i, x in enumerate(leaves)}
    _service_hosts(b, lambda count: _round_robin_slots(leaves, b.free_ports(leaves) - spines_per_group),
                   storage_servers, storage_ports, mgmt_nodes, lambda lv: g_leaf[[leaf_pos[int(x)] for x in lv]])
    b.cables(np.repeat(leaves, spines_per_group), spines[g_leaf].ravel())
    if others:
        g1, g2 = np.triu_indices(groups, 1)
        plane = np.arange(spines_per_group)
        a = spines[g1[:, None], plane[None, :]].ravel()
        c = spines[g2[:, None], plane[None, :]].ravel()
        b.cables(np.repeat(a, per_pair), np.repeat(c, per_pair))
    return _finish(b, name, speed, width, meta, lids)


#: Generators by the names the CLI and scenario specs use.
GENERATORS = {"fat_tree": fat_tree, "rail_optimized": rail_optimized, "dragonfly_plus": dragonfly_plus}
