"""``ibdiagnet2.lst``: one line per link, in the format of OpenSM's ``subnet.lst`` (``osm_dump.c``)::

    { CA Ports:01 SystemGUID:946dae0300c30010 NodeGUID:946dae0300c30010 PortGUID:946dae0300c30010
      VenID:0002C9 DevID:1021 Rev:00000000 {gpu001 mlx5_0} LID:0006 PN:01 }
    { SW Ports:41 SystemGUID:... NodeGUID:... PortGUID:... VenID:000002C9 DevID:D2F2 Rev:000000A1
      {MF0;leaf01:MQM9700/U1} LID:0003 PN:01 } PHY=4x LOG=ACT SPD=100

(one line in the file). Every number is hex, with or without ``0x`` (ibdm reads them with
``strtol(.., 16)``); ``Ports`` is the node's port count, ``LID`` a CA port's own LID or a switch's
(port 0's), ``PN`` the port. After the two ends: ``PHY=`` the active width, ``LOG=`` the port state
(``ACT``, ``ARM``, ``INI``, ``DWN``), ``SPD=`` the lane rate in Gb/s (``2.5`` ... ``50``, ``100``,
``200``, ``FDR10``; signalling rates such as ``53.125`` are read too), in any order; ``SPD`` may be
absent (2.5, as ibdm takes it). Node types are ``SW``, ``CA`` and ``Rt`` with ``-SM`` appended for the
node of the master SM. Links in state ``DWN`` are skipped, as ibdm skips them (counted in
``meta["links_down"]``); a link listed from both ends is one cable. Captured terminal text is read as
the other topology readers read it: noise lines and other tools' output (:mod:`fabric_engine.captured`)
are skipped with warnings (one per tool).
"""

from __future__ import annotations

import re

import numpy as np

from ..captured import Session, noise, warning
from ..errors import FormatError
from ..topology import KIND_HOST, KIND_SWITCH, Fabric
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NAME_CHARS, MAX_NODE_PORTS, MAX_UNICAST_LID
from .ibdiagnet_fabric import PHY, SPD, Parts, assemble, dedupe_links

__all__ = ["read_lst", "MAX_LINE_CHARS"]

#: Longest line accepted (a real one is under 400 characters: descriptions have at most 64 bytes).
MAX_LINE_CHARS = 4096
_H = r"(?:0[xX])?([0-9A-Fa-f]{1,16})"
_END = (r"\{\s*(SW|CA|Rt)(?:-SM)?\s+Ports:" + _H + r"\s+SystemGUID:" + _H + r"\s+NodeGUID:" + _H
        + r"\s+PortGUID:" + _H + r"\s+VenID:" + _H + r"\s+DevID:" + _H + r"\s+Rev:" + _H
        + r"\s+\{(.*?)\}\s+LID:" + _H + r"\s+PN:" + _H + r"\s*\}")
_LINE = re.compile(r"\s*" + _END + r"\s*" + _END + r"((?:\s+\w+=\S*)*)\s*")
_END_GROUPS = 11
_KV = re.compile(r"(\w+)=(\S*)")


def read_lst(text: str, source: str = "ibdiagnet2.lst", name: str = "fabric") -> Fabric:
    """The fabric of an ``ibdiagnet2.lst`` (or OpenSM ``subnet.lst``)."""
    by_guid: dict[int, int] = {}
    n_kind: list[int] = []
    n_ports: list[int] = []
    n_guid: list[int] = []
    n_sys: list[int] = []
    n_desc: list[str] = []
    n_lid: list[int] = []
    n_line: list[int] = []
    ports: dict[int, tuple[int, int, int]] = {}  # node * 256 + port -> (lid, port GUID, line)
    links: list[tuple[int, int, int, int, int, int, int]] = []
    down = 0
    total_ports = 0
    warnings: list = []
    session = Session()

    def fail(lineno: int, message: str):
        raise FormatError(source, lineno, message)

    def end(g: tuple[str, ...], lineno: int) -> tuple[int, int]:
        nonlocal total_ports
        word, nports, sysimg, guid, pguid, _, _, _, desc, lid, pn = g
        nports_i, guid_i, lid_i, pn_i = int(nports, 16), int(guid, 16), int(lid, 16), int(pn, 16)
        if word == "Rt":
            fail(lineno, "router (Rt) nodes are not supported")
        if not 1 <= nports_i <= MAX_NODE_PORTS:
            fail(lineno, f"node declares {nports_i} ports; expected 1..{MAX_NODE_PORTS}")
        if not 1 <= pn_i <= nports_i:
            fail(lineno, f"port {pn_i} is outside 1..{nports_i} of node {desc!r}")
        if guid_i == 0:
            fail(lineno, "NodeGUID 0 is not a GUID")
        if len(desc) > MAX_NAME_CHARS:
            fail(lineno, f"node description longer than {MAX_NAME_CHARS} characters")
        lid_i = 0 if lid_i == 0xFFFF else lid_i
        if lid_i > MAX_UNICAST_LID:
            fail(lineno, f"LID 0x{lid_i:X} is above the highest unicast LID 0xBFFF")
        kind = KIND_SWITCH if word == "SW" else KIND_HOST
        node = by_guid.get(guid_i)
        if node is None:
            if len(n_kind) >= MAX_UNICAST_LID:
                fail(lineno, f"more than {MAX_UNICAST_LID:,} nodes: one subnet has {MAX_UNICAST_LID:,} unicast LIDs")
            total_ports += nports_i
            if total_ports > MAX_FABRIC_PORTS:
                fail(lineno, f"more than {MAX_FABRIC_PORTS:,} ports in all: more than one subnet's fabric has")
            node = by_guid[guid_i] = len(n_kind)
            n_kind.append(kind)
            n_ports.append(nports_i)
            n_guid.append(guid_i)
            n_sys.append(int(sysimg, 16))
            n_desc.append(desc)
            n_lid.append(0)
            n_line.append(lineno)
        elif n_kind[node] != kind or n_ports[node] != nports_i:
            fail(lineno, f"node 0x{guid_i:016x} is {word} with {nports_i} ports here but "
                         f"{'SW' if n_kind[node] == KIND_SWITCH else 'CA'} with {n_ports[node]} on line "
                         f"{n_line[node]}")
        if kind == KIND_SWITCH:
            if lid_i and n_lid[node] and n_lid[node] != lid_i:
                fail(lineno, f"switch LID 0x{lid_i:X} differs from 0x{n_lid[node]:X} on an earlier line")
            n_lid[node] = n_lid[node] or lid_i
        else:
            key = node * 256 + pn_i
            seen = ports.get(key)
            if seen is not None and lid_i and seen[0] and seen[0] != lid_i:
                fail(lineno, f"port {pn_i} of {desc!r} has LID 0x{lid_i:X} here, 0x{seen[0]:X} on line {seen[2]}")
            if seen is None or not seen[0]:
                ports[key] = (lid_i, int(pguid, 16), lineno)
        return node, pn_i

    for lineno, raw in enumerate(text.splitlines(), start=1):
        if len(raw) > MAX_LINE_CHARS:
            fail(lineno, f"line of {len(raw):,} characters; lines of this format are under {MAX_LINE_CHARS:,}")
        if not raw.strip():
            continue
        m = _LINE.fullmatch(raw)
        if m is None and (reason := noise(raw)) is not None:
            warnings.append(warning(lineno, raw, f"{reason} skipped"))
            continue
        if m is None and session.foreign(lineno, raw) is not None:
            continue
        if m is None:
            fail(lineno, f"malformed or truncated link line: {raw.strip()[:80]!r}")
        g = m.groups()
        a, ap = end(g[:_END_GROUPS], lineno)
        b, bp = end(g[_END_GROUPS:2 * _END_GROUPS], lineno)
        opts = dict(_KV.findall(g[-1]))
        state = opts.get("LOG", "ACT").upper()
        if state not in ("ACT", "ARM", "INI", "DWN", "DOWN"):
            fail(lineno, f"unknown port state LOG={state[:12]}")
        width = PHY.get(opts.get("PHY", "").lower())
        spd = opts.get("SPD", "2.5")
        speed = SPD.get(spd, SPD.get(spd.upper()))
        if state in ("DWN", "DOWN"):
            down += 1
            continue
        if width is None:
            fail(lineno, f"unknown link width PHY={opts.get('PHY', '(none)')[:12]}; known: {', '.join(PHY)}")
        if speed is None:
            fail(lineno, f"unknown link speed SPD={opts.get('SPD', '')[:12]}; known: {', '.join(SPD)}")
        links.append((a, ap, b, bp, width, speed, lineno))
    if not n_kind:
        raise FormatError(source, None, "no link lines found")
    arr = np.array(links, dtype=np.int64).reshape(-1, 7)
    a, ap, b, bp, width, speed, line, twice, trained = dedupe_links(*(arr[:, k] for k in range(7)))
    keys = np.fromiter(ports.keys(), dtype=np.int64, count=len(ports))
    facts = np.array(list(ports.values()), dtype=np.uint64).reshape(-1, 3)
    meta: dict = {}
    if down:
        meta["links_down"] = down
    if twice:
        meta["rate_mismatches"] = twice
    parts = Parts(kind=np.array(n_kind, dtype=np.int8), nports=np.array(n_ports, dtype=np.int64),
                  guid=np.array(n_guid, dtype=np.uint64), sysimg=np.array(n_sys, dtype=np.uint64), desc=n_desc,
                  lid=np.array(n_lid, dtype=np.int64), hp_node=keys // 256, hp_port=keys % 256,
                  hp_lid=facts[:, 0].astype(np.int64), hp_guid=facts[:, 1],
                  a_node=a, a_port=ap, b_node=b, b_port=bp, width=width, speed=speed, line=line, meta=meta,
                  warnings=warnings + session.warnings(), trained_down=trained)
    return assemble(parts, source, "ibdiagnet_lst", name)
