"""Node and port records read from a topology text, and their assembly into a :class:`Fabric`.

Every reader of ``ibnetdiscover``-shaped text (the node-record output, its ibdiagnet dialect, ibsim
net files, ``ibnetdiscover -p``) fills one :class:`Records`; :func:`assemble` resolves remote ends,
checks that both ends of every link list each other, and builds the fabric, all vectorized. What it decides
beyond the file's words is said in ``meta`` and in the warnings:

* **Loopback cables** (a port cabled to another port of the same node, as burn-in racks have)
  carry no traffic between nodes and no route uses them (OpenSM never forwards out of the port a
  packet could come back in on its own switch); they are kept in ``meta["loopbacks"]``
  (``[[node name, port, port, "4xNDR"], ...]``), not among the cables; the writers give them back.
* **SHARP Aggregation Nodes**: a CA whose NodeDescription contains ``Aggregation Node``, or that
  shares its system image GUID with the one switch it is cabled to, gets the role
  ``aggregation``: routed to (OpenSM sees a CA) but never a host (``Fabric.hosts``).
* **Chassis**: switches sharing a system image GUID (a director's line and spine ASICs) are one
  chassis, ``meta["chassis"]``; CAs sharing one are one host system with several rails,
  counted in ``meta["host_systems"]``.
* **Unknown width or speed** (``??``/``???`` where the tool did not know the value): the other
  end's value, else the fabric's most common one, with a warning naming the line.
* **Ends that print different rates** (``4xSDR`` on one switch, ``1xSDR`` on its peer: a link
  retraining, or older firmware): the lower width and the lower speed, what the link can carry, with a
  warning naming both lines; the cable is listed in ``meta["trained_down"]`` (``Fabric.trained_down``).
* **NodeDescriptions** are kept as the file gives them (``meta["node_desc"]`` where the display
  name and the writers' convention would not give them back); display names are the description
  with blanks trimmed and runs of blanks collapsed, made unique (see :mod:`._common`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..captured import Warning, warning
from ..errors import FormatError
from ..topology import KIND_SWITCH, SPEEDS, WIDTHS, Fabric
from . import _assembly

__all__ = ["Records", "assemble"]


@dataclass
class Records:
    """Parallel lists of the nodes (``n_*``) and port lines (``p_*``) of one file."""

    n_kind: list[int] = field(default_factory=list)
    n_ports: list[int] = field(default_factory=list)
    n_guid: list[int] = field(default_factory=list)
    n_id: list[str] = field(default_factory=list)
    n_desc: list[str] = field(default_factory=list)
    n_lid: list[int] = field(default_factory=list)
    n_line: list[int] = field(default_factory=list)
    n_sysimg: list[int] = field(default_factory=list)  # 0 where the file gives none
    by_id: dict[str, int] = field(default_factory=dict)
    p_node: list[int] = field(default_factory=list)
    p_port: list[int] = field(default_factory=list)
    p_rid: list[str] = field(default_factory=list)
    p_rport: list[int] = field(default_factory=list)
    p_wmask: list[int] = field(default_factory=list)
    p_smask: list[int] = field(default_factory=list)
    p_tok: list[tuple[int, int]] = field(default_factory=list)  # (lanes or -1, speed code or -1); (-1, -1) none
    p_lid: list[int] = field(default_factory=list)
    p_line: list[int] = field(default_factory=list)
    # (port entry, which end: 0 local / 1 remote, port GUID)
    guid_override: list[tuple[int, int, int]] = field(default_factory=list)
    warnings: list[Warning] = field(default_factory=list)


def _resolve_unknown(tok: np.ndarray, partner: np.ndarray, line: np.ndarray, warnings: list[Warning]) -> None:
    """Fill ``-1`` widths and speeds from the other end, else the most common known value (in place)."""
    for col, what, names in ((0, "width", None), (1, "speed", SPEEDS)):
        unknown = tok[:, col] < 0
        if not unknown.any():
            continue
        tok[unknown, col] = tok[partner[unknown], col]
        still = np.flatnonzero(tok[:, col] < 0)
        known = tok[tok[:, col] >= 0, col]
        fill = int(np.bincount(known).argmax()) if known.size else (4 if col == 0 else SPEEDS.index("SDR"))
        tok[still, col] = fill
        shown = f"{fill}x" if names is None else names[fill]
        for i in still[np.argsort(line[still], kind="stable")].tolist():
            warnings.append(warning(int(line[i]), "", f"link {what} unknown at both ends ('??'/'???'); "
                                                      f"taken as {shown}, the fabric's most common"))


def assemble(r: Records, source: str, dialect: str) -> Fabric:
    """Resolve remote ends, check that every link is confirmed, and build the fabric (vectorized)."""
    kind = np.array(r.n_kind, dtype=np.int8)
    nports = np.array(r.n_ports, dtype=np.int64)
    guid = np.array(r.n_guid, dtype=np.uint64)
    node = np.array(r.p_node, dtype=np.int64)
    port = np.array(r.p_port, dtype=np.int64)
    rport = np.array(r.p_rport, dtype=np.int64)
    line = np.array(r.p_line, dtype=np.int64)
    rnode = np.fromiter((r.by_id.get(x, -1) for x in r.p_rid), dtype=np.int64, count=len(r.p_rid))
    warnings = r.warnings

    def fail_at(i: int, message: str):
        raise FormatError(source, int(line[i]), message)

    missing = np.flatnonzero(rnode < 0)
    if missing.size:
        i = int(missing[0])
        fail_at(i, f"remote node {r.p_rid[i]!r} has no record in the file (truncated file?)")
    above = np.flatnonzero(rport > nports[rnode])
    if above.size:
        i = int(above[0])
        fail_at(i, f"remote port {int(rport[i])} is above the {int(nports[rnode[i]])} ports of node {r.p_rid[i]!r}")
    key = node * 256 + port
    rkey = rnode * 256 + rport
    order = np.argsort(key, kind="stable")
    sorted_keys = key[order]
    pos = np.minimum(np.searchsorted(sorted_keys, rkey), len(key) - 1) if len(key) else np.zeros(0, np.int64)
    partner = order[pos] if len(key) else pos
    confirmed = (sorted_keys[pos] == rkey) & (rkey[partner] == key) if len(key) else np.zeros(0, bool)
    bad = np.flatnonzero(~confirmed)
    if bad.size:
        i = int(bad[0])
        other = (f"port {int(rport[i])} of {r.p_rid[i]!r} lists {r.p_rid[partner[i]]!r}[{int(r.p_rport[partner[i]])}] "
                 f"on line {int(line[partner[i]])}"
                 if sorted_keys[pos[i]] == rkey[i] else f"port {int(rport[i])} of {r.p_rid[i]!r} is not listed")
        fail_at(i, f"link {r.n_id[node[i]]!r}[{int(port[i])}] -> {r.p_rid[i]!r}[{int(rport[i])}] is not confirmed by "
                   f"the other side ({other})")
    tok = np.array(r.p_tok, dtype=np.int64).reshape(-1, 2)
    mismatch = np.zeros(len(tok), dtype=bool)  # ends printing different known rates
    if dialect == "ibsim":
        wm = np.array(r.p_wmask, dtype=np.int64)
        sm = np.array(r.p_smask, dtype=np.int64)
        width_code = _best(wm & wm[partner], WIDTHS)
        speed = _best(sm & sm[partner], SPEEDS)
        for arr, what in ((width_code, "width"), (speed, "speed")):
            none = np.flatnonzero(arr < 0)
            if none.size:
                fail_at(int(none[0]), f"the two ends of this link enable no common link {what}")
    else:
        both = (tok >= 0) & (tok[partner] >= 0)
        mismatch = (both & (tok != tok[partner])).any(axis=1)
        if mismatch.any():
            _lower_rate(tok, partner, line, mismatch, warnings)
        _resolve_unknown(tok, partner, line, warnings)
        width_code = np.searchsorted(np.array(WIDTHS), tok[:, 0])
        speed = tok[:, 1]
    loop = node == rnode
    cable = np.flatnonzero((key < rkey) & ~loop)
    loops = np.flatnonzero(loop & (key < rkey))
    widths = np.array(WIDTHS)[width_code]
    offset = np.concatenate([[0], np.cumsum(nports)[:-1]])
    slot = offset[node] + port - 1
    over = np.array(r.guid_override, dtype=np.uint64).reshape(-1, 3)
    entry, end = over[:, 0].astype(np.int64), over[:, 1].astype(np.int64)
    guid_slot = np.where(end == 0, slot[entry], offset[rnode[entry]] + rport[entry] - 1)
    lids = _assembly.port_lids(source, kind, nports, guid, slot, np.array(r.p_lid, dtype=np.int64), guid_slot,
                               over[:, 2], np.array(r.n_lid, dtype=np.int64)[kind == KIND_SWITCH])
    return _assembly.finish(
        source, _assembly.fabric_name(source), dialect, kind=kind, desc=r.n_desc, guid=guid,
        sysimg=np.array(r.n_sysimg, dtype=np.uint64), nports=nports, lids=lids,
        a=node[cable], ap=port[cable], b=rnode[cable], bp=rport[cable], width=widths[cable], speed=speed[cable],
        loops=(node[loops], port[loops], rport[loops], widths[loops], speed[loops]), warnings=warnings,
        names=list(r.n_id) if dialect == "ibsim" else None,
        meta={"trained_down": np.flatnonzero(mismatch[cable]).tolist()} if mismatch.any() else None)


def _lower_rate(tok: np.ndarray, partner: np.ndarray, line: np.ndarray, mismatch: np.ndarray,
                warnings: list[Warning]) -> None:
    """Both ends of the ``mismatch`` links take the lower known width and speed (in place), a warning each link."""
    shown = {i: _rate(tok[i]) for i in np.flatnonzero(mismatch).tolist()}
    known = (tok >= 0) & (tok[partner] >= 0)
    tok[known] = np.minimum(tok, tok[partner])[known]
    for i in sorted(shown, key=lambda k: int(line[k])):
        j = int(partner[i])
        if int(line[i]) > int(line[j]) or i == j:
            continue
        warnings.append(warning(int(line[i]), "", f"link rate {shown[i]} differs from {shown[j]} at the other end "
                                                  f"(line {int(line[j])}): read as {_rate(tok[i])}, the lower, and "
                                                  f"marked trained down"))


def _rate(tok: np.ndarray) -> str:
    width = "??" if tok[0] < 0 else f"{int(tok[0])}x"
    return width + ("???" if tok[1] < 0 else SPEEDS[int(tok[1])])


def _best(mask: np.ndarray, values: tuple) -> np.ndarray:
    """Index of the highest set bit of every mask (-1 where zero), mapped through ``values`` order."""
    out = np.full(len(mask), -1, dtype=np.int64)
    for i in range(len(values)):
        out[(mask >> i) & 1 == 1] = i
    return out
