"""``ibdiagnet2.db_csv``: ibdiagnet's database, CSV tables between ``START_<NAME>`` and ``END_<NAME>`` lines.

Each section is a header line of column names, then one row per record. Columns are found by name
(case-insensitively, so versions that add, drop or reorder columns read alike); numbers are decimal
or ``0x`` hex. The sections read (column names as ibdiagnet writes them, see :mod:`.ibdiagnet`):

* ``NODES``: ``NodeDesc``, ``NumPorts``, ``NodeType`` (1 CA, 2 switch, 3 router), ``SystemImageGUID``,
  ``NodeGUID``, ``PortGUID``;
* ``PORTS``: ``NodeGuid``, ``PortGuid``, ``PortNum``, ``LID``, ``LinkWidthActv``, ``LinkSpeedActv`` (ibdm's
  combined speed value) and, where present, ``LinkSpeedExtActv`` (PortInfo's extended speed);
* ``LINKS``: ``NodeGuid1``, ``PortNum1``, ``NodeGuid2``, ``PortNum2``, one row per cable;
* ``PM_INFO`` (counters, :func:`counters_from_db_csv`): ``NodeGUID``, ``PortNumber`` and the counters.

Other sections are skipped without being parsed. A section without its ``END_`` line (a truncated
file), a row with fewer fields than its header, a number that is not one, a GUID or port without a
record are :class:`FormatError` naming the line.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError
from ..telemetry.counters import CounterSamples
from ..topology import KIND_HOST, KIND_SWITCH, Fabric
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NAME_CHARS, MAX_NODE_PORTS, MAX_UNICAST_LID
from .ibdiagnet_fabric import EXT2_SPEED, EXT_SPEED, LINK_SPEED, LINK_WIDTH, Parts, assemble, dedupe_links
from .ibdiagnet_pm import counter_column, samples_from_columns

__all__ = ["Section", "sections", "read_db_csv", "counters_from_db_csv"]

_NO_LID = 0xFFFF  # the permissive LID: none assigned


@dataclass
class Section:
    """One CSV table: its ``header``, ``rows`` and the file line of every row (``lines``)."""

    name: str
    line: int
    header: list[str]
    rows: list[list[str]]
    lines: np.ndarray
    source: str

    def col(self, *names: str, required: bool = True) -> list[str] | None:
        """The stripped values of the first column named any of ``names`` (case-insensitive)."""
        wanted = [n.lower() for n in names]
        index = {h.strip().lower(): i for i, h in enumerate(self.header)}
        for n in wanted:
            if n in index:
                i = index[n]
                return [r[i].strip() for r in self.rows]
        if required:
            raise FormatError(self.source, self.line + 1, f"section {self.name} has no column {names[0]}")
        return None

    def ints(self, values: Sequence[str], what: str, lo: int = 0, hi: int = (1 << 64) - 1,
             dtype=np.int64) -> np.ndarray:
        """``values`` (decimal or ``0x`` hex) as an array, each checked to lie in ``lo..hi``."""
        try:
            out = [int(v, 16) if v[:2] in ("0x", "0X") else int(v) for v in values]
        except ValueError:
            i = next(i for i, v in enumerate(values) if not _is_int(v))
            raise FormatError(self.source, int(self.lines[i]), f"{what}: {values[i][:40]!r} is not a number") from None
        if out and (min(out) < lo or max(out) > hi):
            i = next(i for i, v in enumerate(out) if not lo <= v <= hi)
            raise FormatError(self.source, int(self.lines[i]), f"{what} {values[i][:40]} is outside {lo}..{hi}")
        return np.array(out, dtype=dtype) if out else np.zeros(0, dtype=dtype)


def _is_int(v: str) -> bool:
    try:
        int(v, 16) if v[:2] in ("0x", "0X") else int(v)
    except ValueError:
        return False
    return True


def sections(text: str, source: str, wanted: set[str]) -> dict[str, Section]:
    """The ``wanted`` sections of ``text``; every section must end (``END_<NAME>``), none may repeat."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    found: dict[str, Section] = {}
    pos, line = 0, 1  # ``line`` is the line number at ``pos``
    while True:
        i = text.find("START_", pos)
        if i < 0:
            return found
        if i and text[i - 1] != "\n":
            pos = i + 6
            continue
        eol = text.find("\n", i)
        eol = len(text) if eol < 0 else eol
        name = text[i + 6:eol].strip()
        start = line + text.count("\n", pos, i)
        if not name.replace("_", "").isalnum():
            pos, line = eol, start
            continue
        marker = "\nEND_" + name
        j = text.find(marker, eol - 1)
        while j >= 0 and text[j + len(marker):j + len(marker) + 1] not in ("", "\n", " ", "\t"):
            j = text.find(marker, j + 1)
        if j < 0:
            last = text.count("\n", i) + start - (1 if text.endswith("\n") else 0)
            raise FormatError(source, last, f"file ends inside section {name} (started on line {start}) without "
                                            f"END_{name}: truncated file?")
        if name in wanted:
            if name in found:
                raise FormatError(source, start, f"section {name} appears twice (first on line {found[name].line})")
            body = text[eol + 1:j + 1].split("\n")[:-1] if j + 1 > eol + 1 else []
            found[name] = _table(name, start, body, source)
        pos, line = j + 1, start + text.count("\n", i, j + 1)


def _table(name: str, start: int, body: list[str], source: str) -> Section:
    if not body or not body[0].strip():
        raise FormatError(source, start + 1, f"section {name} has no header line")
    reader = csv.reader(body, skipinitialspace=True)
    rows: list[list[str]] = []
    ends: list[int] = []  # a record's line, counted from the header's (1)
    try:
        header = [h.strip() for h in next(reader)]
        before = reader.line_num
        for row in reader:
            if reader.line_num != before + 1:  # ibdiagnet writes one record per line
                raise FormatError(source, start + before + 1, f"unbalanced quote: this row of section {name} runs "
                                                              f"over {reader.line_num - before} lines")
            before = reader.line_num
            if row:
                rows.append(row)
                ends.append(before)
    except csv.Error as exc:
        raise FormatError(source, start + reader.line_num, f"section {name}: {exc}") from None
    lines = np.array(ends, dtype=np.int64) + start
    short = np.flatnonzero(np.fromiter(map(len, rows), dtype=np.int64, count=len(rows)) < len(header))
    if short.size:
        k = int(short[0])
        raise FormatError(source, int(lines[k]), f"row of section {name} has {len(rows[k])} fields, its header "
                                                 f"{len(header)} (truncated or malformed row)")
    return Section(name, start, header, rows, lines, source)


def _node_table(sec: Section) -> tuple[np.ndarray, ...]:
    """NODES as arrays: kind, nports, guid, sysimg, descriptions (checked), sort order of the GUIDs."""
    if len(sec.rows) > MAX_UNICAST_LID:
        raise FormatError(sec.source, int(sec.lines[MAX_UNICAST_LID]),
                          f"more than {MAX_UNICAST_LID:,} nodes: one subnet has {MAX_UNICAST_LID:,} unicast LIDs")
    desc = sec.col("NodeDesc")
    long = next((i for i, d in enumerate(desc) if len(d) > MAX_NAME_CHARS), None)
    if long is not None:
        raise FormatError(sec.source, int(sec.lines[long]), f"node description longer than {MAX_NAME_CHARS} characters")
    nports = sec.ints(sec.col("NumPorts"), "NumPorts", 1, MAX_NODE_PORTS)
    over = np.flatnonzero(np.cumsum(nports) > MAX_FABRIC_PORTS)
    if over.size:
        raise FormatError(sec.source, int(sec.lines[over[0]]),
                          f"more than {MAX_FABRIC_PORTS:,} ports in all: more than one subnet's fabric has")
    ntype = sec.ints(sec.col("NodeType"), "NodeType", 1, 3)
    if (ntype == 3).any():
        raise FormatError(sec.source, int(sec.lines[np.flatnonzero(ntype == 3)[0]]),
                          "router nodes (NodeType 3) are not supported")
    kind = np.where(ntype == 2, KIND_SWITCH, KIND_HOST).astype(np.int8)
    guid = sec.ints(sec.col("NodeGUID"), "NodeGUID", 1, dtype=np.uint64)
    sysimg = sec.ints(sec.col("SystemImageGUID"), "SystemImageGUID", dtype=np.uint64)
    order = np.argsort(guid, kind="stable")
    dup = np.flatnonzero(guid[order][1:] == guid[order][:-1])
    if dup.size:
        i, j = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
        raise FormatError(sec.source, int(sec.lines[j]), f"duplicate NodeGUID 0x{int(guid[j]):016x} (also on "
                                                         f"line {int(sec.lines[i])})")
    return kind, nports, guid, sysimg, desc, order


def _lookup(guid: np.ndarray, order: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Node index of every GUID in ``values`` (-1 where none)."""
    sorted_guid = guid[order]
    pos = np.minimum(np.searchsorted(sorted_guid, values), max(len(guid) - 1, 0))
    found = sorted_guid[pos] == values if len(guid) else np.zeros(len(values), bool)
    return np.where(found, order[pos], -1)


def _port_table(sec: Section, guid: np.ndarray, order: np.ndarray, nports: np.ndarray) -> tuple[np.ndarray, ...]:
    """PORTS: node, port number, LID, port GUID, row key, sorted order of the keys."""
    node = _lookup(guid, order, sec.ints(sec.col("NodeGuid"), "NodeGuid", dtype=np.uint64))
    if (node < 0).any():
        i = int(np.flatnonzero(node < 0)[0])
        raise FormatError(sec.source, int(sec.lines[i]), "port of a node that has no NODES record")
    port = sec.ints(sec.col("PortNum"), "PortNum", 0, MAX_NODE_PORTS)
    if (port > nports[node]).any():
        i = int(np.flatnonzero(port > nports[node])[0])
        raise FormatError(sec.source, int(sec.lines[i]), f"port {int(port[i])} is above the node's "
                                                         f"{int(nports[node[i]])} ports")
    lid = sec.ints(sec.col("LID"), "LID", 0, 0xFFFF)
    lid[lid == _NO_LID] = 0
    if (lid > MAX_UNICAST_LID).any():
        i = int(np.flatnonzero(lid > MAX_UNICAST_LID)[0])
        raise FormatError(sec.source, int(sec.lines[i]), f"LID {int(lid[i])} is above the highest unicast LID "
                                                         f"{MAX_UNICAST_LID} (0xBFFF)")
    pg = sec.col("PortGuid", "PortGUID", required=False)
    pguid = sec.ints(pg, "PortGuid", dtype=np.uint64) if pg is not None else np.zeros(len(node), np.uint64)
    key = node * 256 + port
    korder = np.argsort(key, kind="stable")
    dup = np.flatnonzero(key[korder][1:] == key[korder][:-1])
    if dup.size:
        j = max(int(korder[dup[0]]), int(korder[dup[0] + 1]))
        raise FormatError(sec.source, int(sec.lines[j]), f"port {int(port[j])} of this node has two PORTS rows")
    return node, port, lid, pguid, key, korder


def _switch_lids(kind: np.ndarray, node: np.ndarray, port: np.ndarray, lid: np.ndarray) -> np.ndarray:
    """LID of every switch: its port 0's, else the highest its other ports report (0 unknown)."""
    out = np.zeros(len(kind), dtype=np.int64)
    sw = kind[node] == KIND_SWITCH
    np.maximum.at(out, node[sw], lid[sw])
    zero = sw & (port == 0) & (lid > 0)
    out[node[zero]] = lid[zero]
    return out


def _rates(sec: Section, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Width (lanes, 0 unknown) and speed code (-1 unknown) of the PORTS rows ``rows``."""
    sub = Section(sec.name, sec.line, sec.header, [sec.rows[i] for i in rows.tolist()], sec.lines[rows], sec.source)
    w = sub.ints(sub.col("LinkWidthActv", "LinkWidthActive"), "LinkWidthActv")
    s = sub.ints(sub.col("LinkSpeedActv", "LinkSpeedActive"), "LinkSpeedActv")
    width = np.array([LINK_WIDTH.get(v, 0) for v in w.tolist()], dtype=np.int64)
    speed = np.array([LINK_SPEED.get(v, -1) for v in s.tolist()], dtype=np.int64)
    for names, table in ((("LinkSpeedExtActv", "LinkSpeedExtActive"), EXT_SPEED),
                         (("LinkSpeedExt2Actv", "LinkSpeedExtActv2", "LinkSpeedExtActive2"), EXT2_SPEED)):
        col = sub.col(*names, required=False)
        if col is not None:
            ext = sub.ints(["0" if v in ("", "N/A", "NA") else v for v in col], names[0])
            hit = np.array([table.get(v, -1) for v in ext.tolist()], dtype=np.int64)
            speed = np.where(hit >= 0, hit, speed)
    return width, speed


def read_db_csv(text: str, source: str = "ibdiagnet2.db_csv", name: str = "fabric") -> Fabric:
    """The fabric of an ``ibdiagnet2.db_csv`` (``NODES``, ``PORTS`` and ``LINKS`` sections)."""
    found = sections(text, source, {"NODES", "PORTS", "LINKS"})
    for need in ("NODES", "PORTS", "LINKS"):
        if need not in found:
            raise FormatError(source, None, f"no START_{need} section: not an ibdiagnet2.db_csv, or ibdiagnet ran "
                                            f"with that section disabled")
    nodes, ports, links = found["NODES"], found["PORTS"], found["LINKS"]
    kind, nports, guid, sysimg, desc, order = _node_table(nodes)
    if not len(kind):
        raise FormatError(source, nodes.line, "section NODES has no rows")
    p_node, p_port, p_lid, p_guid, p_key, p_order = _port_table(ports, guid, order, nports)
    ends = []
    for g, n in (("NodeGuid1", "PortNum1"), ("NodeGuid2", "PortNum2")):
        nd = _lookup(guid, order, links.ints(links.col(g), g, dtype=np.uint64))
        if (nd < 0).any():
            i = int(np.flatnonzero(nd < 0)[0])
            raise FormatError(source, int(links.lines[i]), f"{g} {links.col(g)[i]} has no NODES record")
        pt = links.ints(links.col(n), n, 1, MAX_NODE_PORTS)
        key = nd * 256 + pt
        pos = np.minimum(np.searchsorted(p_key[p_order], key), max(len(p_key) - 1, 0))
        row = p_order[pos] if len(p_key) else pos
        missing = np.flatnonzero(p_key[row] != key) if len(p_key) else np.arange(len(key))
        if missing.size:
            i = int(missing[0])
            raise FormatError(source, int(links.lines[i]), f"port {int(pt[i])} of {desc[int(nd[i])]!r} has no "
                                                           f"PORTS row")
        ends.append((nd, pt, row))
    (a, ap, ra), (b, bp, rb) = ends
    wa, sa = _rates(ports, ra)
    wb, sb = _rates(ports, rb)
    width = np.where(wa == 0, wb, np.where(wb == 0, wa, np.minimum(wa, wb)))
    speed = np.where(sa < 0, sb, np.where(sb < 0, sa, np.minimum(sa, sb)))
    for bad, what in ((width == 0, "width"), (speed < 0, "speed")):
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise FormatError(source, int(ports.lines[ra[i]]), f"unknown link {what} at both ends of the cable on "
                                                               f"line {int(links.lines[i])}")
    ends_differ = (wa != wb) & (wa > 0) & (wb > 0) | (sa != sb) & (sa >= 0) & (sb >= 0)
    differ = int(np.count_nonzero(ends_differ))
    a, ap, b, bp, width, speed, line, twice, trained = dedupe_links(a, ap, b, bp, width, speed, links.lines,
                                                                    ends_differ)
    host = kind[p_node] == KIND_HOST
    meta = {"rate_mismatches": differ + twice} if differ + twice else {}
    parts = Parts(kind=kind, nports=nports, guid=guid, sysimg=sysimg, desc=desc,
                  lid=_switch_lids(kind, p_node, p_port, p_lid),
                  hp_node=p_node[host & (p_port > 0)], hp_port=p_port[host & (p_port > 0)],
                  hp_lid=p_lid[host & (p_port > 0)], hp_guid=p_guid[host & (p_port > 0)],
                  a_node=a, a_port=ap, b_node=b, b_port=bp, width=width, speed=speed, line=line, meta=meta,
                  trained_down=trained)
    return assemble(parts, source, "ibdiagnet_db_csv", name)


def counters_from_db_csv(text: str, source: str = "ibdiagnet2.db_csv", t: float = 0.0) -> CounterSamples:
    """Port counters of the ``PM_INFO`` section, keyed by LID (the switch LID for switch ports) and port.

    ``t`` is when the sweep ran (seconds since the epoch): the file carries no time.
    """
    found = sections(text, source, {"NODES", "PORTS", "PM_INFO"})
    if "PM_INFO" not in found:
        raise FormatError(source, None, "no START_PM_INFO section: ibdiagnet ran without port counters")
    for need in ("NODES", "PORTS"):
        if need not in found:
            raise FormatError(source, None, f"no START_{need} section: the counters' LIDs cannot be told")
    kind, nports, guid, sysimg, desc, order = _node_table(found["NODES"])
    p_node, p_port, p_lid, _, p_key, p_order = _port_table(found["PORTS"], guid, order, nports)
    pm = found["PM_INFO"]
    node = _lookup(guid, order, pm.ints(pm.col("NodeGUID", "NodeGuid"), "NodeGUID", dtype=np.uint64))
    port = pm.ints(pm.col("PortNumber", "PortNum"), "PortNumber", 0, MAX_NODE_PORTS)
    sw_lid = _switch_lids(kind, p_node, p_port, p_lid)
    key = node * 256 + port
    pos = np.minimum(np.searchsorted(p_key[p_order], key), max(len(p_key) - 1, 0))
    row = p_order[pos] if len(p_key) else pos
    has_row = (p_key[row] == key) if len(p_key) else np.zeros(len(key), bool)
    lid = np.where(kind[node] == KIND_SWITCH, sw_lid[node], np.where(has_row, p_lid[row] if len(p_key) else 0, 0))
    bad = np.flatnonzero((node < 0) | (lid <= 0))
    if bad.size:
        i = int(bad[0])
        why = "a node that has no NODES record" if node[i] < 0 else "a port without a LID in PORTS"
        raise FormatError(source, int(pm.lines[i]), f"counters of {why}")
    columns = {h: (pm.col(h), pm.lines) for h in pm.header if counter_column(h) is not None}
    return samples_from_columns(columns, lid, port, pm.lines, source, t)
