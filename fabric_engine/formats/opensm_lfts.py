"""Read and write linear forwarding tables as OpenSM and ``ibroute`` print them.

``opensm-lfts.dump`` (written by OpenSM into ``OSM_CACHE_DIR``/``dump_files_dir``
when the routing log bit ``0x40`` of ``-D`` is on, ``osm_ucast_mgr.c``)::

    Unicast lids [0-14] of switch Lid 2 guid 0x0000000000200000 ('leaf01'):
    0x0001 001 # Channel Adapter portguid 0x0000000000100001: 'gpu0001'
    0x0002 000 # Switch portguid 0x0000000000200000: 'leaf01'
    14 lids dumped

``ibroute <switch-lid>`` (infiniband-diags) prints the same table as::

    Unicast lids [0x0-0xe] of switch Lid 2 guid 0x0000000000200000 (leaf01):
      Lid  Out   Destination
           Port     Info
    0x0001 001 : (Channel Adapter portguid 0x0000000000100001: 'gpu0001')
    14 valid lids dumped

:func:`write` returns the text of a :class:`Routing` as a string; :func:`write_to` streams it to a
binary file table by table and :func:`iter_lfts` yields it as bytes chunks (:mod:`.lfts_writer`).

:func:`read` takes either (several ``ibroute`` outputs may be concatenated) and maps
them onto a :class:`Fabric`: switches by node GUID (else by name), destination LIDs
through the port GUID in the comment to the fabric's own LID of that port (so a dump
of a subnet whose SM gave other LIDs still loads), else through the node name in the
comment, else by LID number. Entries the
fabric has no port for are counted in ``info["unmapped_entries"]``.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import FormatError
from ..routing.tables import NO_PATH, Routing
from ..topology import KIND_HOST, ROLE_AGGREGATION, Fabric
from ._common import AN_DESCRIPTION, HCA_SUFFIX
from .lfts_writer import ENCODING, iter_lfts, write_to

__all__ = ["read", "write", "write_to", "iter_lfts", "detect"]

_HEADER = re.compile(
    r"^Unicast lids \[(?P<lo>0x[0-9a-fA-F]{1,8}|\d{1,8})-(?P<hi>0x[0-9a-fA-F]{1,8}|\d{1,8})\] of switch "
    r"Lid (?P<lid>\d{1,8}) guid (?P<guid>0x[0-9a-fA-F]{1,16}) \((?P<q>'?)(?P<name>.*)(?P=q)\):\s*$")
_ENTRY = re.compile(r"^(?P<lid>0x[0-9a-fA-F]{1,8})\s+(?P<port>\d{1,8})(?:\s*[#:](?P<rest>.*))?$")
_PGUID = re.compile(r"portguid\s+(0x[0-9a-fA-F]{1,16})\b")
_NAME = re.compile(r"'(.*)'")
_FOOTER = re.compile(r"^(?P<n>\d{1,8}) (?P<valid>valid )?lids dumped\s*$")
_SKIP = re.compile(r"^\s*(?:Lid\s+Out\s+Destination|Port\s+Info)\s*$")


def detect(text: str) -> bool:
    """True if ``text`` looks like an LFT dump or ``ibroute`` output."""
    return any(_HEADER.match(line) for line in text.splitlines()[:50])


def _lookup_switch(fabric: Fabric, guid: int, name: str, source: str, line: int) -> int:
    """Switch index by node GUID, else by name (a GUID may belong to another node in a foreign dump)."""
    for key in (guid, name, HCA_SUFFIX.sub("", name)):
        try:
            node = fabric.node(key)
        except KeyError:
            continue
        if key == guid and name and not _same_name(fabric, node, name):
            continue
        if fabric.switch_index[node] >= 0:
            return int(fabric.switch_index[node])
    raise FormatError(source, line, f"switch {name!r} (guid 0x{guid:016x}) is not a switch of fabric {fabric.name!r}")


def _same_name(fabric: Fabric, node: int, theirs: str) -> bool:
    """Whether NodeDescription ``theirs`` names ``node``: its name, its name made unique by its GUID
    (``"<desc> 0x<guid>"``, as factory-named HCAs are), its kept description, or the one description
    all SHARP Aggregation Nodes share."""
    ours = str(fabric.node_name[node])
    base = ours.removesuffix(f" 0x{int(fabric.guid[node]):016x}")
    kept = (fabric.meta.get("node_desc") or {}).get(str(node))
    if theirs == kept or theirs == AN_DESCRIPTION and fabric.role[node] == ROLE_AGGREGATION:
        return True
    return bool({ours, base} & {theirs, HCA_SUFFIX.sub("", theirs), " ".join(theirs.split())})


def _lid_by_name(fabric: Fabric, name: str) -> int | None:
    """LID of the node called ``name`` (a host's first port), trying without an ``HCA-n`` suffix."""
    for key in (name, HCA_SUFFIX.sub("", name)):
        try:
            node = fabric.node(key)
        except KeyError:
            continue
        host = fabric.kind[node] == KIND_HOST
        return int(fabric.port_lid[fabric.port_offset[node]]) if host else int(fabric.lid[node])
    return None


def _number(text: str) -> int:
    """A header bound as OpenSM or ibroute print it: ``0x`` hex, else decimal (a leading zero is not octal)."""
    return int(text, 16) if text[:2] in ("0x", "0X") else int(text, 10)


def read(text: str, fabric: Fabric, source: str = "<lfts>", complete: bool = False) -> Routing:
    """Load the LFTs in ``text`` (OpenSM dump or ``ibroute`` output) as a :class:`Routing` of ``fabric``.

    The text must be whole: every table ends with its ``N lids dumped`` line (a file cut short is
    refused, naming the line of the table left open), every entry has its three-digit port (a
    partial last line is refused), LIDs stay inside the header's range and appear once. With
    ``complete``, every switch of ``fabric`` must have a table; otherwise switches without one keep
    NO_PATH everywhere and are listed in ``info["switches_missing"]``.
    """
    f = fabric
    lft = np.full((f.num_switches, f.max_lid + 1), NO_PATH, dtype=np.uint8)
    seen = np.zeros(f.num_switches, dtype=bool)
    # Port GUID -> our LID of that port (host ports; a switch's GUID -> its LID).
    host_slots = np.flatnonzero(f.kind[f.port_node] == KIND_HOST)
    guid_to_lid = {int(g): (int(lid), int(n)) for g, lid, n in
                   zip(f.port_guid[host_slots], f.port_lid[host_slots], f.port_node[host_slots], strict=True)}
    guid_to_lid.update({int(f.guid[n]): (int(f.lid[n]), int(n)) for n in f.switches})
    cur = -1
    table: _Table | None = None
    unmapped = 0
    rows: list[int] = []
    lids: list[int] = []
    ports: list[int] = []
    no = 0
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or _SKIP.match(line):
            continue
        m = _FOOTER.match(stripped)
        if m:
            if table is None:
                raise FormatError(source, no, f"{stripped!r} outside a table")
            table.close(int(m["n"]), bool(m["valid"]), source, no)
            table = None
            continue
        m = _HEADER.match(line)
        if m:
            if table is not None:
                raise FormatError(source, no, f"the table of switch {table.name!r} (line {table.line}) ends without "
                                              "its 'lids dumped' line")
            cur = _lookup_switch(f, int(m["guid"], 16), m["name"], source, no)
            if seen[cur]:
                raise FormatError(source, no, f"switch {m['name']!r} has a second table")
            seen[cur] = True
            table = _Table(m["name"], no, _number(m["lo"]), _number(m["hi"]))
            continue
        e = _ENTRY.match(stripped)
        if not e:
            raise FormatError(source, no, f"cannot parse {stripped[:80]!r} (expected 'LID PORT # ...')")
        if table is None:
            raise FormatError(source, no, "LFT entry outside a 'Unicast lids ... of switch' table")
        lid, port_text = int(e["lid"], 16), e["port"]
        if len(port_text) != 3:
            raise FormatError(source, no, f"partial entry {stripped[:80]!r}: the port has {len(port_text)} digit(s), "
                                          "OpenSM and ibroute print 3")
        port = int(port_text)
        table.add(lid, source, no)
        rest = e["rest"] or ""
        pg, nm = _PGUID.search(rest), _NAME.search(rest)
        pguid, ename = (int(pg.group(1), 16) if pg else None), (nm.group(1) if nm else None)
        node = int(f.switches[cur])
        if port > int(f.nports[node]) and port != NO_PATH:
            raise FormatError(source, no, f"port {port} is outside 0..{int(f.nports[node])} of "
                                          f"{f.node_name[node]}")
        hit = guid_to_lid.get(pguid) if pguid is not None else None
        # Trust the GUID only when the name in the comment (if any) agrees with it.
        ours = hit[0] if hit and (not ename or _same_name(f, hit[1], ename)) else None
        if ours is None and ename:
            ours = _lid_by_name(f, ename)
        if ours is None and pguid is None and not ename and lid <= f.max_lid:
            ours = lid
        if ours is None:
            unmapped += 1
            continue
        rows.append(cur)
        lids.append(ours)
        ports.append(port)
    if table is not None:
        raise FormatError(source, no, f"the file ends inside the table of switch {table.name!r} (line {table.line}): "
                                      "truncated (no 'lids dumped' line)")
    if not seen.any():
        raise FormatError(source, None, "no 'Unicast lids ... of switch' table found")
    missing = [str(f.node_name[f.switches[i]]) for i in np.flatnonzero(~seen)]
    if complete and missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise FormatError(source, None, f"no table for {len(missing)} of the {f.num_switches} switches of "
                                        f"{f.name!r}: {shown}")
    lft[np.asarray(rows, dtype=np.int64), np.asarray(lids, dtype=np.int64)] = np.asarray(ports, dtype=np.uint8)
    return Routing(f, lft, "opensm-dump", {"source": source, "unmapped_entries": unmapped,
                                           "switches_missing": missing})


class _Table:
    """One switch's table while it is read: its range, the LIDs seen, the line it started on."""

    def __init__(self, name: str, line: int, lo: int, hi: int) -> None:
        self.name, self.line, self.lo, self.hi = name, line, lo, hi
        self.lids: set[int] = set()

    def add(self, lid: int, source: str, no: int) -> None:
        if not self.lo <= lid <= self.hi:
            raise FormatError(source, no, f"LID {lid} outside the table's range [{self.lo}-{self.hi}]")
        if lid in self.lids:
            raise FormatError(source, no, f"LID {lid} appears twice in the table of switch {self.name!r}")
        self.lids.add(lid)

    def close(self, n: int, valid: bool, source: str, no: int) -> None:
        """Check the footer: ``ibroute`` counts the entries; OpenSM prints the top of the range."""
        ok = n == len(self.lids) if valid else n in (len(self.lids), self.hi)
        if not ok:
            raise FormatError(source, no, f"the table of switch {self.name!r} (line {self.line}) says {n} lids dumped "
                                          f"but has {len(self.lids)} entries: truncated or edited")


def write(routing: Routing, style: str = "opensm") -> str:
    """The LFTs of ``routing`` as ``opensm-lfts.dump`` (``style="opensm"``) or ``ibroute`` output.

    Only routed entries are written (NO_PATH entries are left out, as both tools do). The whole
    text as one string, for small fabrics; large dumps go to a file with :func:`write_to`, which
    streams the same bytes table by table.

    >>> from fabric_engine.routing import route
    >>> from fabric_engine.topology.generate import fat_tree
    >>> f = fat_tree(hosts=8, radix=4)
    >>> text = write(route(f, "minhop"))
    >>> read(text, f).lft.tolist() == route(f, "minhop").lft.tolist()
    True
    """
    return b"".join(iter_lfts(routing, style)).decode(*ENCODING)
