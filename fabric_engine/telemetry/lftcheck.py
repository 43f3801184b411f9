"""Whether forwarding tables (an SM's LFT dump) fit a discovery: judged by content, never by file age.

A routing read from OpenSM's ``opensm-lfts.dump`` and mapped onto a discovered
:class:`~fabric_engine.topology.Fabric` agrees with that discovery when

* no entry toward a LID of the discovery leaves a switch through a port the discovery
  shows without a cable (``dead``: the tables were made for other cabling);
* every switch of the discovery has a table (``switches_missing``: a new switch, or a
  dump read half-written at a table boundary);
* every cabled host port's LID is routed by the switch it is cabled to (``unrouted``:
  a destination the tables do not know). Switch LIDs and the LIDs other switches leave
  out are not required: routing engines legitimately skip some (``ftree`` does not route
  leaf to leaf switch LIDs).

:func:`check_lfts` counts all three with numpy over the LFT array against a cabled-port
mask, and keeps the worst switch ports and one example entry, so a message can say
exactly what disagreed.

>>> from fabric_engine.routing import route
>>> from fabric_engine.topology.generate import fat_tree
>>> check_lfts(route(fat_tree(hosts=8, radix=4), "minhop")).ok
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..routing.tables import NO_PATH, Routing
from ..topology import KIND_SWITCH

__all__ = ["LftCheck", "check_lfts"]

#: Ports of an LFT entry (uint8); 255 is NO_PATH.
_PORTS = 256


@dataclass(frozen=True)
class LftCheck:
    """What a routing's tables disagree with its fabric about (all zero and empty: they agree).

    Attributes
    ----------
    dead : int
        Entries toward a LID of the fabric that leave through a port with no cable.
    dead_ports : list of (switch name, port, entries)
        Switch ports the dead entries leave through, most entries first (at most 5).
    unrouted : int
        Cabled host ports whose LID the switch they are cabled to does not route.
    unrouted_switches : list of (switch name, count)
        Those switches, most first (at most 5).
    switches_missing : list of str
        Switches of the fabric without a table.
    examples : list of str
        One entry of each kind, e.g. ``"leaf01 routes LID 13 (gpu0005 HCA-1) out of port 5, which has no cable"``.
    """

    dead: int = 0
    dead_ports: list[tuple[str, int, int]] = field(default_factory=list)
    unrouted: int = 0
    unrouted_switches: list[tuple[str, int]] = field(default_factory=list)
    switches_missing: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the tables agree with the fabric."""
        return not (self.dead or self.unrouted or self.switches_missing)

    def describe(self) -> str:
        """What disagrees, in one sentence ("" when nothing does)."""
        parts = []
        if self.dead:
            where = ", ".join(f"{s} port {p}: {n}" for s, p, n in self.dead_ports)
            parts.append(f"{self.dead} entries lead out of ports without a cable ({where})")
        if self.unrouted:
            where = ", ".join(f"{s}: {n}" for s, n in self.unrouted_switches)
            parts.append(f"{self.unrouted} cabled host LIDs are not routed by their own switch ({where})")
        if self.switches_missing:
            shown = ", ".join(self.switches_missing[:5])
            more = f" and {len(self.switches_missing) - 5} more" if len(self.switches_missing) > 5 else ""
            parts.append(f"no table for {len(self.switches_missing)} switches ({shown}{more})")
        text = "; ".join(parts)
        return text + (f"; e.g. {'; '.join(self.examples)}" if self.examples else "")

    def as_json(self) -> dict:
        """The counts and the worst places, as JSON."""
        return {"dead_entries": self.dead,
                "dead_ports": [list(x) for x in self.dead_ports], "unrouted": self.unrouted,
                "unrouted_switches": [list(x) for x in self.unrouted_switches],
                "switches_missing": list(self.switches_missing), "examples": list(self.examples)}


def _cabled_mask(f) -> np.ndarray:
    """``cabled[s, p]``: port ``p`` of switch row ``s`` has a cable; port 0 (the switch) and NO_PATH count as fine.

    bool ``[num_switches, 256]``.
    """
    nodes = f.switches
    ports = np.arange(_PORTS)
    inside = (ports[None, :] >= 1) & (ports[None, :] <= f.nports[nodes][:, None])
    slot = f.port_offset[nodes][:, None] + np.clip(ports - 1, 0, None)[None, :]
    cabled = inside & (f.port_out_link[np.clip(slot, 0, max(len(f.port_out_link) - 1, 0))] >= 0)
    cabled[:, 0] = cabled[:, NO_PATH] = True
    return cabled


def _name(f, node: int) -> str:
    return str(f.node_name[node])


def _lid_name(f, lid: int) -> str:
    node = int(f.lid_to_node[lid]) if lid < len(f.lid_to_node) else -1
    return f"LID {lid}" + (f" ({_name(f, node)})" if node >= 0 else "")


def check_lfts(routing: Routing, block: int = 64, most: int = 5) -> LftCheck:
    """Judge ``routing``'s tables against its own fabric (see the module docstring).

    Vectorized over blocks of ``block`` switches (the index temporaries of a block stay small on a
    large subnet); ``most`` bounds the places listed.
    """
    f = routing.fabric
    width = f.max_lid + 1
    known = f.lid_to_node[:width] >= 0
    cabled = _cabled_mask(f)
    switches_missing = list(routing.info.get("switches_missing") or [])
    has_table = np.ones(f.num_switches, dtype=bool)
    for name in switches_missing:  # the few switches the reader found no table for
        has_table[f.switch_index[f.node(name)]] = False
    flat = cabled.ravel()
    per_port = np.zeros(f.num_switches * _PORTS, dtype=np.int64)
    first_dead: tuple[int, int] | None = None
    for lo in range(0, f.num_switches, block):  # a loop over switch blocks, each vectorized
        lft = routing.lft[lo:lo + block, :width]
        base = (np.arange(lo, lo + len(lft), dtype=np.int32) * _PORTS)[:, None]
        bad = ~flat[base + lft]  # [rows, lids]: the entry's port has no cable
        bad &= known[None, :]
        rows, lids = np.nonzero(bad)
        if rows.size:
            per_port += np.bincount((lo + rows) * _PORTS + lft[rows, lids], minlength=len(per_port))
            if first_dead is None:
                first_dead = (lo + int(rows[0]), int(lids[0]))
    dead = int(per_port.sum())
    examples = []
    worst = np.flatnonzero(per_port)
    worst = worst[np.argsort(-per_port[worst], kind="stable")][:most]
    dead_ports = [(_name(f, f.switches[i // _PORTS]), int(i % _PORTS), int(per_port[i])) for i in worst]
    if first_dead is not None:
        s, lid = first_dead
        examples.append(f"{_name(f, f.switches[s])} routes {_lid_name(f, lid)} out of port "
                        f"{int(routing.lft[s, lid])}, which has no cable")
    # every cabled host port's LID must be routed by the switch at the other end of its cable
    host_slots = np.flatnonzero(f.kind[f.port_node] != KIND_SWITCH)
    link = f.port_out_link[host_slots]
    host_slots, link = host_slots[link >= 0], link[link >= 0]
    row = f.switch_index[f.dl_dst[link]]
    lid = f.port_lid[host_slots]
    take = (row >= 0) & (lid < width)
    row, lid = row[take].astype(np.intp), lid[take].astype(np.intp)
    take = has_table[row] & (routing.lft[row, lid] == NO_PATH)
    bad_rows, bad_lids = row[take], lid[take]
    counts = np.bincount(bad_rows, minlength=f.num_switches)
    order = np.flatnonzero(counts)
    order = order[np.argsort(-counts[order], kind="stable")][:most]
    unrouted_switches = [(_name(f, f.switches[i]), int(counts[i])) for i in order]
    if bad_rows.size:
        examples.append(f"{_name(f, f.switches[bad_rows[0]])} has no entry for {_lid_name(f, int(bad_lids[0]))}, "
                        "cabled to it")
    return LftCheck(dead=dead, dead_ports=dead_ports, unrouted=int(bad_rows.size),
                    unrouted_switches=unrouted_switches, switches_missing=switches_missing, examples=examples)
