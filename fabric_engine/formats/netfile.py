"""The line grammar shared by ``ibnetdiscover`` output and ibsim net files.

ibsim reads "a text file in the format compatible with ibnetdiscover command output"
(ibsim README), so one parser serves both, with a ``dialect`` for the differences:

==================  ==============================  ==========================================
                    ``ibnetdiscover``               ``ibsim``
==================  ==============================  ==========================================
node header         ``Switch|Ca N "S-<guid>" # "d"``  also ``Hca``; the id is the node's name
remote port         ``"id"[q]`` required            ``[q]`` optional (default 1, as ibsim)
width, speed        ``# ... lid L 4xNDR`` required;  same comment (ibsim >= 0.10), else port
                    both ends must agree            options ``w=``/``s=``/``e=`` (PortInfo
                                                    enable bitmasks), else the ``width=``,
                                                    ``speed=``, ``extspeed=`` defaults; active
                                                    = best common value of both ends (ibsim)
node names          from descriptions (``_common``)  the quoted node ids
==================  ==============================  ==========================================

GUIDs follow ibsim's rule in both dialects: ``switchguid=``/``caguid=`` set the next
GUID of that node type (``+`` adds to it), a switch takes one GUID, a CA
``ports + 1`` (port GUIDs are node GUID + port). ``ibnetdiscover`` prints one such
line before every node, so its GUIDs are read exactly. A port line's ``(guid)``
gives that port's GUID. LIDs come from ``lid N`` on switch headers and CA port
lines; ports without one get free LIDs (``_common.fill_lids``, counted in
``meta["lids_filled"]``).

Errors name the line (:class:`FormatError`): malformed or truncated lines, a GUID or
node id used twice, a port above its node's port count or listed twice, a remote
node without a record, a link the other end does not confirm, an unknown width or
speed, ends that disagree. Nothing is built unless the whole file is valid.

Bounds (issue 14), checked on the line that breaks them, before anything of that size
exists: lines of at most :data:`MAX_LINE_CHARS` characters, 1..254 ports a node, LIDs
1..0xBFFF, 64-bit GUIDs, ids and descriptions of at most 256 characters, at most 49,151
nodes and 1,048,576 ports in all (:mod:`fabric_engine.topology.limits`). Memory stays
proportional to the file's length, and every line pattern matches in linear time.
"""

from __future__ import annotations

import re
from pathlib import PurePath

import numpy as np

from ..errors import FormatError, TopologyError
from ..topology import KIND_HOST, KIND_SWITCH, SPEEDS, WIDTHS, Fabric
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NAME_CHARS, MAX_NODE_PORTS, MAX_UNICAST_LID
from . import _common

__all__ = ["parse", "MAX_LINE_CHARS"]

#: Longest line accepted (real lines are under 300 characters: NodeDescriptions have at most 64 bytes).
MAX_LINE_CHARS = 4096

_HDR = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]*)"(.*)$')
_PORT = re.compile(r'^\[(\d+)\](?:\(([0-9A-Fa-f]+)\))?\s*"([^"]*)"(\[(\d+)\])?(?:\(([0-9A-Fa-f]+)\))?(\s.*)?$')
_GUIDLINE = re.compile(r"^(switchguid|caguid|hcaguids|rtguid)\s*([=+])\s*(0x[0-9A-Fa-f]+|\d+)")
_DEFAULT = re.compile(r"^(width|speed|extspeed)\s*=\s*(0x[0-9A-Fa-f]+|\d+)\s*$")
_IGNORED = re.compile(r"^(vendid|devid|sysimgguid|pdebug)\s*=")
_UNSUPPORTED = re.compile(r"^(include|do|module)\b")
_HDR_DESC = re.compile(r'^\s*#\s*"([^"]*)"(.*)$')
_LINK = re.compile(r"lid\s+(\d+)\s+(\d+)x([A-Za-z0-9]+)")
_LID = re.compile(r"\blid\s+(\d+)")
_OPT = re.compile(r"\b([wse])\s*=\s*(0x[0-9A-Fa-f]+|\d+)")

_SPEED_CODE = {s: i for i, s in enumerate(SPEEDS)}
_WIDTH_BIT = {w: 1 << i for i, w in enumerate(WIDTHS)}
# ibsim: a "<w>x" in the comment enables these widths (sim_net.c parse_port_link_width_and_speed).
_WIDTH_ENABLE = {12: (1, 4, 12), 8: (8,), 4: (1, 4), 2: (2,), 1: (1,)}
# PortInfo LinkWidthEnabled bits -> widths; LinkSpeedEnabled / LinkSpeedExtEnabled bits -> speed codes.
_IB_WIDTH_BITS = {1: 1, 2: 4, 4: 8, 8: 12, 16: 2}
_IB_SPEED_BITS = {1: "SDR", 2: "DDR", 4: "QDR"}
_IB_EXT_BITS = {1: "FDR", 2: "EDR", 4: "HDR", 8: "NDR"}
_GUID_BASE = {"switch": 0x100000, "ca": 0x200000}  # ibsim's defaults


def _wmask(widths) -> int:
    return sum(_WIDTH_BIT[w] for w in widths)


def _ib_width_mask(v: int) -> int:
    return _wmask(w for bit, w in _IB_WIDTH_BITS.items() if v & bit)


def _ib_speed_mask(v: int, table: dict[int, str]) -> int:
    return sum(1 << _SPEED_CODE[s] for bit, s in table.items() if v & bit)


def _best(mask: np.ndarray, values: tuple) -> np.ndarray:
    """Index of the highest set bit of every mask (-1 where zero), mapped through ``values`` order."""
    out = np.full(len(mask), -1, dtype=np.int64)
    for i in range(len(values)):
        out[(mask >> i) & 1 == 1] = i
    return out


def parse(text: str, source: str, dialect: str) -> Fabric:
    """Parse ``text`` (``dialect`` ``"ibnetdiscover"`` or ``"ibsim"``) into a :class:`Fabric`."""
    strict = dialect == "ibnetdiscover"
    guid_next = dict(_GUID_BASE)
    default_w, default_s, default_e = _ib_width_mask(3), _ib_speed_mask(1, _IB_SPEED_BITS), 0
    # Nodes.
    n_kind: list[int] = []
    n_ports: list[int] = []
    n_guid: list[int] = []
    n_id: list[str] = []
    n_desc: list[str] = []
    n_lid: list[int] = []
    n_line: list[int] = []
    by_id: dict[str, int] = {}
    by_guid: dict[int, int] = {}
    # Port lines.
    p_node: list[int] = []
    p_port: list[int] = []
    p_rid: list[str] = []
    p_rport: list[int] = []
    p_wmask: list[int] = []
    p_smask: list[int] = []
    p_tok: list[tuple[int, int]] = []
    p_lid: list[int] = []
    p_line: list[int] = []
    guid_override: list[tuple[int, int, int]] = []  # (line index of port entry, which end: 0 local / 1 remote, guid)
    current = -1
    seen_ports: set[int] = set()

    def fail(lineno: int, message: str):
        raise FormatError(source, lineno, message)

    def lid_of(digits: str, lineno: int) -> int:
        value = int(digits)
        if value > MAX_UNICAST_LID:
            fail(lineno, f"lid {digits[:12]} is above the highest unicast LID {MAX_UNICAST_LID} (0xBFFF)")
        return value

    def c_number(text: str, lineno: int) -> int:
        """A number as ibsim's ``strtoull(text, 0)`` takes it: ``0x`` hex, a leading ``0`` octal, else decimal."""
        try:
            return int(text, 16) if text[:2] in ("0x", "0X") else int(text, 8) if text[:1] == "0" else int(text)
        except ValueError:
            fail(lineno, f"{text[:24]!r} is not a number (0x hex, 0 octal or decimal)")

    def guid_of(value: int, lineno: int, what: str) -> int:
        if not 0 < value < 1 << 64:
            fail(lineno, f"{what} 0x{value:x} is not a non-zero 64-bit GUID"[:120])
        return value

    total_ports = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if len(raw) > MAX_LINE_CHARS:
            fail(lineno, f"line of {len(raw):,} characters; lines of this format are under {MAX_LINE_CHARS:,}")
        line = raw.strip()
        if not line:
            current = -1
            continue
        c = line[0]
        if c == "[" or c == "@":
            if c == "@":
                fail(lineno, "ibsim port aliases ('@') are not supported")
            if current < 0:
                fail(lineno, "port line outside a node record")
            m = _PORT.match(line)
            if m is None:
                fail(lineno, f"malformed or truncated port line: {line[:80]!r}")
            port = int(m.group(1))
            if len(m.group(3)) > MAX_NAME_CHARS:
                fail(lineno, f"remote node id longer than {MAX_NAME_CHARS} characters")
            kind = n_kind[current]
            if port == 0 and kind == KIND_SWITCH and not strict:
                continue  # ibsim: switch management port 0
            if port < 1 or port > n_ports[current]:
                fail(lineno, f"port {m.group(1)[:12]} is outside 1..{n_ports[current]} of node {n_id[current]!r}")
            if port in seen_ports:
                fail(lineno, f"port {port} of node {n_id[current]!r} is listed twice")
            seen_ports.add(port)
            if m.group(4) is None and strict:
                fail(lineno, f"malformed or truncated port line (no remote port): {line[:80]!r}")
            rport = int(m.group(5)) if m.group(5) is not None else 1
            if rport > MAX_NODE_PORTS:
                fail(lineno, f"remote port {m.group(5)[:12]} is outside 1..{MAX_NODE_PORTS}")
            tail = m.group(7) or ""
            hash_at = tail.find("#")
            opts, comment = (tail, "") if hash_at < 0 else (tail[:hash_at], tail[hash_at + 1:])
            last_quote = comment.rfind('"')
            after = comment[last_quote + 1:] if last_quote >= 0 else comment
            link = _LINK.search(after)
            wmask, smask, tok = default_w, default_s | default_e, (-1, -1)
            if not strict:
                for key, val in _OPT.findall(opts):
                    v = c_number(val, lineno)
                    if key == "w":
                        wmask = _ib_width_mask(v)
                    elif key == "s":
                        smask = (smask & ~0b111) | _ib_speed_mask(v or 4, _IB_SPEED_BITS)
                    else:
                        smask = (smask & 0b111) | _ib_speed_mask(v, _IB_EXT_BITS)
            if link is not None:
                width, sname = int(link.group(2)), link.group(3).upper()
                if width not in _WIDTH_ENABLE:
                    fail(lineno, f"unknown link width {link.group(2)}x; known: {', '.join(f'{w}x' for w in WIDTHS)}")
                if sname not in _SPEED_CODE:
                    fail(lineno, f"unknown link speed {link.group(3)!r}; known: {', '.join(SPEEDS)}")
                code = _SPEED_CODE[sname]
                tok = (width, code)
                wmask = _wmask(_WIDTH_ENABLE[width])
                smask = (1 << (code + 1)) - 1
            elif strict:
                fail(lineno, "port line has no link width and speed (e.g. '4xNDR') after the remote lid")
            own_lid = 0
            if kind == KIND_HOST:
                for lm in _LID.finditer(tail):
                    if link is not None and hash_at + 1 + last_quote + 1 + link.start() == lm.start():
                        continue
                    own_lid = lid_of(lm.group(1), lineno)
                    break
            entry = len(p_node)
            if m.group(2):
                guid_override.append((entry, 0, guid_of(int(m.group(2), 16), lineno, "port GUID")))
            if m.group(6):
                guid_override.append((entry, 1, guid_of(int(m.group(6), 16), lineno, "port GUID")))
            p_node.append(current)
            p_port.append(port)
            p_rid.append(m.group(3))
            p_rport.append(rport)
            p_wmask.append(wmask)
            p_smask.append(smask)
            p_tok.append(tok)
            p_lid.append(own_lid)
            p_line.append(lineno)
            continue
        if c == "#":
            continue
        current = -1
        m = _HDR.match(line)
        if m is not None:
            word, nports, node_id, rest = m.group(1), int(m.group(2)), m.group(3), m.group(4)
            if word == "Rt":
                fail(lineno, "router (Rt) records are not supported")
            if word == "Hca" and strict:
                fail(lineno, "'Hca' records belong to ibsim net files; ibnetdiscover writes 'Ca'")
            if len(node_id) > MAX_NAME_CHARS:
                fail(lineno, f"node id longer than {MAX_NAME_CHARS} characters")
            if not 1 <= nports <= MAX_NODE_PORTS:
                fail(lineno, f"node {node_id!r} declares {m.group(2)[:12]} ports; expected 1..{MAX_NODE_PORTS} "
                             f"(port numbers are 8 bits, 255 is reserved)")
            if len(n_kind) >= MAX_UNICAST_LID:
                fail(lineno, f"more than {MAX_UNICAST_LID:,} nodes: one subnet has {MAX_UNICAST_LID:,} unicast LIDs")
            total_ports += nports
            if total_ports > MAX_FABRIC_PORTS:
                fail(lineno, f"more than {MAX_FABRIC_PORTS:,} ports in all: more than one subnet's fabric has")
            if node_id in by_id:
                fail(lineno, f"node id {node_id!r} already defined on line {n_line[by_id[node_id]]}")
            is_switch = word == "Switch"
            key = "switch" if is_switch else "ca"
            guid = guid_of(guid_next[key], lineno, "node GUID")
            guid_next[key] = guid + (1 if is_switch else nports + 1)
            if guid in by_guid:
                fail(lineno, f"duplicate GUID 0x{guid:016x}: already node {n_id[by_guid[guid]]!r} "
                             f"on line {n_line[by_guid[guid]]}")
            dm = _HDR_DESC.match(rest)
            if dm is not None:
                desc, after_desc = dm.group(1), dm.group(2)
            else:
                desc, after_desc = node_id, rest
            if len(desc) > MAX_NAME_CHARS:
                fail(lineno, f"node description longer than {MAX_NAME_CHARS} characters")
            lm = _LID.search(after_desc) if is_switch else None
            current = len(n_kind)
            by_id[node_id] = current
            by_guid[guid] = current
            n_kind.append(KIND_SWITCH if is_switch else KIND_HOST)
            n_ports.append(nports)
            n_guid.append(guid)
            n_id.append(node_id)
            n_desc.append(desc)
            n_lid.append(lid_of(lm.group(1), lineno) if lm else 0)
            n_line.append(lineno)
            seen_ports = set()
            continue
        m = _GUIDLINE.match(line)
        if m is not None:
            key = "switch" if m.group(1) == "switchguid" else "ca"
            v = guid_of(c_number(m.group(3), lineno), lineno, m.group(1))
            guid_next[key] = v if m.group(2) == "=" else _GUID_BASE[key] + v
            continue
        if _IGNORED.match(line):
            continue
        if not strict:
            dm = _DEFAULT.match(line)
            if dm is not None:
                v = c_number(dm.group(2), lineno)
                if dm.group(1) == "width":
                    default_w = _ib_width_mask(v)
                elif dm.group(1) == "speed":
                    default_s = _ib_speed_mask(v, _IB_SPEED_BITS)
                else:
                    default_e = _ib_speed_mask(v, _IB_EXT_BITS)
                continue
            if _UNSUPPORTED.match(line):
                fail(lineno, f"ibsim directive {line.split()[0]!r} is not supported")
            continue  # ibsim ignores lines it does not know
        fail(lineno, f"unrecognised line: {line[:80]!r}")

    if not n_kind:
        raise FormatError(source, None, "no node records found")
    return _assemble(source, dialect, n_kind, n_ports, n_guid, n_id, n_desc, n_lid, by_id,
                     p_node, p_port, p_rid, p_rport, p_wmask, p_smask, p_tok, p_lid, p_line, guid_override)


def _assemble(source, dialect, n_kind, n_ports, n_guid, n_id, n_desc, n_lid, by_id,
              p_node, p_port, p_rid, p_rport, p_wmask, p_smask, p_tok, p_lid, p_line, guid_override) -> Fabric:
    """Resolve remote ends, check that every link is confirmed, and build the fabric (vectorized)."""
    kind = np.array(n_kind, dtype=np.int8)
    nports = np.array(n_ports, dtype=np.int64)
    guid = np.array(n_guid, dtype=np.uint64)
    node = np.array(p_node, dtype=np.int64)
    port = np.array(p_port, dtype=np.int64)
    rport = np.array(p_rport, dtype=np.int64)
    line = np.array(p_line, dtype=np.int64)
    rnode = np.fromiter((by_id.get(r, -1) for r in p_rid), dtype=np.int64, count=len(p_rid))

    def fail_at(i: int, message: str):
        raise FormatError(source, int(line[i]), message)

    missing = np.flatnonzero(rnode < 0)
    if missing.size:
        i = int(missing[0])
        fail_at(i, f"remote node {p_rid[i]!r} has no record in the file (truncated file?)")
    above = np.flatnonzero(rport > nports[rnode])
    if above.size:
        i = int(above[0])
        fail_at(i, f"remote port {int(rport[i])} is above the {int(nports[rnode[i]])} ports of node {p_rid[i]!r}")
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
        other = (f"port {int(rport[i])} of {p_rid[i]!r} lists {p_rid[partner[i]]!r}[{int(p_rport[partner[i]])}] "
                 f"on line {int(line[partner[i]])}"
                 if sorted_keys[pos[i]] == rkey[i] else f"port {int(rport[i])} of {p_rid[i]!r} is not listed")
        fail_at(i, f"link {n_id[node[i]]!r}[{int(port[i])}] -> {p_rid[i]!r}[{int(rport[i])}] is not confirmed by "
                   f"the other side ({other})")
    tok = np.array(p_tok, dtype=np.int64).reshape(-1, 2)
    if dialect == "ibnetdiscover":
        differ = np.flatnonzero((tok != tok[partner]).any(axis=1))
        if differ.size:
            i = int(differ[0])
            fail_at(i, f"link width/speed {int(tok[i, 0])}x{SPEEDS[tok[i, 1]]} differs from the other end's "
                       f"{int(tok[partner[i], 0])}x{SPEEDS[tok[partner[i], 1]]} (line {int(line[partner[i]])})")
        width_code = np.searchsorted(np.array(WIDTHS), tok[:, 0])
        speed = tok[:, 1]
    else:
        wm = np.array(p_wmask, dtype=np.int64)
        sm = np.array(p_smask, dtype=np.int64)
        width_code = _best(wm & wm[partner], WIDTHS)
        speed = _best(sm & sm[partner], SPEEDS)
        for arr, what in ((width_code, "width"), (speed, "speed")):
            none = np.flatnonzero(arr < 0)
            if none.size:
                fail_at(int(none[0]), f"the two ends of this link enable no common link {what}")
    cable = np.flatnonzero(key < rkey)
    # Ports, LIDs and port GUIDs.
    offset = np.concatenate([[0], np.cumsum(nports)[:-1]])
    port_node = np.repeat(np.arange(len(kind)), nports)
    port_num = np.arange(int(nports.sum())) - offset[port_node] + 1
    is_host_port = kind[port_node] == KIND_HOST
    port_lid = np.zeros(len(port_node), dtype=np.int64)
    slot = offset[node] + port - 1
    host_entry = kind[node] == KIND_HOST
    port_lid[slot[host_entry]] = np.array(p_lid, dtype=np.int64)[host_entry]
    try:
        lids, filled = _common.fill_lids(port_lid, is_host_port, np.array(n_lid, dtype=np.int64)[kind == KIND_SWITCH])
    except TopologyError as exc:
        raise FormatError(source, None, str(exc)) from None
    n_host_ports = int(is_host_port.sum())
    port_lid[is_host_port] = lids[:n_host_ports]
    node_lid = np.zeros(len(kind), dtype=np.int64)
    node_lid[kind == KIND_SWITCH] = lids[n_host_ports:]
    host_first = offset[kind == KIND_HOST]
    node_lid[kind == KIND_HOST] = port_lid[host_first]
    port_lid[~is_host_port] = node_lid[port_node[~is_host_port]]
    port_guid = np.where(is_host_port, guid[port_node] + port_num.astype(np.uint64), guid[port_node])
    for entry, end, g in guid_override:
        s = slot[entry] if end == 0 else offset[rnode[entry]] + rport[entry] - 1
        if is_host_port[s]:
            port_guid[s] = g
    # Names, roles, tiers.
    names = _common.node_names(kind, n_desc, guid) if dialect == "ibnetdiscover" else list(n_id)
    aggregation = np.array([_common.AGGREGATION_NODE in d for d in n_desc], dtype=bool) & (kind == KIND_HOST)
    a_node, b_node = node[cable], rnode[cable]
    meta = {"source_format": dialect, "lids_filled": filled}
    if aggregation.any():
        meta["aggregation_nodes"] = int(aggregation.sum())
    return _common.build(
        source, "fabric" if source.startswith("<") else PurePath(source).stem,
        kind=kind, node_name=names, guid=guid, lid=node_lid, nports=nports,
        role=_common.infer_roles(kind, names), tier=_common.infer_tiers(kind, a_node, b_node, aggregation),
        port_lid=port_lid, port_guid=port_guid,
        a_node=a_node, a_port=port[cable], b_node=b_node, b_port=rport[cable],
        width=np.array(WIDTHS)[width_code[cable]], speed=speed[cable], meta=meta,
    )
