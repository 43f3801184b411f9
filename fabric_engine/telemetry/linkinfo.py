"""Read ``iblinkinfo`` (infiniband-diags) output: every port's state, width and speed.

The default (grouped) form is read, one header per node then one line per port::

    Switch: 0x98039b0300000001 leaf01:
               2    1[  ] ==( 4X           2.5 Gbps Active/  LinkUp)==>       1    1[  ] "gpu0001" ( )
               2    3[  ] ==(                Down/ Polling)==>             [  ] "" ( )
    CA: gpu0001:
          0xb83fd20300000011      1    1[  ] ==( 4X  2.5 Gbps Active/  LinkUp)==>       2    1[  ] "leaf01" ( )

Switch lines start with the switch LID; CA lines with the port GUID and the port
LID. The far end is given by its LID and port (the LID of a switch, or of a CA
port), so every cable resolves without a second tool. The active speed is the
signalling rate per lane ("2.5 Gbps" SDR ... "106.25 Gbps" NDR).

:func:`fabric_from_linkinfo` builds a :class:`~fabric_engine.topology.Fabric` of the
cabled ports (physical state ``LinkUp``), so a telemetry-fed fabric can be
discovered with ``iblinkinfo`` alone; the ``ibnetdiscover`` reader in
:mod:`fabric_engine.formats` gives the same fabric when that is preferred.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import FormatError
from ..topology import KIND_HOST, KIND_SWITCH, ROLES, SPEEDS, Fabric
from ..topology.speeds import WIDTHS

__all__ = ["LinkInfo", "parse_iblinkinfo", "fabric_from_linkinfo", "SIGNALLING_GBPS"]

#: Lane signalling rate as iblinkinfo prints it -> speed code (index into ``SPEEDS``).
SIGNALLING_GBPS: dict[str, int] = {
    "2.5": 0, "5.0": 1, "10.0": 2, "10.3125": 3, "14.0625": 4, "25.78125": 5, "53.125": 6, "106.25": 7, "212.5": 8,
}
_NODE = re.compile(r"^(Switch|CA|Router): (?:(0x[0-9a-fA-F]+) )?(.*?):\s*$")
_PORT = re.compile(
    r"^\s+(?:(0x[0-9a-fA-F]+)\s+)?(\d+)\s+(\d+)\[[^\]]*\]\s+==\(\s*(?:(\d+)X\s+([\d.]+)\s+Gbps(?:\s+\(?FDR10\)?)?\s+)?"
    r"([\w ]+?)/\s*(\w+)\s*\)==>\s+(?:(\d+)\s+(\d+))?\[[^\]]*\]\s+\"(.*)\"\s*\(.*\)\s*$"
)


@dataclass(frozen=True, eq=False)
class LinkInfo:
    """One ``iblinkinfo`` run as arrays over its port lines (``[R]``) and nodes (``[N]``).

    Node arrays: ``node_kind`` int8 (``KIND_HOST``/``KIND_SWITCH``), ``node_name``
    object, ``node_guid`` uint64 (switch GUID; for a CA the GUID of its first listed port).
    Port-line arrays: ``node`` int32, ``lid`` int32, ``port`` int16, ``port_guid``
    uint64 (0 for switch ports), ``width`` int8 (lanes, 0 when down), ``speed`` int8
    (speed code, -1 when down), ``state`` and ``phys`` object (``"Active"``,
    ``"LinkUp"``, ...), ``remote_lid`` int32 and ``remote_port`` int16 (0 when none),
    ``remote_name`` object.
    """

    node_kind: np.ndarray
    node_name: np.ndarray
    node_guid: np.ndarray
    node: np.ndarray
    lid: np.ndarray
    port: np.ndarray
    port_guid: np.ndarray
    width: np.ndarray
    speed: np.ndarray
    state: np.ndarray
    phys: np.ndarray
    remote_lid: np.ndarray
    remote_port: np.ndarray
    remote_name: np.ndarray

    @property
    def up(self) -> np.ndarray:
        """Port lines whose physical link is up and cabled, bool ``[R]``."""
        return (self.phys == "LinkUp") & (self.remote_lid > 0)


def parse_iblinkinfo(text: str, source: str = "iblinkinfo") -> LinkInfo:
    """Parse the default output of ``iblinkinfo``; raises :class:`FormatError` naming the line.

    Examples
    --------
    >>> info = parse_iblinkinfo('''Switch: 0x0000000000000a01 sw1:
    ...     1    1[  ] ==( 4X  25.78125 Gbps Active/  LinkUp)==>       2    1[  ] "h1" ( )
    ... CA: h1:
    ...     0x0000000000000b02      2    1[  ] ==( 4X  25.78125 Gbps Active/  LinkUp)==>   1    1[  ] "sw1" ( )
    ... ''')
    >>> list(info.node_name), info.speed.tolist(), info.width.tolist()
    (['sw1', 'h1'], [5, 5], [4, 4])
    """
    kinds, names, guids = [], [], []
    rows: list[tuple] = []
    for no, line in enumerate(text.splitlines(), 1):  # one pass over lines; ~1 line per port
        if not line.strip() or line.startswith("#"):
            continue
        m = _PORT.match(line)
        if m:
            if not names:
                raise FormatError(source, no, "port line before any 'Switch:' or 'CA:' header")
            pguid, lid, port, width, speed, state, phys, rlid, rport, rname = m.groups()
            node = len(names) - 1
            if pguid is not None and guids[node] == 0:
                guids[node] = int(pguid, 16)
            if speed is not None and speed not in SIGNALLING_GBPS:
                raise FormatError(source, no, f"unknown lane speed {speed} Gbps")
            if width is not None and int(width) not in WIDTHS:
                raise FormatError(source, no, f"unknown link width {width}X")
            rows.append((node, int(lid), int(port), int(pguid, 16) if pguid else 0, int(width or 0),
                         SIGNALLING_GBPS[speed] if speed else -1, state.strip(), phys, int(rlid or 0),
                         int(rport or 0), rname))
            continue
        m = _NODE.match(line)
        if m:
            kind, guid, name = m.groups()
            if kind == "Switch" and guid is None:
                raise FormatError(source, no, "switch header without GUID")
            kinds.append(KIND_SWITCH if kind == "Switch" else KIND_HOST)
            names.append(name)
            guids.append(int(guid, 16) if guid else 0)
            continue
        raise FormatError(source, no, f"not an iblinkinfo line: {line.strip()[:80]!r}")
    cols = list(zip(*rows, strict=True)) if rows else [()] * 11
    return LinkInfo(
        node_kind=np.array(kinds, dtype=np.int8), node_name=np.array(names, dtype=object),
        node_guid=np.array(guids, dtype=np.uint64), node=np.array(cols[0], dtype=np.int32),
        lid=np.array(cols[1], dtype=np.int32), port=np.array(cols[2], dtype=np.int16),
        port_guid=np.array(cols[3], dtype=np.uint64), width=np.array(cols[4], dtype=np.int8),
        speed=np.array(cols[5], dtype=np.int8), state=np.array(cols[6], dtype=object),
        phys=np.array(cols[7], dtype=object), remote_lid=np.array(cols[8], dtype=np.int32),
        remote_port=np.array(cols[9], dtype=np.int16), remote_name=np.array(cols[10], dtype=object),
    )


def _tiers(kind: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Tier of every node: hosts 0, switches 1 + hops to the nearest host (capped at 3)."""
    n = len(kind)
    adj = sp.coo_matrix((np.ones(2 * len(a)), (np.r_[a, b], np.r_[b, a])), shape=(n, n)).tocsr()
    dist = np.full(n, -1, dtype=np.int64)
    frontier = kind == KIND_HOST
    dist[frontier] = 0
    level = 0
    while frontier.any():  # a loop over BFS levels, each a sparse product
        level += 1
        reach = (adj @ frontier.astype(np.float64)) > 0
        frontier = reach & (dist < 0)
        dist[frontier] = level
    tier = np.where(kind == KIND_HOST, 0, np.clip(np.where(dist < 0, 1, dist), 1, 3))
    return tier.astype(np.int8)


def fabric_from_linkinfo(info: LinkInfo, name: str = "telemetry") -> Fabric:
    """The fabric of ``info``'s cabled ports; LIDs, GUIDs, widths and speeds as reported.

    Cables are the port lines whose physical state is ``LinkUp``, each counted once
    however many of its ends were listed. A far end whose LID no listed node owns
    raises :class:`~fabric_engine.errors.TopologyError` via :meth:`Fabric.build`'s
    checks or a :class:`FormatError` here.
    """
    n = len(info.node_name)
    nports = np.zeros(n, dtype=np.int64)
    np.maximum.at(nports, info.node, info.port.astype(np.int64))
    nports = np.maximum(nports, 1)
    # LID -> node: switch LIDs and CA port LIDs.
    lid_node = np.full(max(int(info.lid.max(initial=0)), int(info.remote_lid.max(initial=0))) + 1, -1, np.int64)
    lid_node[info.lid] = info.node
    up = np.flatnonzero(info.up)
    rnode = lid_node[info.remote_lid[up]]
    if (rnode < 0).any():
        i = int(up[np.flatnonzero(rnode < 0)[0]])
        raise FormatError("iblinkinfo", None, f"{info.node_name[info.node[i]]} port {int(info.port[i])}: far end "
                                              f"LID {int(info.remote_lid[i])} is not among the listed nodes")
    a_node, a_port = info.node[up].astype(np.int64), info.port[up].astype(np.int64)
    b_node, b_port = rnode, info.remote_port[up].astype(np.int64)
    ka, kb = a_node * 256 + a_port, b_node * 256 + b_port
    lo, hi = np.minimum(ka, kb), np.maximum(ka, kb)
    _, first = np.unique(lo * (n * 256 + 256) + hi, return_index=True)
    first = np.sort(first)
    sel = up[first]
    a_node, a_port, b_node, b_port = lo[first] // 256, lo[first] % 256, hi[first] // 256, hi[first] % 256
    kind = info.node_kind
    # Node LID: the switch LID, or the LID of a CA's lowest port; port LIDs and GUIDs per port slot.
    order = np.lexsort((info.port, info.node))
    first_line = order[np.r_[True, info.node[order][1:] != info.node[order][:-1]]]
    lid = np.zeros(n, dtype=np.int64)
    lid[info.node[first_line]] = info.lid[first_line]
    offset = np.r_[0, np.cumsum(nports)[:-1]]
    slot = offset[info.node] + info.port - 1
    port_lid = np.repeat(lid, nports)
    port_lid[slot] = info.lid
    port_guid = np.repeat(info.node_guid, nports)
    is_ca = kind[info.node] == KIND_HOST
    port_guid[slot[is_ca]] = info.port_guid[is_ca]
    role = np.where(kind == KIND_SWITCH, ROLES.index("switch"), ROLES.index("gpu"))
    width = info.width[sel]
    speed = info.speed[sel]
    return Fabric.build(
        name, kind=kind, node_name=info.node_name, guid=info.node_guid, lid=lid, nports=nports, role=role,
        tier=_tiers(kind, a_node, b_node), port_lid=port_lid, port_guid=port_guid,
        a_node=a_node, a_port=a_port, b_node=b_node, b_port=b_port,
        width=np.where(width > 0, width, 4), speed=np.where(speed >= 0, speed, SPEEDS.index("SDR")),
        meta={"source": "iblinkinfo", "link_state": info.state[sel].tolist()},
    )
