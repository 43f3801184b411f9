"""Port LIDs and port GUIDs in ibweb's JSON: the rules, and tables of the ports that break them.

``nodes.lid`` is a switch's LID or a host's first-port LID, and a host's port ``p`` has LID
``lid + p - 1`` (switch ports carry the switch LID); a host's port ``p`` has GUID ``guid + p``
(switch ports the node GUID). Generated fabrics follow both rules; captures need not: a 2-port HCA
whose port 2 is unconnected, on consecutive host LIDs (the reader gives that port a free LID), LMC > 0
(base LIDs ``2**lmc`` apart), ConnectX-4 and later (port 1's GUID is the node GUID). The ports off a
rule are listed in port slot order as parallel arrays; a fabric that follows the rules has no
table, so its JSON is as before::

    "port_lids": {"node": [2, 3], "port": [2, 2], "lid": [1, 2]}
    "as_read": {"port_guids": {"node": [4], "port": [1], "guid": ["0x0c42a10300000040"]}}

``port_lids`` is part of the graph (the fabric cannot be built without it, and the live feed carries
it like ``nodes.lid``); ``port_guids``, identities a tenant's view may not see, goes in the
operators-only ``as_read`` (:mod:`.json_meta`). :func:`port_lids` and :func:`port_guids` check a
table's size before they allocate anything of it, and :func:`port_lids` that every port LID and
switch LID is a unicast LID held once, naming the field of the first offence.
"""

from __future__ import annotations

import numpy as np

from ..errors import FormatError
from ..topology import KIND_HOST, Fabric
from ..topology.limits import MAX_UNICAST_LID

__all__ = ["LIDS", "GUIDS", "lid_rule", "guid_rule", "lids_to_json", "guids_to_json", "port_lids", "port_guids"]

LIDS = "port_lids"
GUIDS = "port_guids"


def _slots_of(nports) -> tuple[np.ndarray, np.ndarray]:
    """``(port node, port number)`` per port slot, int64 ``[P]``."""
    nports = np.asarray(nports, dtype=np.int64)
    port_node = np.repeat(np.arange(len(nports)), nports)
    return port_node, np.arange(len(port_node)) - (np.cumsum(nports) - nports)[port_node] + 1


def lid_rule(kind, lid, port_node, port_num) -> np.ndarray:
    """Port LIDs by the rule, int64 ``[P]``: a host's ``lid + port - 1``, a switch's LID."""
    lids = np.asarray(lid, dtype=np.int64)[port_node]
    return np.where(np.asarray(kind)[port_node] == KIND_HOST, lids + port_num - 1, lids)


def guid_rule(kind, guid, port_node, port_num) -> np.ndarray:
    """Port GUIDs by the rule, uint64 ``[P]``: a host's ``guid + port``, a switch's node GUID."""
    guids = np.asarray(guid, dtype=np.uint64)[port_node]
    return np.where(np.asarray(kind)[port_node] == KIND_HOST, guids + np.asarray(port_num, dtype=np.uint64), guids)


def _off(field: str, column: str, off: np.ndarray, f: Fabric, values: list) -> dict:
    return {field: {"node": f.port_node[off].tolist(), "port": f.port_num[off].tolist(), column: values}} \
        if off.size else {}


def lids_to_json(f: Fabric) -> dict:
    """``{"port_lids": {node, port, lid}}`` of the ports whose LID is not the rule's; ``{}`` when none."""
    off = np.flatnonzero(lid_rule(f.kind, f.lid, f.port_node, f.port_num) != f.port_lid)
    return _off(LIDS, "lid", off, f, f.port_lid[off].tolist())


def guids_to_json(f: Fabric) -> dict:
    """``{"port_guids": {node, port, guid}}`` of the ports whose GUID is not the rule's; ``{}`` when none."""
    off = np.flatnonzero(guid_rule(f.kind, f.guid, f.port_node, f.port_num) != f.port_guid)
    return _off(GUIDS, "guid", off, f, [f"0x{int(g):016x}" for g in f.port_guid[off]])


def _fail(source: str, what: str):
    raise FormatError(source, None, what)


def _first(mask: np.ndarray) -> int | None:
    bad = np.flatnonzero(mask)
    return int(bad[0]) if bad.size else None


def _ints(values: list, field: str, source: str) -> np.ndarray:
    try:
        arr = np.asarray(values)
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise ValueError
        return arr.astype(np.int64)
    except (ValueError, TypeError, OverflowError):
        _fail(source, f"{field}: expected a list of {len(values)} integers")


def _slots(table, field: str, column: str, nports: np.ndarray, names: list[str], source: str) -> np.ndarray:
    """The port slots a table lists, checked: its shape and size first, then its nodes and ports."""
    columns = ("node", "port", column)
    if not isinstance(table, dict) or set(table) != set(columns) or not all(isinstance(table[k], list)
                                                                             for k in columns):
        _fail(source, f"{field}: expected an object of the lists {', '.join(columns)}")
    count, ports = len(table["node"]), int(nports.sum())
    if count > ports:  # before anything of its size is made
        _fail(source, f"{field}: {count:,} entries; the nodes have {ports:,} ports")
    if len(table["port"]) != count or len(table[column]) != count:
        _fail(source, f"{field}: node, port and {column} differ in length")
    node, port = _ints(table["node"], f"{field}.node", source), _ints(table["port"], f"{field}.port", source)
    if (i := _first((node < 0) | (node >= len(nports)))) is not None:
        _fail(source, f"{field}.node[{i}]: {int(node[i])} is not a node index (0..{len(nports) - 1})")
    if (i := _first((port < 1) | (port > nports[node]))) is not None:
        _fail(source, f"{field}.port[{i}]: {names[node[i]]} has no port {int(port[i])} "
                      f"(nodes.nports: {int(nports[node[i]])})")
    slot = (np.cumsum(nports) - nports)[node] + port - 1
    order = np.argsort(slot, kind="stable")
    if (j := _first(slot[order][1:] == slot[order][:-1])) is not None:
        i = int(order[j + 1])
        _fail(source, f"{field}.port[{i}]: port {int(port[i])} of {names[node[i]]} is listed twice")
    return slot


def port_guids(table, kind, guid, nports, names: list[str], source: str) -> np.ndarray:
    """The GUID of every port slot, uint64: the rule's, replaced where ``table`` (``as_read.port_guids``) says."""
    nports = np.asarray(nports, dtype=np.int64)
    out = guid_rule(kind, guid, *_slots_of(nports))
    if table is None:
        return out
    field = f"as_read.{GUIDS}"
    slot = _slots(table, field, "guid", nports, names, source)
    values = []
    for i, g in enumerate(table["guid"]):
        try:
            if not isinstance(g, str) or len(g) > 18:
                raise ValueError
            v = int(g, 16)
        except ValueError:
            _fail(source, f"{field}.guid[{i}]: expected a hex string like '0x98039b0300000001'")
        if not 0 < v < 1 << 64:
            _fail(source, f"{field}.guid[{i}]: {g} is not a non-zero 64-bit GUID")
        values.append(v)
    out[slot] = np.array(values, dtype=np.uint64)
    return out


def port_lids(table, kind, lid, nports, names: list[str], source: str) -> np.ndarray:
    """The LID of every port slot, int64: the rule's, replaced where ``table`` (``port_lids``) says.

    ``kind``, ``lid`` and ``nports`` are the checked node columns. Raises :class:`FormatError` naming
    the field and index of the first offence: a malformed or oversized table, a port that does not
    exist or is listed twice, a LID outside 1..0xBFFF, or a LID held by two ports or switches.
    """
    nports = np.asarray(nports, dtype=np.int64)
    port_node, port_num = _slots_of(nports)
    out = lid_rule(kind, lid, port_node, port_num)
    entry = np.full(len(out), -1, dtype=np.int64)  # index in the table of each slot's LID, -1: by the rule
    if table is not None:
        slot = _slots(table, LIDS, "lid", nports, names, source)
        plid = _ints(table["lid"], f"{LIDS}.lid", source)
        if (i := _first((plid < 1) | (plid > MAX_UNICAST_LID))) is not None:
            _fail(source, f"{LIDS}.lid[{i}]: {int(plid[i])} is outside 1..{MAX_UNICAST_LID} (unicast LIDs)")
        out[slot] = plid
        entry[slot] = np.arange(len(slot))
    _unique(out, entry, np.asarray(kind), np.asarray(lid, dtype=np.int64), port_node, port_num, names, source)
    return out


def _unique(port_lid: np.ndarray, entry: np.ndarray, kind: np.ndarray, lid: np.ndarray, port_node: np.ndarray,
            port_num: np.ndarray, names: list[str], source: str) -> None:
    """Every host port's and switch's LID in 1..0xBFFF and held once (``Fabric.validate``'s rule)."""
    first = np.flatnonzero((kind[port_node] == KIND_HOST) | (port_num == 1))  # host ports, each switch once
    on_host = kind[port_node[first]] == KIND_HOST
    lids = np.where(on_host, port_lid[first], lid[port_node[first]])
    if (j := _first(lids > MAX_UNICAST_LID)) is not None:
        s = int(first[j])
        _fail(source, f"nodes.lid[{int(port_node[s])}]: port {int(port_num[s])} of {names[port_node[s]]} gets LID "
                      f"{int(lids[j])} (nodes.lid + port - 1), outside 1..{MAX_UNICAST_LID}; list it in {LIDS}")
    order = np.argsort(lids, kind="stable")
    if (j := _first(lids[order][1:] == lids[order][:-1])) is not None:
        a, b = (int(first[order[k]]) for k in (j, j + 1))

        def who(s: int) -> str:
            n = int(port_node[s])
            return names[n] if kind[n] != KIND_HOST else f"port {int(port_num[s])} of {names[n]}"

        at = f"{LIDS}.lid[{int(entry[b])}]" if entry[b] >= 0 and on_host[order[j + 1]] \
            else f"nodes.lid[{int(port_node[b])}]"
        _fail(source, f"{at}: LID {int(lids[order[j]])} is held by both {who(a)} and {who(b)}; LIDs are unique "
                      f"(ports off the nodes.lid + port - 1 rule go in {LIDS})")
