"""The :class:`Fabric`: an immutable, array-based model of an InfiniBand subnet.

Index orders that every other module relies on:

* **node index** ``0..N-1``: position in the node arrays.
* **port slot** ``port_offset[n] + p - 1`` for port ``p`` (1-based) of node ``n``.
* **directed link index** ``0..2L-1``: ``d < L`` runs from ``a`` to ``b`` of cable
  ``d``; ``d >= L`` is the reverse of cable ``d - L``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..errors import TopologyError
from .guid_index import GuidIndex
from .limits import MAX_FABRIC_PORTS, MAX_NODE_PORTS, MAX_UNICAST_LID
from .speeds import SPEEDS, WIDTHS, capacity_gbps

__all__ = ["Fabric", "KIND_HOST", "KIND_SWITCH", "ROLES", "ROLE_AGGREGATION", "TIER_NAMES"]

KIND_HOST = 0
KIND_SWITCH = 1
KIND_NAMES = ("host", "switch")
#: Node roles; the code is the index. ``aggregation`` is a SHARP Aggregation Node: a CA inside a switch
#: (on its extra port, sharing its system image GUID) that routing reaches by LID but that is never a host.
ROLES = ("gpu", "storage", "mgmt", "switch", "aggregation")
ROLE_AGGREGATION = ROLES.index("aggregation")
#: Tier names; hosts are tier 0.
TIER_NAMES = ("host", "leaf", "spine", "core")


def _bounded(values, field: str, lo: int, hi: int, dtype) -> np.ndarray:
    """``values`` as ``dtype`` after checking, on the values as given, that they lie in ``lo..hi``.

    Checking before the cast keeps a value too wide for ``dtype`` from wrapping into range.
    """
    try:
        a = np.asarray(values)
        if a.dtype.kind not in "iub":
            a = a.astype(np.int64) if a.dtype.kind == "f" and np.isfinite(a).all() and (a == np.round(a)).all() \
                else np.asarray(values, dtype=np.int64)
    except (OverflowError, TypeError, ValueError):
        raise TopologyError(f"{field}: expected integers in {lo}..{hi}") from None
    if a.size and (a.min() < lo or a.max() > hi):
        i = int(np.flatnonzero((a < lo) | (a > hi))[0]) if a.ndim else 0
        v = a.reshape(-1)[i]
        raise TopologyError(f"{field}[{i}]: {int(v)} is outside {lo}..{hi}")
    return a.astype(dtype)


def _frozen(a: np.ndarray, dtype) -> np.ndarray:
    out = np.array(a, dtype=dtype, copy=True)
    out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class Fabric:
    """Nodes, ports and cables of one subnet as parallel numpy arrays.

    Node arrays (length ``N``): ``kind`` int8 (0 host, 1 switch), ``name`` object
    (str), ``guid`` uint64 (node GUID), ``lid`` int32 (switch LID, or LID of a
    host's first port), ``nports`` int16, ``role`` int8 (index into ``ROLES``),
    ``tier`` int8 (0 host, 1 leaf, 2 spine, 3 core), ``group`` int32 (-1 for none).

    Port arrays (length ``P = nports.sum()``): ``port_lid`` int32 (LID of a host
    port; switch ports carry the switch LID), ``port_guid`` uint64.

    Cable arrays (length ``L``): ``a_node``, ``b_node`` int32, ``a_port``, ``b_port``
    int16, ``width`` int8 (lanes), ``speed`` int8 (index into ``SPEEDS``),
    ``length_m`` float32. ``capacity_gbps`` (float64, length ``2L``) is per directed link.

    Examples
    --------
    >>> from fabric_engine.topology.generate import fat_tree
    >>> f = fat_tree(hosts=8, radix=4)
    >>> f.num_hosts, f.num_switches, f.num_links
    (8, 6, 16)
    """

    name: str
    kind: np.ndarray
    node_name: np.ndarray
    guid: np.ndarray
    lid: np.ndarray
    nports: np.ndarray
    role: np.ndarray
    tier: np.ndarray
    group: np.ndarray
    port_lid: np.ndarray
    port_guid: np.ndarray
    a_node: np.ndarray
    a_port: np.ndarray
    b_node: np.ndarray
    b_port: np.ndarray
    width: np.ndarray
    speed: np.ndarray
    length_m: np.ndarray
    meta: dict = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        name: str,
        *,
        kind: Sequence[int],
        node_name: Sequence[str],
        guid: Sequence[int],
        lid: Sequence[int],
        nports: Sequence[int],
        role: Sequence[int],
        tier: Sequence[int],
        group: Sequence[int] | None = None,
        port_lid: Sequence[int] | None = None,
        port_guid: Sequence[int] | None = None,
        a_node: Sequence[int],
        a_port: Sequence[int],
        b_node: Sequence[int],
        b_port: Sequence[int],
        width: Sequence[int] | int = 4,
        speed: Sequence[int] | int = SPEEDS.index("NDR"),
        length_m: Sequence[float] | float = 3.0,
        meta: dict | None = None,
    ) -> Fabric:
        """Build and validate a fabric from plain sequences.

        Host ports without an explicit ``port_lid`` get consecutive LIDs starting at
        the host's ``lid``; switch ports carry the switch LID. Port GUIDs default to
        the node GUID for switches and ``guid + port`` for hosts.
        """
        n = len(node_name)
        if n > MAX_UNICAST_LID:
            raise TopologyError(f"{n:,} nodes: one subnet holds at most {MAX_UNICAST_LID:,} (each needs a LID)")
        if len(nports) != n:
            raise TopologyError("node arrays differ in length")
        kind_a = _bounded(kind, "kind", KIND_HOST, KIND_SWITCH, np.int8)
        nports_a = _bounded(nports, "nports", 1, MAX_NODE_PORTS, np.int16)
        num_ports = int(nports_a.sum(dtype=np.int64))
        if num_ports > MAX_FABRIC_PORTS:
            raise TopologyError(f"{num_ports:,} ports: one subnet's fabric has at most {MAX_FABRIC_PORTS:,}")
        if len(a_node) > num_ports // 2:
            raise TopologyError(f"{len(a_node):,} links need more than the {num_ports:,} ports of the nodes")
        try:
            guid_a = np.asarray(guid, dtype=np.uint64)
        except (OverflowError, TypeError, ValueError):
            raise TopologyError("guid: expected 64-bit unsigned integers") from None
        lid_a = _bounded(lid, "lid", 0, MAX_UNICAST_LID, np.int32)
        if len(kind_a) != n or len(lid_a) != n:
            raise TopologyError("node arrays differ in length")
        offset = np.zeros(n, dtype=np.int64)
        np.cumsum(nports_a[:-1], out=offset[1:])
        port_node = np.repeat(np.arange(n), nports_a)
        port_num = np.arange(num_ports) - offset[port_node] + 1
        is_host_port = kind_a[port_node] == KIND_HOST
        if port_lid is None:
            port_lid_a = np.where(is_host_port, lid_a[port_node] + port_num - 1, lid_a[port_node]).astype(np.int32)
        else:
            port_lid_a = _bounded(port_lid, "port_lid", 0, MAX_UNICAST_LID, np.int32)
        if port_guid is None:
            port_guid_a = np.where(is_host_port, guid_a[port_node] + port_num.astype(np.uint64), guid_a[port_node])
        else:
            try:
                port_guid_a = np.asarray(port_guid, dtype=np.uint64)
            except (OverflowError, TypeError, ValueError):
                raise TopologyError("port_guid: expected 64-bit unsigned integers") from None
        if len(port_lid_a) != num_ports or len(port_guid_a) != num_ports:
            raise TopologyError(f"port arrays must have one entry per port ({num_ports})")
        L = len(a_node)

        def per_link(v, field, lo, hi, dtype):
            a = _bounded(v, field, lo, hi, dtype)
            return np.full(L, a, dtype=dtype) if a.ndim == 0 else a

        length = np.asarray(length_m, dtype=np.float64)
        if length.size and not (np.isfinite(length).all() and length.min() >= 0):
            raise TopologyError("length_m: expected finite, non-negative lengths")
        fabric = cls(
            name=name,
            kind=_frozen(kind_a, np.int8),
            node_name=_frozen(np.asarray(list(node_name), dtype=object), object),
            guid=_frozen(guid_a, np.uint64),
            lid=_frozen(lid_a, np.int32),
            nports=_frozen(nports_a, np.int16),
            role=_frozen(_bounded(role, "role", 0, len(ROLES) - 1, np.int8), np.int8),
            tier=_frozen(_bounded(tier, "tier", 0, len(TIER_NAMES) - 1, np.int8), np.int8),
            group=_frozen(np.full(n, -1) if group is None else _bounded(group, "group", -1, 2**31 - 1, np.int32),
                          np.int32),
            port_lid=_frozen(port_lid_a, np.int32),
            port_guid=_frozen(port_guid_a, np.uint64),
            a_node=_frozen(_bounded(a_node, "a_node", 0, max(n - 1, 0), np.int32), np.int32),
            a_port=_frozen(_bounded(a_port, "a_port", 1, MAX_NODE_PORTS, np.int16), np.int16),
            b_node=_frozen(_bounded(b_node, "b_node", 0, max(n - 1, 0), np.int32), np.int32),
            b_port=_frozen(_bounded(b_port, "b_port", 1, MAX_NODE_PORTS, np.int16), np.int16),
            width=_frozen(per_link(width, "width", 1, max(WIDTHS), np.int8), np.int8),
            speed=_frozen(per_link(speed, "speed", 0, len(SPEEDS) - 1, np.int8), np.int8),
            length_m=_frozen(np.full(L, length, dtype=np.float32) if length.ndim == 0 else length, np.float32),
            meta=dict(meta or {}),
        )
        fabric.validate()
        return fabric

    # ------------------------------------------------------------------ sizes
    @property
    def num_nodes(self) -> int:
        return len(self.kind)

    @property
    def num_links(self) -> int:
        """Number of cables ``L``; there are ``2L`` directed links."""
        return len(self.a_node)

    @cached_property
    def hosts(self) -> np.ndarray:
        """Node indices of hosts (channel adapters but SHARP Aggregation Nodes), int64, ascending."""
        return np.flatnonzero((self.kind == KIND_HOST) & (self.role != ROLE_AGGREGATION))

    @cached_property
    def aggregation_nodes(self) -> np.ndarray:
        """Node indices of SHARP Aggregation Nodes (CAs that are part of a switch), int64, ascending."""
        return np.flatnonzero((self.kind == KIND_HOST) & (self.role == ROLE_AGGREGATION))

    @cached_property
    def kind_label(self) -> np.ndarray:
        """``"switch"``, ``"host"`` or ``"aggregation"`` (a SHARP Aggregation Node) per node, object ``[N]``."""
        out = np.where(self.kind == KIND_SWITCH, "switch", "host").astype(object)
        out[self.aggregation_nodes] = "aggregation"
        return out

    @cached_property
    def aggregation_switches(self) -> np.ndarray:
        """Switches with an Aggregation Node cabled to them (the fabric's real SHARP inventory), int64."""
        an = np.isin(self.dl_src, self.aggregation_nodes) & (self.kind[self.dl_dst] == KIND_SWITCH)
        return np.unique(self.dl_dst[an]).astype(np.int64)

    @cached_property
    def switches(self) -> np.ndarray:
        """Node indices of switches, int64, ascending."""
        return np.flatnonzero(self.kind == KIND_SWITCH)

    @property
    def num_hosts(self) -> int:
        return len(self.hosts)

    @property
    def num_switches(self) -> int:
        return len(self.switches)

    @cached_property
    def switch_index(self) -> np.ndarray:
        """``switch_index[node]`` -> row in per-switch arrays (int32, -1 for hosts)."""
        out = np.full(self.num_nodes, -1, dtype=np.int32)
        out[self.switches] = np.arange(self.num_switches, dtype=np.int32)
        return out

    # ----------------------------------------------------------- directed links
    @cached_property
    def dl_src(self) -> np.ndarray:
        """Source node of every directed link, int32 ``[2L]``."""
        return np.concatenate([self.a_node, self.b_node])

    @cached_property
    def dl_dst(self) -> np.ndarray:
        """Destination node of every directed link, int32 ``[2L]``."""
        return np.concatenate([self.b_node, self.a_node])

    @cached_property
    def dl_src_port(self) -> np.ndarray:
        """Out port at the source of every directed link, int16 ``[2L]``."""
        return np.concatenate([self.a_port, self.b_port])

    @cached_property
    def dl_dst_port(self) -> np.ndarray:
        """In port at the destination of every directed link, int16 ``[2L]``."""
        return np.concatenate([self.b_port, self.a_port])

    @cached_property
    def capacity_gbps(self) -> np.ndarray:
        """Data-rate capacity of every directed link in Gb/s, float64 ``[2L]``."""
        c = capacity_gbps(self.width, self.speed).astype(np.float64)
        return np.concatenate([c, c])

    @cached_property
    def trained_down(self) -> np.ndarray:
        """Cables whose two ends printed different rates (the lower was read: a link retraining, old firmware),
        bool ``[L]``; kept as their indices in ``meta["trained_down"]``."""
        out = np.zeros(self.num_links, dtype=bool)
        idx = np.asarray(self.meta.get("trained_down") or (), dtype=np.int64)
        out[idx[(idx >= 0) & (idx < self.num_links)]] = True
        return out

    def reverse(self, d: np.ndarray | int) -> np.ndarray | int:
        """Index of the opposite direction of directed link(s) ``d``."""
        L = self.num_links
        return np.where(np.asarray(d) < L, np.asarray(d) + L, np.asarray(d) - L) if not isinstance(d, int) else (
            d + L if d < L else d - L
        )

    # ------------------------------------------------------------------- ports
    @cached_property
    def port_offset(self) -> np.ndarray:
        """First port slot of every node, int64 ``[N]``; port ``p`` is slot ``offset + p - 1``."""
        off = np.zeros(self.num_nodes, dtype=np.int64)
        np.cumsum(self.nports[:-1], out=off[1:])
        return off

    @cached_property
    def port_node(self) -> np.ndarray:
        """Node of every port slot, int32 ``[P]``."""
        return np.repeat(np.arange(self.num_nodes, dtype=np.int32), self.nports)

    @cached_property
    def port_num(self) -> np.ndarray:
        """1-based port number of every port slot, int16 ``[P]``."""
        return (np.arange(len(self.port_node)) - self.port_offset[self.port_node] + 1).astype(np.int16)

    @cached_property
    def port_out_link(self) -> np.ndarray:
        """Directed link leaving every port slot, int64 ``[P]`` (-1 if unconnected)."""
        out = np.full(int(self.nports.sum()), -1, dtype=np.int64)
        slots = self.port_offset[self.dl_src] + self.dl_src_port - 1
        out[slots] = np.arange(2 * self.num_links)
        return out

    def slot(self, node: int | np.ndarray, port: int | np.ndarray) -> np.ndarray | int:
        """Port slot of ``(node, port)``."""
        return self.port_offset[node] + np.asarray(port) - 1

    def out_link(self, node: int, port: int) -> int:
        """Directed link leaving port ``port`` of ``node`` (-1 if unconnected)."""
        return int(self.port_out_link[self.slot(node, port)])

    # ----------------------------------------------------------------- lookups
    @cached_property
    def _by_name(self) -> dict[str, int]:
        return {str(nm): i for i, nm in enumerate(self.node_name)}

    @cached_property
    def _by_guid(self) -> dict[int, int]:
        d = {int(g): i for i, g in enumerate(self.guid)}
        d.update({int(g): int(n) for g, n in zip(self.port_guid, self.port_node, strict=True)})
        return d

    @cached_property
    def guid_index(self) -> GuidIndex:
        """Port GUID -> port slot and node, sorted once (:class:`GuidIndex`)."""
        return GuidIndex(self.port_guid, self.port_node)

    @cached_property
    def lid_to_slot(self) -> np.ndarray:
        """Port slot for every LID, int64 ``[max_lid + 1]`` (-1 where unassigned).

        For a switch the slot is its first port (switches answer on port 0 with one LID).
        """
        out = np.full(self.max_lid + 1, -1, dtype=np.int64)
        host_slots = np.flatnonzero(self.kind[self.port_node] == KIND_HOST)
        out[self.port_lid[host_slots]] = host_slots
        sw = self.switches
        out[self.lid[sw]] = self.port_offset[sw]
        return out

    @cached_property
    def lid_to_node(self) -> np.ndarray:
        """Node index for every LID, int32 ``[max_lid + 1]`` (-1 where unassigned)."""
        slot = self.lid_to_slot
        return np.where(slot >= 0, self.port_node[np.maximum(slot, 0)], -1).astype(np.int32)

    @property
    def max_lid(self) -> int:
        return int(max(self.port_lid.max(initial=0), self.lid.max(initial=0)))

    def node(self, key: str | int) -> int:
        """Node index by name (``str``) or by node or port GUID (``int``); O(1)."""
        table = self._by_name if isinstance(key, str) else self._by_guid
        try:
            return table[key]
        except KeyError:
            raise KeyError(f"no node {key!r} in fabric {self.name!r}") from None

    def node_by_lid(self, lid: int) -> int:
        """Node index owning ``lid``; O(1)."""
        if 0 < lid < len(self.lid_to_node) and self.lid_to_node[lid] >= 0:
            return int(self.lid_to_node[lid])
        raise KeyError(f"no LID {lid} in fabric {self.name!r}")

    @cached_property
    def host_leaf(self) -> np.ndarray:
        """For every node, the switch its first port is cabled to (-1 for switches), int32 ``[N]``."""
        out = np.full(self.num_nodes, -1, dtype=np.int32)
        first = self.port_out_link[self.port_offset[self.hosts]]
        ok = first >= 0
        out[self.hosts[ok]] = self.dl_dst[first[ok]]
        return out

    # -------------------------------------------------------------- validation
    def validate(self) -> None:
        """Check the physical rules; raises :class:`TopologyError` naming the first offence."""
        n, L = self.num_nodes, self.num_links
        lens = {len(a) for a in (self.node_name, self.guid, self.lid, self.nports, self.role, self.tier, self.group)}
        if lens != {n}:
            raise TopologyError("node arrays differ in length")
        if {len(a) for a in (self.a_port, self.b_node, self.b_port, self.width, self.speed, self.length_m)} != {L}:
            raise TopologyError("link arrays differ in length")
        if len(self._by_name) != n:
            raise TopologyError("node names are not unique")
        if len(np.unique(self.guid)) != n:
            raise TopologyError("node GUIDs are not unique")
        for end, nodes, ports in (("a", self.a_node, self.a_port), ("b", self.b_node, self.b_port)):
            if L and (nodes.min() < 0 or nodes.max() >= n):
                raise TopologyError(f"link end {end} names a node outside 0..{n - 1}")
            bad = np.flatnonzero((ports < 1) | (ports > self.nports[nodes]))
            if bad.size:
                i = int(bad[0])
                node = nodes[i]
                raise TopologyError(
                    f"link {i}: port {int(ports[i])} of {self.node_name[node]} is outside 1..{int(self.nports[node])}"
                )
        slots = self.port_offset[self.dl_src] + self.dl_src_port - 1
        uniq, counts = np.unique(slots, return_counts=True)
        if (counts > 1).any():
            s = int(uniq[counts > 1][0])
            raise TopologyError(f"port {int(self.port_num[s])} of {self.node_name[self.port_node[s]]} is used twice")
        if L and np.any(self.a_node == self.b_node):
            raise TopologyError("a link joins a node to itself")
        if not np.isin(self.width, WIDTHS).all():
            raise TopologyError(f"link width outside {WIDTHS}")
        if L and (self.speed.min() < 0 or self.speed.max() >= len(SPEEDS)):
            raise TopologyError("unknown link speed code")
        lids = np.concatenate([self.port_lid[self.kind[self.port_node] == KIND_HOST], self.lid[self.switches]])
        if (lids <= 0).any() or (lids >= 0xC000).any():
            raise TopologyError("LIDs must be unicast (1..0xBFFF)")
        if len(np.unique(lids)) != len(lids):
            raise TopologyError("LIDs are not unique")

    # ------------------------------------------------------------ derivations
    def without_links(self, cables: Iterable[int]) -> Fabric:
        """A copy of this fabric with the given cables (indices ``0..L-1``) removed."""
        keep = np.ones(self.num_links, dtype=bool)
        keep[np.asarray(list(cables), dtype=np.int64)] = False
        return Fabric.build(
            self.name,
            kind=self.kind, node_name=self.node_name, guid=self.guid, lid=self.lid, nports=self.nports,
            role=self.role, tier=self.tier, group=self.group, port_lid=self.port_lid, port_guid=self.port_guid,
            a_node=self.a_node[keep], a_port=self.a_port[keep], b_node=self.b_node[keep], b_port=self.b_port[keep],
            width=self.width[keep], speed=self.speed[keep], length_m=self.length_m[keep],
            meta={**self.meta, "trained_down": np.flatnonzero(self.trained_down[keep]).tolist()}
            if "trained_down" in self.meta else self.meta,
        )

    def __repr__(self) -> str:
        return f"<Fabric {self.name!r}: {self.num_hosts} hosts, {self.num_switches} switches, {self.num_links} links>"
