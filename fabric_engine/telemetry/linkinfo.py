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
signalling rate per lane ("2.5 Gbps" SDR ... "53.125 Gbps" HDR, "106.25 Gbps" NDR,
"10.0 Gbps (FDR10)"); widths are 1X, 2X, 4X, 8X and 12X.

Also read, as infiniband-diags' ``iblinkinfo.c`` prints them:

* ``-S GUID`` / ``--switch``: the same form, for one switch;
* ``-l`` (line mode): no headers; every port line starts with the port GUID and the
  node description, right-aligned in 30 characters, and names the far end's GUID
  before its LID (one line, split here)::

      0x98039b0300000001 "                        leaf01"      2    1[  ] ==( 4X  53.125 Gbps Active/  LinkUp)==>  \
      0xb83fd20300000011      1    1[  ] "gpu0001" ( )

  A GUID seen with two or more port numbers (on its own lines or as a far end) is a
  switch, since switch ports share the switch's port GUID and CA ports each have their
  own; consecutive CA lines of one description and distinct ports are one CA, as the
  grouped form prints it;
* ``-p``: ``(HOQ:18 VL_Stall:7)`` after the link; ``(Could be ...)`` hints after the far
  end; ``"Port not available"`` for a port that is up but whose far end was not
  discovered (read with no far end, and a warning);
* a width or speed printed as ``undefined (N)``: read as unknown (width 0, speed -1),
  with a warning; a numeric width or speed that no InfiniBand generation has is still
  an error;
* captured-terminal noise: CR LF read as LF; a byte order mark removed, shell prompts,
  a PuTTY log banner and the tools' standard-error lines skipped as
  :func:`fabric_engine.captured.noise` tells, each with a warning; other tools' output of the same
  terminal session (``ibswitches``, ``ibstat``, ``sminfo``, ...) skipped between nodes with one warning
  per tool naming its lines (:class:`fabric_engine.captured.Session`), an error inside a node's lines.

Warnings are dicts ``{"line", "text", "reason", "source"}``: :attr:`LinkInfo.warnings`,
also appended to the ``warnings`` list :func:`parse_iblinkinfo` and :func:`read_discovery`
take. Not read: the ``--diff`` form (its lines are prefixed with ``<`` and ``>``).

:func:`fabric_from_linkinfo` builds a :class:`~fabric_engine.topology.Fabric` of the
cabled ports (physical state ``LinkUp``), so a telemetry-fed fabric can be
discovered with ``iblinkinfo`` alone; the ``ibnetdiscover`` reader in
:mod:`fabric_engine.formats` gives the same fabric when that is preferred.
:func:`read_discovery` does both and is what a discovery must pass before it is stored.

Bounds (issue 14): a line is at most :data:`MAX_LINE_CHARS` characters; LIDs are
0..0xBFFF (0 only on ports without a LID), ports 1..254, names at most 256 characters
and at most 49,151 nodes and 1,048,576 port lines are read
(:mod:`fabric_engine.topology.limits`), all checked as the lines are read, so memory
stays proportional to the text. The line patterns have no ambiguous repetition, so
matching a line takes time linear in its length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..captured import BOM_REMOVED, Session
from ..captured import noise as noise_reason
from ..errors import FormatError, TopologyError
from ..topology import KIND_HOST, KIND_SWITCH, ROLES, SPEEDS, Fabric
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NAME_CHARS, MAX_NODE_PORTS, MAX_UNICAST_LID
from ..topology.speeds import WIDTHS
from .perfquery import make_warning

__all__ = ["LinkInfo", "parse_iblinkinfo", "fabric_from_linkinfo", "read_discovery", "SIGNALLING_GBPS",
           "MAX_LINE_CHARS"]

#: Longest line accepted (real lines are under 200 characters; names are at most 64 bytes).
MAX_LINE_CHARS = 4096

#: Lane signalling rate as iblinkinfo prints it -> speed code (index into ``SPEEDS``).
SIGNALLING_GBPS: dict[str, int] = {
    "2.5": 0, "5.0": 1, "10.0": 2, "10.3125": 3, "14.0625": 4, "25.78125": 5, "53.125": 6, "106.25": 7, "212.5": 8,
}
_FDR10 = SPEEDS.index("FDR10")
_NODE = re.compile(r"^(Switch|CA|Router): (?:(0x[0-9a-fA-F]+) )?(.*?):\s*$")
# Every repetition is delimited by a character the next element cannot start with, so no line backtracks
# more than a constant number of times per character.
_LINK = (r"==\(\s*(?:(?:(?P<width>\d+)X|(?P<width_undef>undefined \(\d+\)))\s+"
         r"(?:(?P<speed>[\d.]+)\s+Gbps(?P<fdr10>\s+\(?FDR10\)?)?"
         r"|(?P<speed_undef>undefined \(\d+\)|Extended speed|No Extended Speed))\s+)?"
         r"(?P<state>\w+|\?\(\d+\))/\s*(?P<phys>\w+|\?\(\d+\))\s*\)(?:\s*\(HOQ:\d+ VL_Stall:\d+\))?==>\s+")
_REMOTE = (r"(?:(?P<missing>\"Port not available\")|(?:(?P<rguid>0x[0-9a-fA-F]+)\s+)?"
           r"(?:(?P<rlid>\d+)\s+(?P<rport>\d+))?\[[^\]]*\]\s+\"(?P<rname>[^\"]*)\"\s*\([^\n]*\))\s*$")
_PORT = re.compile(r"^\s+(?:(?P<pguid>0x[0-9a-fA-F]+)\s+)?(?P<lid>\d+)\s+(?P<port>\d+)\[[^\]]*\]\s+" + _LINK + _REMOTE)
# Line mode (-l): 0x<port GUID> "<description, right-aligned in 30>" <lid> <port>[..] ==(...)==> <far end>
_LINE_PORT = re.compile(r"^(?P<guid>0x[0-9a-fA-F]+)\s+\"(?P<desc>[^\"]*)\"\s+(?P<lid>\d+)\s+(?P<port>\d+)\[[^\]]*\]\s+"
                        + _LINK + _REMOTE)


@dataclass(frozen=True, eq=False)
class LinkInfo:
    """One ``iblinkinfo`` run as arrays over its port lines (``[R]``) and nodes (``[N]``).

    Node arrays: ``node_kind`` int8 (``KIND_HOST``/``KIND_SWITCH``), ``node_name``
    object, ``node_guid`` uint64 (switch GUID; for a CA the GUID of its first listed port).
    Port-line arrays: ``node`` int32, ``lid`` int32, ``port`` int16, ``port_guid``
    uint64 (0 for switch ports), ``width`` int8 (lanes, 0 when down or unknown), ``speed``
    int8 (speed code, -1 when down or unknown), ``state`` and ``phys`` object (``"Active"``,
    ``"LinkUp"``, ...), ``remote_lid`` int32 and ``remote_port`` int16 (0 when none),
    ``remote_name`` object, ``line`` int32 (1-based line of the port line in ``source``).
    ``warnings``: the lines skipped, or read with something unknown, as dicts (module docstring).
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
    line: np.ndarray
    source: str = "iblinkinfo"
    warnings: tuple[dict, ...] = ()

    @property
    def up(self) -> np.ndarray:
        """Port lines whose physical link is up and cabled, bool ``[R]``."""
        return (self.phys == "LinkUp") & (self.remote_lid > 0)


def _guid(text: str, no: int, fail) -> int:
    value = int(text, 16)
    if not 0 < value < 1 << 64:
        fail(no, f"GUID {text[:24]} is not a non-zero 64-bit number")
    return value


def _link_fields(m: re.Match, no: int, line: str, fail, warn) -> tuple:
    """``(lid, port, width, speed, state, phys, rlid, rport, rname)`` of a port line, checked."""
    lid, port, rlid, rport = int(m["lid"]), int(m["port"]), int(m["rlid"] or 0), int(m["rport"] or 0)
    if lid > MAX_UNICAST_LID or rlid > MAX_UNICAST_LID:
        fail(no, f"LID {max(lid, rlid)} is above the highest unicast LID {MAX_UNICAST_LID} (0xBFFF)")
    if not 1 <= port <= MAX_NODE_PORTS or rport > MAX_NODE_PORTS:
        fail(no, f"port {port if not 1 <= port <= MAX_NODE_PORTS else rport} is outside 1..{MAX_NODE_PORTS}")
    rname = m["rname"] or ""
    if len(rname) > MAX_NAME_CHARS:
        fail(no, f"remote name longer than {MAX_NAME_CHARS} characters")
    width, speed = m["width"], m["speed"]
    if speed is not None and speed not in SIGNALLING_GBPS:
        fail(no, f"unknown lane speed {speed} Gbps")
    if width is not None and (len(width) > 2 or int(width) not in WIDTHS):
        fail(no, f"unknown link width {width}X")
    for printed, what in ((m["width_undef"], "link width"), (m["speed_undef"], "lane speed")):
        if printed is not None:
            warn(no, line, f"iblinkinfo printed the {what} as {printed!r}: read as unknown")
    if m["missing"] is not None:
        warn(no, line, "far end not discovered (\"Port not available\"): not read as a cable")
    code = _FDR10 if m["fdr10"] else SIGNALLING_GBPS[speed] if speed else -1
    return lid, port, int(width or 0), code, m["state"], m["phys"], rlid, rport, rname


class _Reader:
    """The state of one :func:`parse_iblinkinfo` pass: nodes, port rows, line-mode lines and warnings."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.kinds: list[int] = []
        self.names: list[str] = []
        self.guids: list[int] = []
        self.rows: list[tuple] = []
        self.flat: list[tuple] = []  # line mode: (guid, description, far-end guid, link fields, line number)
        self.warnings: list[dict] = []
        self.session = Session()  # other tools' lines of a captured terminal session
        self.last_record = 0  # line of the last node header or port line of the grouped form

    def fail(self, no: int, message: str):
        raise FormatError(self.source, no, message)

    def warn(self, no: int, line: str, reason: str) -> None:
        self.warnings.append(make_warning(self.source, no, line, reason))

    def read(self, no: int, line: str) -> None:
        """Read line ``no``: a port line, a node header, a line-mode port line, noise, or an error."""
        if len(line) > MAX_LINE_CHARS:
            self.fail(no, f"line of {len(line):,} characters; iblinkinfo lines are under {MAX_LINE_CHARS:,}")
        if not line.strip() or line.startswith("#"):
            return
        if m := _PORT.match(line):
            return self.port(no, line, m)
        if m := _NODE.match(line):
            return self.header(no, m)
        if m := _LINE_PORT.match(line):
            return self.line_port(no, line, m)
        reason = noise_reason(line)
        if reason is not None:
            return self.warn(no, line, reason)
        tool = self.session.foreign(no, line)
        if tool is None:
            self.fail(no, f"not an iblinkinfo line: {line.strip()[:80]!r}")
        if self.last_record == no - 1:
            self.fail(no, f"a line of {tool} output inside a node's port lines: {line.strip()[:80]!r}")

    def port(self, no: int, line: str, m: re.Match) -> None:
        if not self.names:
            self.fail(no, "port line before any 'Switch:' or 'CA:' header")
        if len(self.rows) >= MAX_FABRIC_PORTS:
            self.fail(no, f"more than {MAX_FABRIC_PORTS:,} port lines: more than one subnet holds")
        node = len(self.names) - 1
        pguid = _guid(m["pguid"], no, self.fail) if m["pguid"] is not None else 0
        if pguid and self.guids[node] == 0:
            self.guids[node] = pguid
        lid, port, *link = _link_fields(m, no, line, self.fail, self.warn)
        self.rows.append((node, lid, port, pguid, *link, no))
        self.last_record = no

    def header(self, no: int, m: re.Match) -> None:
        if self.flat:
            self.fail(no, "node header in line-mode (-l) output")
        kind, guid, name = m.groups()
        if kind == "Switch" and guid is None:
            self.fail(no, "switch header without GUID")
        guid = _guid(guid, no, self.fail) if guid is not None else 0
        if not name or len(name) > MAX_NAME_CHARS:
            self.fail(no, f"node name must have 1..{MAX_NAME_CHARS} characters")
        if len(self.names) >= MAX_UNICAST_LID:
            self.fail(no, f"more than {MAX_UNICAST_LID:,} nodes: more than one subnet holds")
        self.kinds.append(KIND_SWITCH if kind == "Switch" else KIND_HOST)
        self.names.append(name)
        self.guids.append(guid)
        self.last_record = no

    def line_port(self, no: int, line: str, m: re.Match) -> None:
        if self.names:
            self.fail(no, "line-mode (-l) port line in output with node headers")
        if len(self.flat) >= MAX_FABRIC_PORTS:
            self.fail(no, f"more than {MAX_FABRIC_PORTS:,} port lines: more than one subnet holds")
        desc = m["desc"].lstrip(" ")  # printed right-aligned in 30 characters
        if not desc or len(desc) > MAX_NAME_CHARS:
            self.fail(no, f"node name must have 1..{MAX_NAME_CHARS} characters")
        rguid = _guid(m["rguid"], no, self.fail) if m["rguid"] is not None else 0
        link = _link_fields(m, no, line, self.fail, self.warn)
        self.flat.append((_guid(m["guid"], no, self.fail), desc, rguid, link, no))

    def line_mode_nodes(self) -> None:
        """Nodes and port rows of the line-mode lines (see the module docstring)."""
        ports_of: dict[int, set[int]] = {}
        for guid, _, rguid, link, _ in self.flat:
            ports_of.setdefault(guid, set()).add(link[1])
            if rguid:
                ports_of.setdefault(rguid, set()).add(link[7])
        switch_node: dict[int, int] = {}
        last_ca, ca_ports = None, set()
        for guid, desc, _, (lid, port, *link), no in self.flat:
            is_switch = len(ports_of[guid]) > 1  # switch ports share the switch's GUID
            if is_switch:
                node, last_ca = switch_node.get(guid), None
            else:  # a CA port: the CA of the line before if it has this description and not this port yet
                continuing = last_ca is not None and self.names[last_ca] == desc and port not in ca_ports
                node = last_ca if continuing else None
            if node is None:
                if len(self.names) >= MAX_UNICAST_LID:
                    self.fail(no, f"more than {MAX_UNICAST_LID:,} nodes: more than one subnet holds")
                node = len(self.names)
                self.kinds.append(KIND_SWITCH if is_switch else KIND_HOST)
                self.names.append(desc)
                self.guids.append(guid)
                if is_switch:
                    switch_node[guid] = node
                else:
                    last_ca, ca_ports = node, set()
            if not is_switch:
                ca_ports.add(port)
            self.rows.append((node, lid, port, 0 if is_switch else guid, *link, no))

    def info(self) -> LinkInfo:
        if self.flat:
            self.line_mode_nodes()
        skipped = [make_warning(self.source, w["line"], w["text"], w["reason"]) for w in self.session.warnings()]
        if skipped:
            self.warnings = sorted(self.warnings + skipped, key=lambda w: w["line"])
        cols = list(zip(*self.rows, strict=True)) if self.rows else [()] * 12
        return LinkInfo(
            node_kind=np.array(self.kinds, dtype=np.int8), node_name=np.array(self.names, dtype=object),
            node_guid=np.array(self.guids, dtype=np.uint64), node=np.array(cols[0], dtype=np.int32),
            lid=np.array(cols[1], dtype=np.int32), port=np.array(cols[2], dtype=np.int16),
            port_guid=np.array(cols[3], dtype=np.uint64), width=np.array(cols[4], dtype=np.int8),
            speed=np.array(cols[5], dtype=np.int8), state=np.array(cols[6], dtype=object),
            phys=np.array(cols[7], dtype=object), remote_lid=np.array(cols[8], dtype=np.int32),
            remote_port=np.array(cols[9], dtype=np.int16), remote_name=np.array(cols[10], dtype=object),
            line=np.array(cols[11], dtype=np.int32), source=self.source, warnings=tuple(self.warnings),
        )


def parse_iblinkinfo(text: str, source: str = "iblinkinfo", warnings: list | None = None) -> LinkInfo:
    """Parse the output of ``iblinkinfo`` (grouped or ``-l``); raises :class:`FormatError` naming the line.

    ``warnings``, if given, gets the warnings of :attr:`LinkInfo.warnings` appended.

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
    reader = _Reader(source)
    for no, line in enumerate(text.split("\n"), 1):  # one pass; ~1 line per port
        if line.startswith("\ufeff"):  # saved by a Windows editor (one per file joined with cat)
            reader.warn(no, "", BOM_REMOVED)
            line = line[1:]
        reader.read(no, line.removesuffix("\r"))
    info = reader.info()
    if warnings is not None:
        warnings.extend(info.warnings)
    return info


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


def _unique_names(desc: np.ndarray, guid: np.ndarray) -> tuple[np.ndarray, dict[str, str]]:
    """Display names: a NodeDescription several nodes share (factory ``ubuntu mlx5_0``, ``localhost HCA-1``,
    unmanaged switches) gets each node's GUID appended, as the topology readers do; returns the names and
    ``{node index: NodeDescription}`` of the renamed nodes."""
    _, inverse, counts = np.unique(desc, return_inverse=True, return_counts=True)
    shared = np.flatnonzero(counts[inverse] > 1)
    if not shared.size:
        return desc, {}
    names = desc.astype(object)
    for i in shared.tolist():
        names[i] = f"{desc[i]} 0x{int(guid[i]):016x}"
    return names.astype(str), {str(i): str(desc[i]) for i in shared.tolist()}


def fabric_from_linkinfo(info: LinkInfo, name: str = "telemetry") -> Fabric:
    """The fabric of ``info``'s cabled ports; LIDs, GUIDs, widths and speeds as reported.

    Cables are the port lines whose physical state is ``LinkUp``, each counted once
    however many of its ends were listed. Nodes sharing a NodeDescription are shown as
    ``"<description> 0x<guid>"``, the description kept in ``meta["node_desc"]``. Raises :class:`FormatError` naming
    ``info.source`` (and the line, where one is to blame): no port lines, a far end
    whose LID no listed node owns, or a fabric :meth:`Fabric.build` refuses (LIDs
    not unique, a port used twice, ...).
    """
    source = info.source
    n = len(info.node_name)
    if not len(info.node):
        raise FormatError(source, None, "no port lines: nothing was discovered")
    nports = np.zeros(n, dtype=np.int64)
    np.maximum.at(nports, info.node, info.port.astype(np.int64))
    silent = np.flatnonzero(nports == 0)
    if silent.size:
        raise FormatError(source, None, f"node {info.node_name[silent[0]]!r} has no port lines")
    # LID -> node: switch LIDs and CA port LIDs (every LID was checked to be at most 0xBFFF when read).
    lid_node = np.full(MAX_UNICAST_LID + 1, -1, np.int64)
    lid_node[info.lid] = info.node
    up = np.flatnonzero(info.up)
    rnode = lid_node[info.remote_lid[up]]
    if (rnode < 0).any():
        i = int(up[np.flatnonzero(rnode < 0)[0]])
        raise FormatError(source, int(info.line[i]), f"{info.node_name[info.node[i]]} port {int(info.port[i])}: far "
                                                     f"end LID {int(info.remote_lid[i])} is not among the listed nodes")
    a_node, a_port = info.node[up].astype(np.int64), info.port[up].astype(np.int64)
    b_node, b_port = rnode, info.remote_port[up].astype(np.int64)
    unlisted = np.flatnonzero((b_port < 1) | (b_port > nports[b_node]))
    if unlisted.size:
        i = int(up[unlisted[0]])
        raise FormatError(source, int(info.line[i]), f"{info.node_name[info.node[i]]} port {int(info.port[i])}: far "
                                                     f"end {info.node_name[rnode[unlisted[0]]]} port "
                                                     f"{int(info.remote_port[i])} is outside its listed ports "
                                                     f"1..{int(nports[rnode[unlisted[0]]])}")
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
    names, renamed = _unique_names(info.node_name, info.node_guid)
    meta = {"source": "iblinkinfo", "link_state": info.state[sel].tolist()}
    if renamed:
        meta["node_desc"] = renamed
    try:
        return Fabric.build(
            name, kind=kind, node_name=names, guid=info.node_guid, lid=lid, nports=nports, role=role,
            tier=_tiers(kind, a_node, b_node), port_lid=port_lid, port_guid=port_guid,
            a_node=a_node, a_port=a_port, b_node=b_node, b_port=b_port,
            width=np.where(width > 0, width, 4), speed=np.where(speed >= 0, speed, SPEEDS.index("SDR")),
            meta=meta,
        )
    except TopologyError as exc:
        raise FormatError(source, None, str(exc)) from None


def read_discovery(text: str, source: str = "iblinkinfo", name: str = "telemetry",
                   warnings: list | None = None) -> Fabric:
    """The fabric of an ``iblinkinfo`` output, or :class:`FormatError` naming ``source`` and the line.

    What a discovery must pass before it is stored: parsing and building are both
    bounded (see the module docstring), so a bad discovery is refused at once
    instead of failing every time the engine rebuilds from it. ``warnings``, if given, gets
    the warnings of :func:`parse_iblinkinfo` appended.
    """
    return fabric_from_linkinfo(parse_iblinkinfo(text, source, warnings), name)
