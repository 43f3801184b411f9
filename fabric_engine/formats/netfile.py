"""The line grammar shared by ``ibnetdiscover`` output and ibsim net files.

ibsim reads "a text file in the format compatible with ibnetdiscover command output"
(ibsim README), so one parser serves both, with a ``dialect`` for the differences:

==================  ==============================  ==========================================
                    ``ibnetdiscover``               ``ibsim``
==================  ==============================  ==========================================
node header         ``Switch|Ca N "S-<guid>" # "d"``  also ``Hca``; the id is the node's name
remote port         ``"id"[q]`` required            ``[q]`` optional (default 1, as ibsim)
width, speed        ``# ... lid L 4xNDR`` required;  same comment (ibsim >= 0.10), else port
                    ends differing: the lower read  options ``w=``/``s=``/``e=`` (PortInfo
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

Captures (:mod:`fabric_engine.captured`): a terminal logger that dropped the tabs leaves
``Switch41 "S-..."# "desc" ...`` and ``[1]"S-..."[3]# ...``; that is unambiguous, read with one
warning. Other tools' lines of the same terminal session (``ibswitches``, ``ibstat``, ...) are
skipped between records with one warning per tool; inside a record they are an error.

Errors name the line (:class:`FormatError`): malformed or truncated lines, a GUID or
node id used twice, a port above its node's port count or listed twice, a remote
node without a record, a link the other end does not confirm, an unknown width or
speed. Nothing is built unless the whole file is valid.

Bounds (issue 14), checked on the line that breaks them, before anything of that size
exists: lines of at most :data:`MAX_LINE_CHARS` characters, 1..254 ports a node, LIDs
1..0xBFFF, 64-bit GUIDs, ids and descriptions of at most 256 characters, at most 49,151
nodes and 1,048,576 ports in all (:mod:`fabric_engine.topology.limits`). Memory stays
proportional to the file's length, and every line pattern matches in linear time.
"""

from __future__ import annotations

import re

from ..captured import Session, noise, strip_bom, warning
from ..errors import FormatError
from ..topology import KIND_HOST, KIND_SWITCH, SPEEDS, WIDTHS, Fabric
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NAME_CHARS, MAX_NODE_PORTS, MAX_UNICAST_LID
from .records import Records, assemble

__all__ = ["parse", "MAX_LINE_CHARS", "TABS_MISSING"]

#: Longest line accepted (real lines are under 300 characters: NodeDescriptions have at most 64 bytes).
MAX_LINE_CHARS = 4096

# "\s*": a terminal logger that drops tabs turns ibnetdiscover's "Switch\t41" into "Switch41".
_HDR = re.compile(r'^(Switch|Ca|Hca|Rt)\s*(\d+)\s+"([^"]*)"(.*)$')
# A port line: [port], then labels -- ibnetdiscover -g's "[ext N]", ibdiagnet's port label "(1/1/1)" or
# "(21)", a CA port's GUID "(guid)" -- then "remote id", [remote port] and the remote's labels and GUID.
_PORT = re.compile(r'^\[(\d+)\]((?:\[ext \d+\]|\([^()"\s]*\))*)\s*"([^"]*)"(?:\[(\d+)\])?'
                   r'((?:\[ext \d+\]| ?\([^()"\s]*\))*)((?:\s|#).*)?$')
_LABEL = re.compile(r"\(([^()]*)\)")
_GUIDLINE = re.compile(r"^(switchguid|caguid|hcaguids|rtguid)\s*([=+])\s*(0x[0-9A-Fa-f]+|\d+)(?:\(([0-9A-Fa-f]+)\))?")
_SYSIMG = re.compile(r"^sysimgguid\s*=\s*(0x[0-9A-Fa-f]+)")
_ID_GUID = re.compile(r"^[SHR]-([0-9A-Fa-f]{1,16})$")
_DEFAULT = re.compile(r"^(width|speed|extspeed)\s*=\s*(0x[0-9A-Fa-f]+|\d+)\s*$")
_IGNORED = re.compile(r"^(vendid|devid|pdebug)\s*=")
_GROUPING = re.compile(r"^(?:Chassis \d+(?: \(guid 0x[0-9A-Fa-f]+\))?|Non-Chassis Nodes|Hostname: .*)$")
_UNSUPPORTED = re.compile(r"^(include|do|module)\b")
_HDR_DESC = re.compile(r'^\s*#\s*"([^"]*)"(.*)$')
# "lid 1 4xNDR"; ibnetdiscover prints "??" for an unknown width and "???" for an unknown speed.
_LINK = re.compile(r"lid\s+(\d+)\s+(\d+x|\?\?)([A-Za-z0-9]+|\?\?\?)")
#: The warning of a file whose tabs a terminal logger dropped.
TABS_MISSING = ("tabs missing (a terminal logger dropped them, e.g. 'Switch41 \"S-...\"#'): read as if they "
                "were there")
#: LIDs that mean "none assigned": 0 (before the SM ran) and 0xFFFF (the permissive LID, unconfigured ports).
_NO_LID = (0, 0xFFFF)
#: A parenthesised value above this on a CA port is its port GUID; below it, a port label such as "(21)".
_LABEL_MAX = 0xFFFF
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


def parse(text: str, source: str, dialect: str, node_name_map: dict[int, str] | None = None) -> Fabric:
    """Parse ``text`` (``dialect`` ``"ibnetdiscover"`` or ``"ibsim"``) into a :class:`Fabric`.

    ``node_name_map`` (node GUID -> name, as ``--node-name-map`` files give) replaces NodeDescriptions.
    """
    return assemble(read_records(text, source, dialect, node_name_map), source, dialect)


def read_records(text: str, source: str, dialect: str, node_name_map: dict[int, str] | None = None) -> Records:
    """The node and port records of ``text``; raises :class:`FormatError` naming the line."""
    strict = dialect == "ibnetdiscover"
    guid_next = dict(_GUID_BASE)
    default_w, default_s, default_e = _ib_width_mask(3), _ib_speed_mask(1, _IB_SPEED_BITS), 0
    rec = Records()
    warnings = rec.warnings
    by_guid: dict[int, int] = {}
    current = -1
    seen_ports: set[int] = set()
    pending_sysimg = 0
    pending_asic = 0  # the GUID in switchguid=0x...(<GUID>)
    guid_line = False  # a switchguid=/caguid= line came before this record's header
    session = Session()  # other tools' lines of a captured terminal session
    tabs_warned = False
    preamble = -1  # line of the last vendid=/devid= line

    def fail(lineno: int, message: str):
        raise FormatError(source, lineno, message)

    def lid_of(digits: str, lineno: int, raw: str) -> int:
        value = int(digits)
        if value in _NO_LID:
            if value:
                warnings.append(warning(lineno, raw, f"lid {value} (0xFFFF, the permissive LID) means none "
                                                     f"assigned; a free LID is given"))
            return 0
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

    def port_guid(labels: str, lineno: int) -> int:
        """The port GUID among a port's parenthesised labels (0 if none): hex above any port label."""
        found = 0
        for value in _LABEL.findall(labels):
            v = value[2:] if value[:2] in ("0x", "0X") else value
            if v and len(v) <= 16 and all(c in "0123456789abcdefABCDEF" for c in v) and int(v, 16) > _LABEL_MAX:
                found = guid_of(int(v, 16), lineno, "port GUID")
        return found

    total_ports = 0
    text = strip_bom(text, warnings)
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if len(raw) > MAX_LINE_CHARS:
            fail(lineno, f"line of {len(raw):,} characters; lines of this format are under {MAX_LINE_CHARS:,}")
        line = raw.strip()
        if not line:
            current = -1
            continue
        reason = noise(line)
        if reason is not None:
            warnings.append(warning(lineno, line, f"{reason} skipped"))
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
            kind = rec.n_kind[current]
            if port == 0 and kind == KIND_SWITCH and not strict:
                continue  # ibsim: switch management port 0
            if port < 1 or port > rec.n_ports[current]:
                fail(lineno, f"port {m.group(1)[:12]} is outside 1..{rec.n_ports[current]} of node "
                             f"{rec.n_id[current]!r}")
            if port in seen_ports:
                fail(lineno, f"port {port} of node {rec.n_id[current]!r} is listed twice")
            seen_ports.add(port)
            if m.group(4) is None and strict:
                fail(lineno, f"malformed or truncated port line (no remote port): {line[:80]!r}")
            rport = int(m.group(4)) if m.group(4) is not None else 1
            if rport > MAX_NODE_PORTS:
                fail(lineno, f"remote port {m.group(4)[:12]} is outside 1..{MAX_NODE_PORTS}")
            tail = m.group(6) or ""
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
                wtext, sname = link.group(2), link.group(3).upper()
                width = -1 if wtext == "??" else int(wtext[:-1])
                if width >= 0 and width not in _WIDTH_ENABLE:
                    fail(lineno, f"unknown link width {wtext}; known: {', '.join(f'{w}x' for w in WIDTHS)}")
                if sname != "???" and sname not in _SPEED_CODE:
                    fail(lineno, f"unknown link speed {link.group(3)!r}; known: {', '.join(SPEEDS)}")
                code = _SPEED_CODE.get(sname, -1)
                tok = (width, code)
                if width > 0:
                    wmask = _wmask(_WIDTH_ENABLE[width])
                if code >= 0:
                    smask = (1 << (code + 1)) - 1
            elif strict:
                fail(lineno, "port line has no link width and speed (e.g. '4xNDR') after the remote lid")
            own_lid = 0
            if kind == KIND_HOST:
                for lm in _LID.finditer(tail):
                    if link is not None and hash_at + 1 + last_quote + 1 + link.start() == lm.start():
                        continue
                    own_lid = lid_of(lm.group(1), lineno, line)
                    break
            entry = len(rec.p_node)
            if kind == KIND_HOST and m.group(2):
                g = port_guid(m.group(2), lineno)
                if g:
                    rec.guid_override.append((entry, 0, g))
            if m.group(5):
                g = port_guid(m.group(5), lineno)
                if g:
                    rec.guid_override.append((entry, 1, g))
            rec.p_node.append(current)
            rec.p_port.append(port)
            rec.p_rid.append(m.group(3))
            rec.p_rport.append(rport)
            rec.p_wmask.append(wmask)
            rec.p_smask.append(smask)
            rec.p_tok.append(tok)
            rec.p_lid.append(own_lid)
            rec.p_line.append(lineno)
            continue
        if c == "#":
            continue
        current = -1
        m = _HDR.match(line)
        if m is not None:
            word, nports, node_id, rest = m.group(1), int(m.group(2)), m.group(3), m.group(4)
            if not tabs_warned and m.start(2) == len(word):
                tabs_warned = True
                warnings.append(warning(lineno, line, TABS_MISSING))
            if word == "Rt":
                fail(lineno, "router (Rt) records are not supported")
            if word == "Hca" and strict:
                fail(lineno, "'Hca' records belong to ibsim net files; ibnetdiscover writes 'Ca'")
            if len(node_id) > MAX_NAME_CHARS:
                fail(lineno, f"node id longer than {MAX_NAME_CHARS} characters")
            if not 1 <= nports <= MAX_NODE_PORTS:
                fail(lineno, f"node {node_id!r} declares {m.group(2)[:12]} ports; expected 1..{MAX_NODE_PORTS} "
                             f"(port numbers are 8 bits, 255 is reserved)")
            if len(rec.n_kind) >= MAX_UNICAST_LID:
                fail(lineno, f"more than {MAX_UNICAST_LID:,} nodes: one subnet has {MAX_UNICAST_LID:,} unicast LIDs")
            total_ports += nports
            if total_ports > MAX_FABRIC_PORTS:
                fail(lineno, f"more than {MAX_FABRIC_PORTS:,} ports in all: more than one subnet's fabric has")
            if node_id in rec.by_id:
                fail(lineno, f"node id {node_id!r} already defined on line {rec.n_line[rec.by_id[node_id]]}")
            is_switch = word == "Switch"
            key = "switch" if is_switch else "ca"
            guid = guid_of(guid_next[key], lineno, "node GUID")
            guid_next[key] = guid + (1 if is_switch else nports + 1)
            id_guid = _ID_GUID.match(node_id) if strict and guid_line else None
            own = int(id_guid.group(1), 16) if id_guid is not None else guid
            if own != guid and own and pending_asic == own:  # a director: switchguid=0x<chassis>(<ASIC GUID>)
                pending_sysimg, guid = pending_sysimg or guid, own
            elif own != guid and guid not in by_guid:  # node_name() prints "S-<node GUID>" (ibnetdiscover.c)
                fail(lineno, f"node id {node_id!r} does not match the GUID 0x{guid:016x} of the "
                             f"{'switchguid' if is_switch else 'caguid'}= line before it")
            if guid in by_guid:
                fail(lineno, f"duplicate GUID 0x{guid:016x}: already node {rec.n_id[by_guid[guid]]!r} "
                             f"on line {rec.n_line[by_guid[guid]]}")
            dm = _HDR_DESC.match(rest)
            if dm is not None:
                desc, after_desc = dm.group(1), dm.group(2)
            else:
                desc, after_desc = node_id, rest
            if node_name_map and guid in node_name_map:
                desc = node_name_map[guid]
            if len(desc) > MAX_NAME_CHARS:
                fail(lineno, f"node description longer than {MAX_NAME_CHARS} characters")
            lm = _LID.search(after_desc) if is_switch else None
            current = len(rec.n_kind)
            rec.by_id[node_id] = current
            by_guid[guid] = current
            rec.n_kind.append(KIND_SWITCH if is_switch else KIND_HOST)
            rec.n_ports.append(nports)
            rec.n_guid.append(guid)
            rec.n_id.append(node_id)
            rec.n_desc.append(desc)
            rec.n_lid.append(lid_of(lm.group(1), lineno, line) if lm else 0)
            rec.n_line.append(lineno)
            rec.n_sysimg.append(pending_sysimg)
            pending_sysimg = pending_asic = 0
            guid_line = False
            seen_ports = set()
            continue
        m = _GUIDLINE.match(line)
        if m is not None:
            key = "switch" if m.group(1) == "switchguid" else "ca"
            v = guid_of(c_number(m.group(3), lineno), lineno, m.group(1))
            guid_next[key] = v if m.group(2) == "=" else _GUID_BASE[key] + v
            pending_asic = int(m.group(4), 16) if m.group(4) else 0
            guid_line = True
            continue
        m = _SYSIMG.match(line)
        if m is not None:
            pending_sysimg = guid_of(int(m.group(1), 16), lineno, "sysimgguid")
            continue
        if _IGNORED.match(line):
            preamble = lineno  # vendid=/devid=: a record's first lines
            continue
        if strict and _GROUPING.match(line):
            continue
        inside = (guid_line or pending_sysimg or preamble == lineno - 1 or rec.p_line and rec.p_line[-1] == lineno - 1
                  or rec.n_line and rec.n_line[-1] == lineno - 1)
        tool = session.foreign(lineno, line)
        if tool is not None:
            if inside:
                fail(lineno, f"a line of {tool} output inside a node record: {line[:80]!r}")
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
        if inside:
            fail(lineno, f"unrecognised line inside a node record: {line[:80]!r}")
        warnings.append(warning(lineno, line, "unrecognised line outside any node record skipped"))

    warnings.extend(session.warnings())
    if not rec.n_kind:
        skipped = f" ({len(warnings)} line(s) skipped, first line {warnings[0]['line']}: {warnings[0]['reason']})" \
            if warnings else ""
        raise FormatError(source, None, "no node records found" + skipped)
    return rec
