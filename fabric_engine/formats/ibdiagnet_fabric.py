"""The nodes, ports and links an ibdiagnet file gives, as a :class:`Fabric` (shared by the db_csv and lst readers).

Width and speed encodings, with where they are defined (see :mod:`.ibdiagnet` for the sources):

* :data:`LINK_WIDTH`: PortInfo ``LinkWidthActive`` (IBA Vol. 1, 14.2.5.6), which ibdm's ``IBLinkWidth``
  copies (``1`` 1x, ``2`` 4x, ``4`` 8x, ``8`` 12x, ``0x10`` 2x).
* :data:`LINK_SPEED`: ibdm's ``IBLinkSpeed`` (``Fabric.h``): the PortInfo ``LinkSpeedActive`` bits in the
  first byte, ``LinkSpeedExtActive`` in the second (``0x100`` FDR ... ``0x800`` NDR), Mellanox FDR10 in the
  third (``0x10000``) and ``LinkSpeedExtActive2`` in the fourth (``0x1000000`` XDR).
* :data:`EXT_SPEED`: PortInfo ``LinkSpeedExtActive`` alone (``1`` FDR, ``2`` EDR, ``4`` HDR, ``8`` NDR).
* :data:`SPD`: the ``SPD=`` word of an ``.lst`` line: the lane rate in Gb/s as ibdm's ``speed2char`` and
  OpenSM's ``osm_dump.c`` print it (``2.5`` ... ``50``, ``100``, ``200``, ``FDR10``), and the signalling
  rates some writers print instead (``53.125``, ``106.25``, ...).

:func:`assemble` checks the links and builds the fabric as every topology reader does
(:mod:`._assembly`: LIDs, names, SHARP Aggregation Nodes, chassis, loopback cables kept in
``meta["loopbacks"]``, not among the cables).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError
from ..topology import KIND_SWITCH, SPEEDS, WIDTHS, Fabric
from . import _assembly

__all__ = ["LINK_WIDTH", "LINK_SPEED", "EXT_SPEED", "EXT2_SPEED", "SPD", "PHY", "Parts", "assemble", "dedupe_links"]

_S = {name: code for code, name in enumerate(SPEEDS)}
#: PortInfo LinkWidthActive -> lanes.
LINK_WIDTH: dict[int, int] = {1: 1, 2: 4, 4: 8, 8: 12, 0x10: 2}
#: ibdm IBLinkSpeed -> speed code.
LINK_SPEED: dict[int, int] = {1: _S["SDR"], 2: _S["DDR"], 4: _S["QDR"], 0x100: _S["FDR"], 0x200: _S["EDR"],
                              0x400: _S["HDR"], 0x800: _S["NDR"], 0x10000: _S["FDR10"], 0x1000000: _S["XDR"]}
#: PortInfo LinkSpeedExtActive -> speed code.
EXT_SPEED: dict[int, int] = {1: _S["FDR"], 2: _S["EDR"], 4: _S["HDR"], 8: _S["NDR"]}
#: PortInfo LinkSpeedExtActive2 (IBA 1.7) -> speed code.
EXT2_SPEED: dict[int, int] = {1: _S["XDR"]}
#: ``SPD=`` words -> speed code.
SPD: dict[str, int] = {
    "2.5": _S["SDR"], "5": _S["DDR"], "5.0": _S["DDR"], "10": _S["QDR"], "10.0": _S["QDR"],
    "FDR10": _S["FDR10"], "10.3125": _S["FDR10"], "14": _S["FDR"], "14.0625": _S["FDR"],
    "25": _S["EDR"], "25.78125": _S["EDR"], "50": _S["HDR"], "53.125": _S["HDR"],
    "100": _S["NDR"], "106.25": _S["NDR"], "200": _S["XDR"], "212.5": _S["XDR"],
}
#: ``PHY=`` words -> lanes.
PHY: dict[str, int] = {"1x": 1, "2x": 2, "4x": 4, "8x": 8, "12x": 12}


@dataclass
class Parts:
    """What a reader found, as arrays: nodes ``[N]``, known host-port facts ``[H]`` and links ``[L]``.

    ``lid`` is the switch LID (0 unknown; ignored for CAs). ``hp_*`` give the LID and port GUID of host
    ports the file names (0 where it gives none). ``width`` is in lanes, ``speed`` a code into
    ``SPEEDS``; ``line`` is the line each link was read from, for error messages.
    """

    kind: np.ndarray
    nports: np.ndarray
    guid: np.ndarray
    sysimg: np.ndarray
    desc: list[str]
    lid: np.ndarray
    hp_node: np.ndarray
    hp_port: np.ndarray
    hp_lid: np.ndarray
    hp_guid: np.ndarray
    a_node: np.ndarray
    a_port: np.ndarray
    b_node: np.ndarray
    b_port: np.ndarray
    width: np.ndarray
    speed: np.ndarray
    line: np.ndarray
    meta: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)  # lines skipped (captured terminal text)
    trained_down: np.ndarray | None = None  # bool [L]: the two ends gave different rates, the lower is read


def assemble(p: Parts, source: str, fmt: str, name: str) -> Fabric:
    """Check the links of ``p`` (ports in range, each port on one cable) and build the fabric."""
    kind, nports, guid = p.kind, p.nports.astype(np.int64), p.guid
    a, ap, b, bp = (np.asarray(x, dtype=np.int64) for x in (p.a_node, p.a_port, p.b_node, p.b_port))
    line = np.asarray(p.line, dtype=np.int64)

    def fail_at(i: int, message: str):
        raise FormatError(source, int(line[i]), message)

    for nd, pt in ((a, ap), (b, bp)):
        bad = np.flatnonzero((pt < 1) | (pt > nports[nd]))
        if bad.size:
            i = int(bad[0])
            fail_at(i, f"port {int(pt[i])} is outside 1..{int(nports[nd[i]])} of node {p.desc[int(nd[i])]!r}")
    # Every port on at most one cable: sort all link ends, look for a key seen twice.
    ends = np.concatenate([a * 256 + ap, b * 256 + bp])
    owner = np.concatenate([np.arange(len(a)), np.arange(len(a))])
    order = np.argsort(ends, kind="stable")
    dup = np.flatnonzero(ends[order][1:] == ends[order][:-1])
    if dup.size:
        first, second = sorted((int(owner[order[dup[0]]]), int(owner[order[dup[0] + 1]])),
                               key=lambda i: int(line[i]))
        key = int(ends[order[dup[0]]])
        fail_at(second, f"port {key % 256} of node {p.desc[key // 256]!r} is cabled twice (also on line "
                        f"{int(line[first])})")
    bad_w = np.flatnonzero(~np.isin(p.width, WIDTHS))
    if bad_w.size:
        fail_at(int(bad_w[0]), f"unknown link width {int(p.width[bad_w[0]])}x")
    loop = a == b
    cable = np.flatnonzero(~loop)
    offset = np.concatenate([[0], np.cumsum(nports)[:-1]]).astype(np.int64)
    slot = offset[p.hp_node] + p.hp_port - 1
    lids = _assembly.port_lids(source, kind, nports, guid, slot, p.hp_lid, slot, p.hp_guid,
                               p.lid[kind == KIND_SWITCH].astype(np.int64))
    width, speed = np.asarray(p.width, dtype=np.int64), np.asarray(p.speed, dtype=np.int64)
    meta = dict(p.meta)
    if p.trained_down is not None and p.trained_down[cable].any():
        meta["trained_down"] = np.flatnonzero(p.trained_down[cable]).tolist()
    return _assembly.finish(
        source, name, fmt, kind=kind, desc=p.desc, guid=guid, sysimg=p.sysimg, nports=nports, lids=lids,
        a=a[cable], ap=ap[cable], b=b[cable], bp=bp[cable], width=width[cable], speed=speed[cable],
        loops=(a[loop], ap[loop], bp[loop], width[loop], speed[loop]), warnings=p.warnings, meta=meta)


def dedupe_links(a: np.ndarray, ap: np.ndarray, b: np.ndarray, bp: np.ndarray, width: np.ndarray,
                 speed: np.ndarray, line: np.ndarray, trained: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """One entry per cable when a file lists a link from both ends; the lower width and speed win.

    Returns the arrays in the order given, keeping each cable's first line, how many ends disagreed
    on width or speed, and which cables are trained down (``trained``, bool per entry given: ends that
    already disagreed; or'ed with the entries of one cable that disagree). Conflicting cables (one port,
    two peers) are left for :func:`assemble` to refuse.
    """
    trained = np.zeros(len(a), dtype=bool) if trained is None else np.asarray(trained, dtype=bool)
    k1, k2 = a * 256 + ap, b * 256 + bp
    lo, hi = np.minimum(k1, k2), np.maximum(k1, k2)
    pair = lo * (1 << 24) + hi  # port keys are below 49151 * 256 < 2**24
    uniq, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    if len(uniq) == len(pair):
        return a, ap, b, bp, width, speed, line, 0, trained
    w = np.full(len(uniq), np.iinfo(np.int64).max)
    s = np.full(len(uniq), np.iinfo(np.int64).max)
    np.minimum.at(w, inverse, width)
    np.minimum.at(s, inverse, speed)
    lower = (w[inverse] != width) | (s[inverse] != speed)
    differ = int(np.count_nonzero(lower))
    down = np.zeros(len(uniq), dtype=bool)
    np.logical_or.at(down, inverse, lower | trained)
    keep = np.sort(first)
    rank = np.searchsorted(uniq, pair[keep])
    return a[keep], ap[keep], b[keep], bp[keep], w[rank], s[rank], line[keep], differ, down[rank]
