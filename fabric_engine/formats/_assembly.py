"""The last steps every topology reader shares: LIDs and port GUIDs, names, roles, tiers, and what it read.

A reader (:mod:`.records` for ``ibnetdiscover``-shaped text, :mod:`.ibdiagnet_fabric` for ibdiagnet's
files) checks its links, then hands nodes, known host-port facts and cables here:

* :func:`port_lids` gives every host port and switch a LID (free ones where the file has none) and every
  port its GUID (the file's where it names one);
* :func:`aggregation_mask` finds SHARP Aggregation Nodes: a CA whose NodeDescription contains
  ``Aggregation Node``, or that shares its system image GUID with the one switch it is cabled to;
* :func:`finish` names the nodes (descriptions with runs of blanks collapsed, made unique, see
  :mod:`._common`), gives roles (Aggregation Nodes ``aggregation``) and tiers, and keeps in ``meta``
  the loopback cables, chassis (switches sharing a system image GUID; each also the ``group`` of its
  ASICs, so the map lays a director out as one), host systems (CAs sharing one), NodeDescriptions the
  names do not give back, and the reader's warnings.
"""

from __future__ import annotations

from pathlib import PurePath

import numpy as np

from ..captured import Warning, capped
from ..errors import FormatError, TopologyError
from ..topology import KIND_HOST, KIND_SWITCH, ROLE_AGGREGATION, SPEEDS, Fabric
from . import _common

__all__ = ["port_lids", "aggregation_mask", "finish", "fabric_name"]


def fabric_name(source: str) -> str:
    """A fabric's default name: the file's stem, ``fabric`` for text without a file."""
    return "fabric" if source.startswith("<") else PurePath(source).stem


def port_lids(source: str, kind: np.ndarray, nports: np.ndarray, guid: np.ndarray, lid_slot: np.ndarray,
              lid: np.ndarray, guid_slot: np.ndarray, port_guid_given: np.ndarray, switch_lid: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(node LID, port LID, port GUID, LIDs filled)``.

    What the file says of ports: ``lid`` at port slots ``lid_slot`` (0: none), port GUIDs at ``guid_slot``
    (0: none; only host ports have their own); ``switch_lid`` per switch, in node order (0: none).
    """
    nports = nports.astype(np.int64)
    offset = np.concatenate([[0], np.cumsum(nports)[:-1]]).astype(np.int64)
    port_node = np.repeat(np.arange(len(kind)), nports)
    port_num = np.arange(int(nports.sum())) - offset[port_node] + 1
    is_host_port = kind[port_node] == KIND_HOST
    port_lid = np.zeros(len(port_node), dtype=np.int64)
    on_host = is_host_port[lid_slot]
    port_lid[lid_slot[on_host]] = lid[on_host]
    try:
        lids, filled = _common.fill_lids(port_lid, is_host_port, switch_lid.astype(np.int64))
    except TopologyError as exc:
        raise FormatError(source, None, str(exc)) from None
    n_host_ports = int(is_host_port.sum())
    port_lid[is_host_port] = lids[:n_host_ports]
    node_lid = np.zeros(len(kind), dtype=np.int64)
    node_lid[kind == KIND_SWITCH] = lids[n_host_ports:]
    node_lid[kind == KIND_HOST] = port_lid[offset[kind == KIND_HOST]]
    port_lid[~is_host_port] = node_lid[port_node[~is_host_port]]
    port_guid = np.where(is_host_port, guid[port_node] + port_num.astype(np.uint64), guid[port_node])
    known = (port_guid_given != 0) & is_host_port[guid_slot]
    port_guid[guid_slot[known]] = port_guid_given[known]
    return node_lid, port_lid, port_guid, filled


def aggregation_mask(kind: np.ndarray, desc: list[str], sysimg: np.ndarray, a: np.ndarray, b: np.ndarray
                     ) -> np.ndarray:
    """Mask of SHARP Aggregation Nodes among the nodes, given the cables ``a``-``b``."""
    by_desc = np.fromiter((_common.AGGREGATION_NODE.lower() in d.lower() for d in desc), dtype=bool,
                          count=len(desc))
    node, peer = np.concatenate([a, b]), np.concatenate([b, a])
    ca_to_sw = (kind[node] == KIND_HOST) & (kind[peer] == KIND_SWITCH)
    same_sys = ca_to_sw & (sysimg[node] == sysimg[peer]) & (sysimg[node] != 0)
    same = np.zeros(len(kind), dtype=bool)
    same[node[same_sys]] = True
    other = np.zeros(len(kind), dtype=bool)  # cabled to anything with another system image GUID
    other[node[(kind[node] == KIND_HOST) & ~same_sys]] = True
    return (by_desc | (same & ~other)) & (kind == KIND_HOST)


def _chassis(kind: np.ndarray, sysimg: np.ndarray, names: list[str], hosts: np.ndarray) -> tuple[dict, np.ndarray]:
    """``meta`` entries for chassis and host systems (and each host's system image GUID), and every node's
    group: its chassis' number (-1: none).

    A chassis is a group as a generator's pod is: the map lays its ASICs out together.
    """
    meta: dict = {}
    group = np.full(len(kind), -1, dtype=np.int64)
    sw = np.flatnonzero((kind == KIND_SWITCH) & (sysimg != 0))
    if sw.size:
        uniq, inverse, counts = np.unique(sysimg[sw], return_inverse=True, return_counts=True)
        shared = np.flatnonzero(counts > 1)
        chassis = [{"guid": f"0x{int(uniq[k]):016x}", "switches": [names[i] for i in sw[inverse == k].tolist()]}
                   for k in shared.tolist()]
        if chassis:
            meta["chassis"] = chassis
            number = np.full(len(uniq), -1, dtype=np.int64)
            number[shared] = np.arange(len(shared))
            group[sw] = number[inverse]
    known = hosts[sysimg[hosts] != 0]
    if known.size:
        meta["host_systems"] = int(np.unique(sysimg[known]).size) + int(hosts.size - known.size)
        # node index -> system image GUID: a cluster joins a host's HCAs on several fabrics by it
        meta["host_sysimg"] = {str(n): f"0x{g:016x}" for n, g in zip(known.tolist(), sysimg[known].tolist(),
                                                                     strict=True)}
    return meta, group


def _kept_descriptions(kind: np.ndarray, desc: list[str], names: list[str]) -> dict[str, str]:
    """NodeDescriptions the writers would not give back from the display names (node index -> description)."""
    return {str(i): d for i, (k, d, nm) in enumerate(zip(kind.tolist(), desc, names, strict=True))
            if d != (_common.host_description(nm) if k == KIND_HOST else nm)}


def finish(source: str, name: str, fmt: str, *, kind: np.ndarray, desc: list[str], guid: np.ndarray,
           sysimg: np.ndarray, nports: np.ndarray, lids: tuple, a: np.ndarray, ap: np.ndarray, b: np.ndarray,
           bp: np.ndarray, width: np.ndarray, speed: np.ndarray, loops: tuple, warnings: list[Warning],
           meta: dict | None = None, names: list[str] | None = None) -> Fabric:
    """Build the fabric of checked cables ``a``/``ap``-``b``/``bp`` (see the module docstring).

    ``lids`` is :func:`port_lids`' answer; ``loops`` ``(node, port, port, width, speed)`` arrays of the
    loopback cables; ``names`` replaces the names made from the descriptions (ibsim net files).
    """
    node_lid, port_lid, port_guid, filled = lids
    names = names if names is not None else _common.node_names(kind, [" ".join(d.split()) or d for d in desc], guid)
    aggregation = aggregation_mask(kind, desc, sysimg, a, b)
    role = _common.infer_roles(kind, names)
    role[aggregation] = ROLE_AGGREGATION
    out: dict = {"source_format": fmt, "lids_filled": filled, **(meta or {})}
    if aggregation.any():
        out["aggregation_nodes"] = int(aggregation.sum())
    ln, lp, lq, lw, ls = (np.asarray(x).tolist() for x in loops)
    if ln:
        out["loopbacks"] = [[names[n], p, q, f"{w}x{SPEEDS[s]}"] for n, p, q, w, s in zip(ln, lp, lq, lw, ls,
                                                                                          strict=True)]
    chassis, group = _chassis(kind, sysimg, names, np.flatnonzero((kind == KIND_HOST) & ~aggregation))
    out.update(chassis)
    kept = _kept_descriptions(kind, desc, names) if fmt != "ibsim" else {}
    if kept:
        out["node_desc"] = kept
    if warnings:
        out["warnings"] = capped(sorted(warnings, key=lambda w: w["line"]))
    return _common.build(
        source, name, kind=kind, node_name=names, guid=guid, lid=node_lid, nports=nports,
        role=role, tier=_common.infer_tiers(kind, a, b, aggregation), group=group, port_lid=port_lid,
        port_guid=port_guid,
        a_node=a, a_port=ap, b_node=b, b_port=bp, width=width, speed=speed, meta=out,
    )
