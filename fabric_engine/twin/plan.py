"""The designed cabling of a fabric and how the discovered fabric differs from it.

A plan is read from

* a CSV file, one cable per line: ``node,port,remote node,remote port[,speed,width]``
  (an optional header line naming the columns; ``#`` comments; fields may be quoted;
  ``speed`` is a lane speed name such as ``HDR`` or ``NDR``, ``width`` ``4x`` or ``4``);
* or a topology file of the design (``ibnetdiscover`` output, an ibsim net file or
  ibweb's JSON: :func:`fabric_engine.formats.read`), whose cables, widths and speeds
  are the plan.

:func:`compare_plan` matches plan nodes to discovered nodes by name (a node
description; ``gpu0001`` also matches the HCA ``"gpu0001 HCA-1"`` when that is the
host's only one) or by node GUID written ``0x...``, and reports, like UFM's network
design check:

* ``missing``: a planned cable neither of whose ports is cabled now (or whose node is absent);
* ``miswired``: a planned port cabled to another peer than planned;
* ``extra``: a discovered cable neither of whose ports the plan cables;
* ``wrong_speed`` / ``wrong_width``: a cable as planned but at another lane speed or width.

Sizes are checked before anything is built (:data:`MAX_PLAN_BYTES`, :data:`MAX_PLAN_CABLES`,
name lengths); a bad line is an error naming ``file:line``; nothing is half-read.

>>> plan = read_plan_csv("leaf01,1,gpu0001,1,NDR,4x\\nleaf01,2,gpu0002,1\\n", "plan.csv")
>>> plan.num_cables, plan.speed.tolist(), plan.width.tolist()
(2, [7, -1], [4, 0])
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError
from ..formats._common import HCA_SUFFIX
from ..topology import SPEEDS, WIDTHS, Fabric

__all__ = ["Plan", "PlanReport", "read_plan", "read_plan_csv", "plan_from_fabric", "compare_plan",
           "MAX_PLAN_BYTES", "MAX_PLAN_CABLES", "MAX_NAME_CHARS", "ISSUE_KINDS"]

#: Largest plan file read (a 32,768-GPU fabric has about 100,000 cables: ~6 MB of CSV).
MAX_PLAN_BYTES = 64 << 20
#: Most cables in a plan.
MAX_PLAN_CABLES = 1_000_000
#: Longest node name (a NodeDescription is 64 bytes).
MAX_NAME_CHARS = 64
MAX_PORT = 255
#: Kinds of difference, in report order.
ISSUE_KINDS = ("missing", "miswired", "extra", "wrong_speed", "wrong_width")
_GUID = re.compile(r"^0x[0-9a-fA-F]{1,16}$")


@dataclass(frozen=True, eq=False)
class Plan:
    """Planned cables as parallel arrays ``[C]``: ``a_name``, ``b_name`` object; ``a_port``, ``b_port`` int16;
    ``speed`` int8 (code, -1 unspecified); ``width`` int8 (lanes, 0 unspecified); ``line`` int32 (source line)."""

    source: str
    a_name: np.ndarray
    a_port: np.ndarray
    b_name: np.ndarray
    b_port: np.ndarray
    speed: np.ndarray
    width: np.ndarray
    line: np.ndarray

    @property
    def num_cables(self) -> int:
        return len(self.a_name)

    def nodes(self) -> list[str]:
        """Every node name of the plan, sorted."""
        return sorted(set(self.a_name.tolist()) | set(self.b_name.tolist()))


def _decode(data: str | bytes, source: str) -> str:
    if len(data) > MAX_PLAN_BYTES:
        raise FormatError(source, None, f"is {len(data)} bytes, more than the limit of {MAX_PLAN_BYTES}")
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise FormatError(source, data[:exc.start].count(b"\n") + 1, "not UTF-8 text") from None
    return data


def _name(value: str, source: str, line: int, what: str) -> str:
    name = value.strip()
    if not name:
        raise FormatError(source, line, f"{what} is empty")
    if len(name) > MAX_NAME_CHARS:
        raise FormatError(source, line, f"{what} {name[:20]!r}...: {len(name)} characters, more than {MAX_NAME_CHARS}")
    return name


def _port(value: str, source: str, line: int, what: str) -> int:
    v = value.strip()
    if not v.isdigit() or not 1 <= int(v) <= MAX_PORT:
        raise FormatError(source, line, f"{what} {v!r} is not a port number 1..{MAX_PORT}")
    return int(v)


def _speed(value: str, source: str, line: int) -> int:
    v = value.strip().upper()
    if not v:
        return -1
    if v not in SPEEDS:
        raise FormatError(source, line, f"speed {value.strip()!r} is not one of {', '.join(SPEEDS)}")
    return SPEEDS.index(v)


def _width(value: str, source: str, line: int) -> int:
    v = value.strip().lower().removesuffix("x")
    if not v:
        return 0
    if not v.isdigit() or int(v) not in WIDTHS:
        raise FormatError(source, line, f"width {value.strip()!r} is not one of {', '.join(f'{w}x' for w in WIDTHS)}")
    return int(v)


def _is_header(fields: list[str]) -> bool:
    return len(fields) >= 4 and not fields[1].strip().isdigit() and "port" in fields[1].lower()


def read_plan_csv(data: str | bytes, source: str = "<plan.csv>") -> Plan:
    """A :class:`Plan` from CSV text (see the module docstring); raises :class:`FormatError` naming ``source:line``."""
    text = _decode(data, source)
    lines = text.splitlines()
    if len(lines) > MAX_PLAN_CABLES + 1000:
        raise FormatError(source, None, f"{len(lines)} lines, more than the limit of {MAX_PLAN_CABLES} cables")
    a_name, a_port, b_name, b_port, speed, width, where = [], [], [], [], [], [], []
    used: dict[tuple[str, int], int] = {}
    first = True
    for no, raw in enumerate(lines, 1):  # one pass over the lines of the file
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            fields = next(csv.reader([raw], skipinitialspace=True))
        except csv.Error as exc:
            raise FormatError(source, no, f"not a CSV line: {exc}") from None
        if first and _is_header(fields):
            first = False
            continue
        first = False
        if not 4 <= len(fields) <= 6:
            raise FormatError(source, no, f"{len(fields)} fields; expected node,port,remote node,remote port"
                                          "[,speed,width]")
        a, pa = _name(fields[0], source, no, "node"), _port(fields[1], source, no, "port")
        b, pb = _name(fields[2], source, no, "remote node"), _port(fields[3], source, no, "remote port")
        if (a, pa) == (b, pb) or a == b:
            raise FormatError(source, no, f"{a} port {pa} is cabled to its own node")
        for end in ((a, pa), (b, pb)):
            if end in used:
                raise FormatError(source, no, f"{end[0]} port {end[1]} is already cabled on line {used[end]}")
            used[end] = no
        a_name.append(a)
        a_port.append(pa)
        b_name.append(b)
        b_port.append(pb)
        speed.append(_speed(fields[4], source, no) if len(fields) > 4 else -1)
        width.append(_width(fields[5], source, no) if len(fields) > 5 else 0)
        where.append(no)
        if len(a_name) > MAX_PLAN_CABLES:
            raise FormatError(source, no, f"more than the limit of {MAX_PLAN_CABLES} cables")
    if not a_name:
        raise FormatError(source, None, "no cables")
    return Plan(source, np.array(a_name, dtype=object), np.array(a_port, dtype=np.int16),
                np.array(b_name, dtype=object), np.array(b_port, dtype=np.int16), np.array(speed, dtype=np.int8),
                np.array(width, dtype=np.int8), np.array(where, dtype=np.int32))


def plan_from_fabric(fabric: Fabric, source: str = "<design>") -> Plan:
    """The cables of a designed fabric (from a topology file) as a :class:`Plan`, widths and speeds included."""
    f = fabric
    return Plan(source, f.node_name[f.a_node].astype(object), f.a_port.astype(np.int16),
                f.node_name[f.b_node].astype(object), f.b_port.astype(np.int16), f.speed.astype(np.int8),
                f.width.astype(np.int8), np.zeros(f.num_links, dtype=np.int32))


def read_plan(data: str | bytes, name: str = "<plan>") -> Plan:
    """A plan from an upload: CSV, or a topology file of the design (format told by content, then by ``name``).

    ``data`` is the plan's content: a ``str`` is its text, never the name of a file to read (issue 26).
    """
    from .. import formats

    text = _decode(data, name)
    try:
        fmt = formats.detect(text, name, name)
    except FormatError:
        fmt = None
    if fmt is None or name.lower().endswith(".csv"):
        return read_plan_csv(text, name)
    return plan_from_fabric(formats.read(text, fmt, name), name)


@dataclass(frozen=True, eq=False)
class PlanReport:
    """Differences between a plan and a discovered fabric.

    ``issues``: dicts ``{"kind", "message", "line", ...}`` in :data:`ISSUE_KINDS` order
    (``kind``-specific fields: ``planned``, ``found``, ``link``; a ``miswired`` one's ``found_a``/``found_b``:
    the ports found cabled to the planned ends instead); ``counts`` per kind; ``link_status`` int8 ``[2L]``
    per discovered directed link: 0 as planned, then 1 + the index of its issue kind in :data:`ISSUE_KINDS`
    (``miswired`` 2, ``extra`` 3, ``wrong_speed`` 4, ``wrong_width`` 5); ``unknown_nodes``: plan names the fabric lacks.
    """

    issues: list[dict]
    counts: dict[str, int]
    link_status: np.ndarray
    planned_cables: int
    discovered_cables: int
    unknown_nodes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues

    def as_dict(self, most: int = 1000) -> dict:
        return {"ok": self.ok, "counts": self.counts, "planned_cables": self.planned_cables,
                "discovered_cables": self.discovered_cables, "unknown_nodes": self.unknown_nodes[:most],
                "issues": self.issues[:most], "truncated": len(self.issues) > most}


def _aliases(fabric: Fabric) -> dict[str, int]:
    """Name, GUID text and, where unique, the host name without its ``HCA-n`` suffix -> node index."""
    names = [str(n) for n in fabric.node_name.tolist()]
    out = {n: i for i, n in enumerate(names)}
    stripped: dict[str, list[int]] = {}
    for i in fabric.hosts.tolist():  # one pass over the HCAs
        s = HCA_SUFFIX.sub("", names[i])
        if s != names[i]:
            stripped.setdefault(s, []).append(i)
    for s, nodes in stripped.items():
        if len(nodes) == 1 and s not in out:
            out[s] = nodes[0]
    for i, g in enumerate(fabric.guid.tolist()):  # node GUIDs as written in a plan
        out.setdefault(f"0x{int(g):016x}", i)
    return out


def _resolve(plan_names: list[str], aliases: dict[str, int], base: int) -> tuple[np.ndarray, list[str]]:
    """Node index of every unique plan name (unknown names get ids ``base, base + 1, ...``)."""
    ids, unknown = np.empty(len(plan_names), dtype=np.int64), []
    for i, name in enumerate(plan_names):  # one entry per node of the plan
        if _GUID.match(name):
            node = aliases.get(f"0x{int(name, 16):016x}")
        else:
            node = aliases.get(name)
            if node is None:
                node = aliases.get(HCA_SUFFIX.sub("", name))
        if node is None:
            ids[i] = base + len(unknown)
            unknown.append(name)
        else:
            ids[i] = node
    return ids, unknown


def compare_plan(plan: Plan, fabric: Fabric) -> PlanReport:
    """How ``fabric`` (as discovered) differs from ``plan`` (see the module docstring). Vectorized over cables."""
    f = fabric
    uniq, inv = np.unique(np.concatenate([plan.a_name, plan.b_name]).astype(str), return_inverse=True)
    ids, unknown = _resolve(uniq.tolist(), _aliases(f), f.num_nodes)
    c = plan.num_cables
    pa = ids[inv[:c]] * 256 + plan.a_port
    pb = ids[inv[c:]] * 256 + plan.b_port
    # discovered peer of every port key (both directions of every cable)
    src_key = f.dl_src.astype(np.int64) * 256 + f.dl_src_port
    dst_key = f.dl_dst.astype(np.int64) * 256 + f.dl_dst_port
    order = np.argsort(src_key)
    skeys, speers, slinks = src_key[order], dst_key[order], order

    def peer(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if skeys.size == 0:
            return np.full(len(keys), -1, np.int64), np.full(len(keys), -1, np.int64)
        pos = np.minimum(np.searchsorted(skeys, keys), len(skeys) - 1)
        hit = skeys[pos] == keys
        return np.where(hit, speers[pos], -1), np.where(hit, slinks[pos], -1)

    peer_a, link_a = peer(pa)
    peer_b, _ = peer(pb)
    as_planned = peer_a == pb
    missing = (peer_a < 0) & (peer_b < 0)
    miswired = ~as_planned & ~missing
    planned_keys = np.sort(np.concatenate([pa, pb]))

    def planned(keys: np.ndarray) -> np.ndarray:
        if planned_keys.size == 0:
            return np.zeros(len(keys), dtype=bool)
        pos = np.minimum(np.searchsorted(planned_keys, keys), len(planned_keys) - 1)
        return planned_keys[pos] == keys

    L = f.num_links
    cable_a = f.a_node.astype(np.int64) * 256 + f.a_port
    cable_b = f.b_node.astype(np.int64) * 256 + f.b_port
    extra = ~planned(cable_a) & ~planned(cable_b)
    lk = np.where(as_planned, link_a % max(L, 1), 0)
    wrong_speed = as_planned & (plan.speed >= 0) & (plan.speed != f.speed[lk])
    wrong_width = as_planned & (plan.width > 0) & (plan.width != f.width[lk])
    status = np.zeros(L, dtype=np.int8)
    status[extra] = 1 + ISSUE_KINDS.index("extra")
    for kind, mask in (("wrong_width", wrong_width), ("wrong_speed", wrong_speed)):
        status[lk[mask]] = 1 + ISSUE_KINDS.index(kind)
    for keys, pe in ((pa, peer_a), (pb, peer_b)):
        bad = miswired & (pe >= 0)
        _, lnk = peer(keys[bad])
        status[lnk % max(L, 1)] = 1 + ISSUE_KINDS.index("miswired")
    issues = _issues(plan, f, unknown, inv, ids, pa, pb, peer_a, peer_b, missing, miswired, extra, wrong_speed,
                     wrong_width, lk)
    counts = {k: 0 for k in ISSUE_KINDS}
    for it in issues:
        counts[it["kind"]] += 1
    return PlanReport(issues, counts, np.concatenate([status, status]), c, L, unknown)


def _port_name(fabric: Fabric, names: list[str], key: int) -> str:
    node, port = divmod(int(key), 256)
    name = str(fabric.node_name[node]) if node < fabric.num_nodes else str(names[node - fabric.num_nodes])
    return f"{name} port {port}"


def _issues(plan, f, unknown, inv, ids, pa, pb, peer_a, peer_b, missing, miswired, extra, wrong_speed,
            wrong_width, lk) -> list[dict]:
    """The issue dicts, in :data:`ISSUE_KINDS` order (a loop over the differences only)."""
    c = plan.num_cables

    def pname(key: int) -> str:
        return _port_name(f, unknown, key)

    def planned_text(i: int) -> str:
        return f"{plan.a_name[i]} port {int(plan.a_port[i])} - {plan.b_name[i]} port {int(plan.b_port[i])}"

    out = []
    for i in np.flatnonzero(missing).tolist():
        absent = [str(plan.a_name[i]) if ids[inv[i]] >= f.num_nodes else None,
                  str(plan.b_name[i]) if ids[inv[c + i]] >= f.num_nodes else None]
        why = f" ({' and '.join(a for a in absent if a)} not in the fabric)" if any(absent) else ""
        out.append({"kind": "missing", "line": int(plan.line[i]) or None, "planned": planned_text(i),
                    "message": f"missing cable {planned_text(i)}{why}"})
    for i in np.flatnonzero(miswired).tolist():
        found, peers = [], {}
        if peer_a[i] >= 0 and peer_a[i] != pb[i]:
            peers["found_a"] = pname(peer_a[i])
            found.append(f"{pname(pa[i])} - {peers['found_a']}")
        if peer_b[i] >= 0 and peer_b[i] != pa[i]:
            peers["found_b"] = pname(peer_b[i])
            found.append(f"{pname(pb[i])} - {peers['found_b']}")
        out.append({"kind": "miswired", "line": int(plan.line[i]) or None, "planned": planned_text(i),
                    "found": found, **peers,
                    "message": f"miswired: planned {planned_text(i)}, found {'; '.join(found)}"})
    for k in np.flatnonzero(extra).tolist():
        text = (f"{f.node_name[f.a_node[k]]} port {int(f.a_port[k])} - {f.node_name[f.b_node[k]]} port "
                f"{int(f.b_port[k])}")
        out.append({"kind": "extra", "line": None, "found": text, "link": k,
                    "message": f"cable not in the plan: {text}"})
    for kind, mask, arr, show in (("wrong_speed", wrong_speed, f.speed, lambda v: SPEEDS[v]),
                                  ("wrong_width", wrong_width, f.width, lambda v: f"{v}x")):
        planned_arr = plan.speed if kind == "wrong_speed" else plan.width
        for i in np.flatnonzero(mask).tolist():
            want, got = show(int(planned_arr[i])), show(int(arr[lk[i]]))
            out.append({"kind": kind, "line": int(plan.line[i]) or None, "planned": planned_text(i),
                        "link": int(lk[i]), "expected": want, "found": got,
                        "message": f"{planned_text(i)} runs at {got}, planned {want}"})
    return out
