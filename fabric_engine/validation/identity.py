"""Duplicate GUIDs and LIDs.

A subnet needs every node and port GUID and every LID unique (IBA 4.1.1, 7.11.1). :class:`Fabric` refuses a
duplicate node GUID or LID when it is built, so what reaches this check from a discovered fabric is a port GUID
that another node also carries (a CA port GUID equal to another node's GUID, or two CAs sharing a port GUID),
plus what other inputs report: devices whose vitals name the same GUID with different serial numbers, or
identity rows a caller collected itself (:func:`duplicate_rows`). Vectorized with ``np.unique``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..topology import KIND_HOST, Fabric
from .findings import ERROR, Finding

__all__ = ["duplicate_rows", "duplicate_ids", "CHECK_GUID", "CHECK_LID"]

CHECK_GUID, CHECK_LID = "duplicate_guid", "duplicate_lid"


def duplicate_rows(values: np.ndarray, owners: np.ndarray, names: Sequence[str], check: str, what: str,
                   most: int = 8) -> list[Finding]:
    """A finding per value held by more than one owner; ``owners`` int ids, ``names[owner]`` their names.

    One sort by (value, owner): a value has two owners exactly where two neighbours share it and differ in owner.
    """
    values = np.asarray(values, dtype=np.uint64)
    owners = np.asarray(owners, dtype=np.int64)
    if values.size < 2:
        return []
    order = np.lexsort((owners, values))
    sv, so = values[order], owners[order]
    clash = (sv[1:] == sv[:-1]) & (so[1:] != so[:-1])
    out = []
    for v in np.unique(sv[1:][clash]).tolist():  # the duplicated values only
        lo, hi = np.searchsorted(sv, v, "left"), np.searchsorted(sv, v, "right")
        held = [names[int(o)] for o in np.unique(so[lo:hi]).tolist()]
        shown = f"0x{int(v):016x}" if check == CHECK_GUID else str(int(v))
        out.append(Finding(check, ERROR, f"{what} {shown}",
                           f"{what} {shown} is held by {len(held)} ports or devices: {', '.join(held[:most])}"
                           + (" ..." if len(held) > most else ""),
                           {"value": shown, "holders": held[:64], "count": len(held)}))
    return out


def duplicate_ids(fabric: Fabric | None = None, devices: Sequence = ()) -> list[Finding]:
    """Duplicate GUIDs among ``fabric``'s node GUIDs and CA port GUIDs (held by different nodes), duplicate LIDs
    of its CA ports and switches, and GUIDs that several ``devices`` (objects with ``guid``, ``name`` and
    ``serial``: :class:`fabric_engine.devices.vitals.DeviceVitals`) of different serial numbers report (records
    without a serial number are not compared: tools name one box differently). A device reporting its own node's
    GUID is that node, not a second holder."""
    out: list[Finding] = []
    if fabric is not None:
        names = [str(x) for x in fabric.node_name.tolist()]
        ca_slots = np.flatnonzero(fabric.kind[fabric.port_node] == KIND_HOST)
        guids = np.concatenate([fabric.guid, fabric.port_guid[ca_slots]])
        owners = np.concatenate([np.arange(fabric.num_nodes), fabric.port_node[ca_slots]]).astype(np.int64)
        out += duplicate_rows(guids, owners, names, CHECK_GUID, "GUID")
        lids = np.concatenate([fabric.port_lid[ca_slots], fabric.lid[fabric.switches]]).astype(np.uint64)
        lid_owner = np.concatenate([fabric.port_node[ca_slots], fabric.switches]).astype(np.int64)
        ok = lids > 0
        out += duplicate_rows(lids[ok], lid_owner[ok], names, CHECK_LID, "LID")
    ids: dict[str, int] = {}
    dev_g, dev_o, shown = [], [], []
    for d in devices:  # one entry per device record
        if d.guid is None or not d.serial:
            continue  # tools name a device differently; only two serial numbers tell two boxes apart
        if d.serial not in ids:
            ids[d.serial] = len(ids)
            shown.append(f"{d.name} (serial {d.serial})")
        dev_g.append(int(d.guid))
        dev_o.append(ids[d.serial])
    if dev_g:
        out += duplicate_rows(np.asarray(dev_g, dtype=np.uint64), np.asarray(dev_o), shown, CHECK_GUID,
                              "device GUID")
    return out
