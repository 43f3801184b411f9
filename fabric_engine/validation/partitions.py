"""P_Key mismatches across a switch-to-CA link.

OpenSM writes a CA port's P_Key table from ``partitions.conf`` and copies it to the switch port the CA is
cabled to, whose partition enforcement then drops packets of a P_Key the table lacks (``osm_pkey_mgr.c``:
``pkey_mgr_update_peer_port``, called for every non-switch port; enforcement is cleared on inter-switch links,
so only switch-to-CA links are compared). A P_Key the CA has and its switch port lacks drops the CA's traffic in
that partition at the switch (``error``); one the switch port has and the CA lacks admits a partition the CA is
not in (``warning``). Keys are compared on their 15-bit base: the switch port holds the CA's keys, and
membership (bit 15, IBA 10.9.1) is the CA's concern. Both ends' tables must be known; vectorized over the keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from ..topology import KIND_HOST, KIND_SWITCH, Fabric
from .findings import ERROR, WARNING, Finding
from .names import link_name, port_name
from .pkeys import PKeyTable

__all__ = ["table_slots", "check_pkeys", "CHECK"]

CHECK = "pkey_mismatch"


def table_slots(fabric: Fabric, tables: Sequence[PKeyTable]) -> np.ndarray:
    """The fabric port slot each table is of (int64, -1 where the fabric has no such port, or a switch's port 0)."""
    n = len(tables)
    lid = np.fromiter((t.lid if t.lid is not None else 0 for t in tables), np.int64, n)
    guid = np.fromiter((t.guid if t.guid is not None else 0 for t in tables), np.uint64, n)
    port = np.fromiter((t.port for t in tables), np.int64, n)
    node = np.full(n, -1, np.int64)
    by_lid = lid > 0
    ok_lid = by_lid & (lid < len(fabric.lid_to_node))
    node[ok_lid] = fabric.lid_to_node[lid[ok_lid]]
    gslot = np.full(n, -1, np.int64)
    gslot[~by_lid], _ = fabric.guid_index.slots(guid[~by_lid])
    gfound = gslot >= 0
    node[~by_lid] = np.where(gfound[~by_lid], fabric.port_node[np.maximum(gslot[~by_lid], 0)], -1)
    known = node >= 0
    safe = np.maximum(node, 0)
    is_switch = known & (fabric.kind[safe] == KIND_SWITCH)
    # a CA's table: the port asked (port 0 means the port the LID or GUID names)
    own = np.where(by_lid, fabric.lid_to_slot[np.where(ok_lid, lid, 0)], gslot)
    ca_slot = np.where(port > 0, fabric.port_offset[safe] + port - 1, own)
    sw_slot = np.where(port > 0, fabric.port_offset[safe] + port - 1, -1)
    slot = np.where(is_switch, sw_slot, ca_slot)
    valid = known & (port <= fabric.nports[safe])
    return np.where(valid, slot, -1).astype(np.int64)


def check_pkeys(fabric: Fabric, tables: Sequence[PKeyTable], most: int = 16) -> list[Finding]:
    """A finding per switch-to-CA cable whose two ends' P_Key tables differ (see the module docstring)."""
    if not tables:
        return []
    slots = table_slots(fabric, tables)
    keys = [t.keys for t in tables]
    counts = np.fromiter(map(len, keys), np.int64, len(keys))
    flat = np.fromiter(chain.from_iterable(keys), np.int64, int(counts.sum()))
    row_slot = np.repeat(slots, counts)
    base = flat & 0x7FFF
    keep = row_slot >= 0
    row_slot, base = row_slot[keep], base[keep]
    P = int(fabric.nports.sum())
    known = np.zeros(P, dtype=bool)
    known[slots[slots >= 0]] = True
    L = fabric.num_links
    a_slot = fabric.port_offset[fabric.a_node] + fabric.a_port - 1
    b_slot = fabric.port_offset[fabric.b_node] + fabric.b_port - 1
    ka, kb = fabric.kind[fabric.a_node], fabric.kind[fabric.b_node]
    compared = (ka != kb) & known[a_slot] & known[b_slot]
    peer = np.full(P, -1, np.int64)
    peer[a_slot[compared]] = b_slot[compared]
    peer[b_slot[compared]] = a_slot[compared]
    cable_of = np.full(P, -1, np.int64)
    cable_of[a_slot] = np.arange(L)
    cable_of[b_slot] = np.arange(L)
    present = np.sort(row_slot * 0x8000 + base)
    rows = peer[row_slot] >= 0
    rs, rb = row_slot[rows], base[rows]
    want = peer[rs] * 0x8000 + rb
    pos = np.minimum(np.searchsorted(present, want), max(present.size - 1, 0))
    at_peer = present[pos] == want if present.size else np.zeros(want.size, bool)
    lonely_slot, lonely_key = rs[~at_peer], rb[~at_peer]
    if lonely_slot.size == 0:
        return []
    bad_cables = np.unique(cable_of[lonely_slot])
    slot_keys: dict[int, list[int]] = {}
    order = np.argsort(row_slot, kind="stable")
    wanted = np.isin(row_slot[order], np.concatenate([a_slot[bad_cables], b_slot[bad_cables]]))
    for s, k in zip(row_slot[order][wanted].tolist(), base[order][wanted].tolist(), strict=True):  # bad links only
        slot_keys.setdefault(s, []).append(k)
    lonely: dict[int, set[int]] = {}
    for s, k in zip(lonely_slot.tolist(), lonely_key.tolist(), strict=True):
        lonely.setdefault(s, set()).add(k)
    out = []
    for c in bad_cables.tolist():  # the mismatched cables only
        a_is_ca = fabric.kind[fabric.a_node[c]] == KIND_HOST
        ca = (int(fabric.a_node[c]), int(fabric.a_port[c]), int(a_slot[c]))
        sw = (int(fabric.b_node[c]), int(fabric.b_port[c]), int(b_slot[c]))
        if not a_is_ca:
            ca, sw = sw, ca
        only_ca = sorted(lonely.get(ca[2], ()))
        only_sw = sorted(lonely.get(sw[2], ()))
        ca_name, sw_name = port_name(fabric, ca[0], ca[1]), port_name(fabric, sw[0], sw[1])
        parts = []
        if only_ca:
            parts.append(f"{ca_name} has {', '.join(f'0x{k:04x}' for k in only_ca[:most])} that {sw_name} lacks")
        if only_sw:
            parts.append(f"{sw_name} has {', '.join(f'0x{k:04x}' for k in only_sw[:most])} that {ca_name} lacks")
        ev = {"ca": ca_name, "switch": sw_name, "only_at_ca": [f"0x{k:04x}" for k in only_ca],
              "only_at_switch": [f"0x{k:04x}" for k in only_sw],
              "ca_keys": [f"0x{k:04x}" for k in sorted(set(slot_keys.get(ca[2], ())))],
              "switch_keys": [f"0x{k:04x}" for k in sorted(set(slot_keys.get(sw[2], ())))]}
        out.append(Finding(CHECK, ERROR if only_ca else WARNING, link_name(fabric, c),
                           "P_Key mismatch: " + "; ".join(parts) + " (base P_Keys)", ev, c))
    return out
