"""Read the congestion control counter blocks ``perfquery`` prints into :class:`CCSamples` (issue 41).

The blocks, as ``common_func`` of rdma-core's ``infiniband-diags/perfquery.c`` prints them (``# <name> counters:
Lid 12 port 1`` and the fields of the attribute's dump function, libibmad ``dump.c``
``mad_dump_perfcounters_rcv_con_ctrl`` and its siblings), one block per run: perfquery reads these attributes of
the first port it is given alone (``-l`` does not loop over them), ``port 255`` with ``-a``:

========================  ======================  =====================================  =====
option                    header name             counters (libibmad ``fields.c``)         bits
========================  ======================  =====================================  =====
``--rcvcc``               ``PortRcvConCtrl``      ``PortPktRcvFECN``, ``PortPktRcvBECN``   32
``--slrcvfecn``           ``PortSLRcvFECN``       ``PortSLRcvFECN0`` .. ``15`` (per SL)    32
``--slrcvbecn``           ``PortSLRcvBECN``       ``PortSLRcvBECN0`` .. ``15`` (per SL)    32
``--xmitcc``              ``PortXmitConCtrl``     ``PortXmitTimeCong``                     32
``--swportvlcong``        ``SwPortVLCongestion``  ``SWPortVLCongestion0`` .. ``15``        16
``--vlxmittimecc``        ``PortVLXmitTimeCong``  ``PortVLXmitTimeCong0`` .. ``14``        32
========================  ======================  =====================================  =====

Every block starts with ``PortSelect`` and ``CounterSelect`` (the ``IB_PC_EXT_PORT_SELECT_F`` ..
``IB_PC_EXT_XMT_BYTES_F`` fields each dump function prints first): read past. Values are decimal
(``mad_dump_uint``); a counter of another attribute inside a block, a value that is not a non-negative integer
or too wide for its counter is a :class:`~fabric_engine.errors.FormatError` naming its line.

Blocks of other counter sets (port counters, ``-E``, ``-T``, ...) are left to :mod:`.perfquery`; captured-terminal
noise (prompts, ``ibwarn`` lines, other tools' output) is skipped with warnings as :mod:`.perfquery` does.
:func:`.perfquery.parse_perfquery` hands the blocks here when given a ``cc`` list. The push API's sample records
may carry these counters beside the port counters, under the same names: :func:`split_cc_records` takes them out.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..captured import Session, noise, plain_lines, source_warning
from ..errors import FormatError
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NODE_PORTS, MAX_UNICAST_LID
from .counters import json_integer

__all__ = ["CC_ATTRIBUTES", "CC_COLUMNS", "CC_COLUMN", "CCSamples", "parse_perfquery_cc", "parse_perfquery_cc_many",
           "has_cc_blocks", "is_cc_attribute", "split_cc_records"]

#: Counters of each congestion control attribute and their width in bits (libibmad ``fields.c``).
CC_ATTRIBUTES: dict[str, tuple[tuple[str, ...], int]] = {
    "PortRcvConCtrl": (("PortPktRcvFECN", "PortPktRcvBECN"), 32),
    "PortSLRcvFECN": (tuple(f"PortSLRcvFECN{i}" for i in range(16)), 32),
    "PortSLRcvBECN": (tuple(f"PortSLRcvBECN{i}" for i in range(16)), 32),
    "PortXmitConCtrl": (("PortXmitTimeCong",), 32),
    "SwPortVLCongestion": (tuple(f"SWPortVLCongestion{i}" for i in range(16)), 16),
    "PortVLXmitTimeCong": (tuple(f"PortVLXmitTimeCong{i}" for i in range(15)), 32),
}
_ATTRS = tuple(CC_ATTRIBUTES)
CC_COLUMNS: tuple[str, ...] = tuple(n for names, _ in CC_ATTRIBUTES.values() for n in names)
CC_COLUMN: dict[str, int] = {n: i for i, n in enumerate(CC_COLUMNS)}
_SELECT = ("PortSelect", "CounterSelect")  # printed first in every block, read past
_COL_ATTR = np.array([_ATTRS.index(a) for a, (names, _) in CC_ATTRIBUTES.items() for _ in names], np.int64)
_COL_BITS = np.array([w for names, w in CC_ATTRIBUTES.values() for _ in names], np.uint8)
_NAME_COL = {**CC_COLUMN, **dict.fromkeys(_SELECT, -2)}
_SL_FECN = slice(CC_COLUMN["PortSLRcvFECN0"], CC_COLUMN["PortSLRcvFECN15"] + 1)
_SL_BECN = slice(CC_COLUMN["PortSLRcvBECN0"], CC_COLUMN["PortSLRcvBECN15"] + 1)
_VL_CONG = slice(CC_COLUMN["SWPortVLCongestion0"], CC_COLUMN["SWPortVLCongestion15"] + 1)
_VL_TIME = slice(CC_COLUMN["PortVLXmitTimeCong0"], CC_COLUMN["PortVLXmitTimeCong14"] + 1)

# Header (group 1: the attribute, 2: the rest, "Lid 12 port 1") or field (3: name, 4: value) line.
_LINE = re.compile(r"^(?:# ([A-Za-z][\w -]*?)(?: counters)?: ((?:Lid |DR path )[^\n]*)"
                   r"|(\w+):\.*([^\s.]\S*)[ \t]*)$", re.M)
_ADDR = re.compile(r"Lid (\d{1,9}) port (\d{1,9})\b")
_CC_HEADER = re.compile(r"^# (?:" + "|".join(_ATTRS) + r") counters: ", re.M)


def is_cc_attribute(name: str) -> bool:
    """Whether ``name`` (a block header's attribute) is one this module reads."""
    return name in CC_ATTRIBUTES


def has_cc_blocks(text: str) -> bool:
    """Whether ``text`` has a congestion control block header (cheap: one scan)."""
    return _CC_HEADER.search(text) is not None


@dataclass(frozen=True)
class CCSamples:
    """Congestion control counters of ports: ``values[i, CC_COLUMN[name]]``, ``bits`` 0 where not read.

    ``lid``/``port`` address row ``i`` (``port`` 255: all ports, ``-a``); ``t`` when its values were read.
    """

    lid: np.ndarray  # int32
    port: np.ndarray  # int16
    values: np.ndarray  # uint64 (n, len(CC_COLUMNS))
    bits: np.ndarray  # uint8 (n, len(CC_COLUMNS))
    t: np.ndarray  # float64 (n,)

    def __len__(self) -> int:
        return int(self.lid.size)

    @classmethod
    def empty(cls) -> CCSamples:
        c = len(CC_COLUMNS)
        return cls(np.zeros(0, np.int32), np.zeros(0, np.int16), np.zeros((0, c), np.uint64),
                   np.zeros((0, c), np.uint8), np.zeros(0, np.float64))

    @classmethod
    def concat(cls, parts: Iterable[CCSamples]) -> CCSamples:
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        if len(parts) == 1:  # a push's samples: no copy
            return parts[0]
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("lid", "port", "values", "bits", "t")))

    @property
    def keys(self) -> np.ndarray:
        """``lid * 256 + port`` of each row (as :func:`fabric_engine.telemetry.counters.port_key`)."""
        return self.lid.astype(np.int64) * 256 + self.port.astype(np.int64)

    def merged(self) -> CCSamples:
        """One row per port: the counters each block of it read (a later block's winning), its newest time."""
        if not len(self):
            return self
        keys = self.keys
        if (keys[1:] > keys[:-1]).all():  # one row per port in key order already (a push's, as a rule): no copy
            return self
        keys, inverse = np.unique(keys, return_inverse=True)
        n, c = keys.size, len(CC_COLUMNS)
        values, bits = np.zeros((n, c), np.uint64), np.zeros((n, c), np.uint8)
        r, col = np.nonzero(self.bits)  # row order: a later block's value is written last and wins
        values[inverse[r], col] = self.values[r, col]
        bits[inverse[r], col] = self.bits[r, col]
        t = np.zeros(n, np.float64)
        np.maximum.at(t, inverse, self.t)
        return CCSamples((keys // 256).astype(np.int32), (keys % 256).astype(np.int16), values, bits, t)

    def column(self, name: str) -> np.ndarray:
        """Counter ``name`` of every row as float (NaN where not read)."""
        i = CC_COLUMN[name]
        return np.where(self.bits[:, i] > 0, self.values[:, i].astype(np.float64), np.nan)

    def _block(self, cols: slice) -> np.ndarray:
        return np.where(self.bits[:, cols] > 0, self.values[:, cols].astype(np.float64), np.nan)

    @property
    def fecn(self) -> np.ndarray:
        """``PortPktRcvFECN``: packets received marked FECN (NaN: not read)."""
        return self.column("PortPktRcvFECN")

    @property
    def becn(self) -> np.ndarray:
        """``PortPktRcvBECN``: packets received marked BECN (NaN: not read)."""
        return self.column("PortPktRcvBECN")

    @property
    def xmit_time_cong(self) -> np.ndarray:
        """``PortXmitTimeCong``: time the port's transmitter was congested (NaN: not read)."""
        return self.column("PortXmitTimeCong")

    @property
    def sl_fecn(self) -> np.ndarray:
        """FECN packets received per SL, ``(n, 16)`` (NaN: not read)."""
        return self._block(_SL_FECN)

    @property
    def sl_becn(self) -> np.ndarray:
        """BECN packets received per SL, ``(n, 16)``."""
        return self._block(_SL_BECN)

    @property
    def vl_congestion(self) -> np.ndarray:
        """``SWPortVLCongestion`` per VL, ``(n, 16)``."""
        return self._block(_VL_CONG)

    @property
    def vl_xmit_time_cong(self) -> np.ndarray:
        """``PortVLXmitTimeCong`` per VL 0..14, ``(n, 15)``."""
        return self._block(_VL_TIME)


def _warn(warnings: list | None, source: str, line: int, text: str, reason: str) -> None:
    if warnings is not None:
        warnings.append(source_warning(source, line, text, reason))


def _clean(text: str, source: str, warnings: list | None) -> str:
    """``text`` with every line that is neither a block header nor a field blanked: other comments silently,
    noise and other tools' lines with a warning; anything else is a :class:`FormatError` naming its line."""
    lines = text.split("\n")
    session = Session()
    in_block = False
    for i, ln in enumerate(lines):
        if not ln.strip():
            in_block = False
            continue
        if _LINE.fullmatch(ln):
            in_block = True
            continue
        if ln.startswith("#"):  # another comment: changes nothing
            lines[i] = ""
            continue
        lines[i] = ""
        reason = noise(ln)
        if reason is not None:
            _warn(warnings, source, i + 1, ln, reason)
            continue
        tool = session.foreign(i + 1, ln)
        if tool is None:
            raise FormatError(source, i + 1, f"not a perfquery counter line: {ln.strip()[:80]!r}")
        if in_block:
            raise FormatError(source, i + 1, f"a line of {tool} output inside a counter block: {ln.strip()[:80]!r}")
    for w in session.warnings():
        _warn(warnings, source, w["line"], w["text"], w["reason"])
    return "\n".join(lines)


def _line_of_match(text: str, index: int) -> int:
    """Line number of the ``index``-th header or field line (error paths only)."""
    m = next(itertools.islice(_LINE.finditer(text), index, None))
    return text.count("\n", 0, m.start()) + 1


def parse_perfquery_cc(text: str, t: float, source: str = "perfquery", warnings: list | None = None) -> CCSamples:
    """The congestion control blocks of one ``perfquery`` output read at time ``t``: one row per block.

    Other blocks are passed over (:mod:`.perfquery` reads them); ``warnings`` gets a dict ``{"line", "text",
    "reason", "source"}`` per noise line skipped and per congestion control block not addressed as ``Lid N port P``.

    Raises
    ------
    FormatError
        A counter of another attribute in a block, a value that is not a non-negative integer or does not fit its
        counter, a LID outside 1..0xBFFF, a port outside 0..255, a line that is neither perfquery output nor noise.

    Examples
    --------
    >>> s = parse_perfquery_cc("# PortRcvConCtrl counters: Lid 2 port 3\\nPortSelect:....3\\n"
    ...                        "CounterSelect:...0x0000\\nPortPktRcvFECN:....7\\nPortPktRcvBECN:....1\\n", t=1.0)
    >>> int(s.lid[0]), int(s.port[0]), float(s.fecn[0]), float(s.becn[0])
    (2, 3, 7.0, 1.0)
    """
    text = plain_lines(text, source, warnings)
    matches = _LINE.findall(text)
    content = sum(1 for ln in text.split("\n") if ln.strip())
    if content != len(matches):
        text = _clean(text, source, warnings)
        matches = _LINE.findall(text)
    if not matches:
        return CCSamples.empty()
    attr_s, rest_s, names, raw = zip(*matches, strict=True)
    n = len(matches)
    is_hdr = np.fromiter(map(len, attr_s), np.int64, count=n) > 0
    hdr = np.flatnonzero(is_hdr)
    # Attribute of each header: index in _ATTRS, -1 for blocks of other counter sets (perfquery.py's).
    h_attr = np.array([_ATTRS.index(attr_s[i]) if attr_s[i] in CC_ATTRIBUTES else -1 for i in hdr], np.int64)
    addr = [_ADDR.match(rest_s[i]) if a >= 0 else None for i, a in zip(hdr, h_attr, strict=True)]
    for k in np.flatnonzero(h_attr >= 0):
        if addr[k] is None:
            h_attr[k] = -1
            _warn(warnings, source, _line_of_match(text, int(hdr[k])), f"# {attr_s[hdr[k]]} counters: {rest_s[hdr[k]]}",
                  f"{attr_s[hdr[k]]}: not addressed as 'Lid N port P' (ibweb keys ports by LID): block skipped")
    cc_blocks = np.flatnonzero(h_attr >= 0)
    if cc_blocks.size > MAX_FABRIC_PORTS:
        raise FormatError(source, _line_of_match(text, int(hdr[cc_blocks[MAX_FABRIC_PORTS]])),
                          f"more than {MAX_FABRIC_PORTS:,} congestion control blocks: more ports than a subnet has")
    block = np.cumsum(is_hdr) - 1  # -1: a field before any header
    f_attr = np.where(block >= 0, np.concatenate([h_attr, [-1]])[block], -1)
    fld = np.flatnonzero(~is_hdr & (f_attr >= 0))
    cols = np.array([_NAME_COL.get(names[i], -1) for i in fld], np.int64)
    wrong = (cols == -1) | (cols >= 0) & (_COL_ATTR[np.maximum(cols, 0)] != f_attr[fld])
    if wrong.any():
        i = int(fld[np.flatnonzero(wrong)[0]])
        raise FormatError(source, _line_of_match(text, i),
                          f"{names[i]}: not a counter of a {_ATTRS[f_attr[i]]} block")
    keep, cols = fld[cols >= 0], cols[cols >= 0]
    kept_raw = [raw[i] for i in keep]
    bad = [k for k, r in enumerate(kept_raw) if not (r.isascii() and r.isdigit() and len(r) <= 20)]
    if bad:
        i = int(keep[bad[0]])
        raise FormatError(source, _line_of_match(text, i),
                          f"{names[i]}: {raw[i][:40]!r} is not a non-negative integer")
    vals = np.array([int(r) if len(r) < 20 else min(int(r), (1 << 64) - 1) for r in kept_raw], np.uint64)
    width = _COL_BITS[cols]
    too_wide = vals >> width.astype(np.uint64) > 0
    if too_wide.any():
        i = int(keep[np.flatnonzero(too_wide)[0]])
        raise FormatError(source, _line_of_match(text, i), f"{names[i]}: {raw[i][:24]} does not fit in "
                                                           f"{int(_COL_BITS[_NAME_COL[names[i]]])} bits")
    lid = np.array([int(addr[k].group(1)) for k in cc_blocks], np.int64)
    port = np.array([int(addr[k].group(2)) for k in cc_blocks], np.int64)
    out = (port > MAX_NODE_PORTS) & (port != 255) | (lid > MAX_UNICAST_LID) | (lid <= 0)
    if out.any():
        k = int(cc_blocks[np.flatnonzero(out)[0]])
        raise FormatError(source, _line_of_match(text, int(hdr[k])),
                          f"lid {lid[out][0]} port {port[out][0]} out of range "
                          f"(LIDs 1..{MAX_UNICAST_LID}, ports 0..{MAX_NODE_PORTS} or 255 for all ports)")
    row_of_block = np.full(hdr.size, -1, np.int64)
    row_of_block[cc_blocks] = np.arange(cc_blocks.size)
    rows = row_of_block[block[keep]]
    c = len(CC_COLUMNS)
    values, bits = np.zeros((cc_blocks.size, c), np.uint64), np.zeros((cc_blocks.size, c), np.uint8)
    values[rows, cols], bits[rows, cols] = vals, width
    return CCSamples(lid.astype(np.int32), port.astype(np.int16), values, bits,
                     np.full(cc_blocks.size, float(t), np.float64))


def parse_perfquery_cc_many(outputs: Iterable[tuple[str, float, str]], warnings: list | None = None) -> CCSamples:
    """The congestion control counters of many ``(text, t, source)`` outputs, one row per port
    (:meth:`CCSamples.merged`: ``--rcvcc``, ``--slrcvfecn`` ... runs of a port meet)."""
    return CCSamples.concat(parse_perfquery_cc(text, t, src, warnings) for text, t, src in outputs).merged()


def split_cc_records(records: Sequence, names: Iterable[str] = CC_COLUMNS,
                     source: str = "records") -> tuple[list, CCSamples, np.ndarray]:
    """The congestion control counters ``names`` (of :data:`CC_COLUMNS`) of the push API's sample records.

    A record (``{"lid", "port", "t", "counters": {name: value}}``, as
    :meth:`.counters.CounterSamples.from_records` reads it) may hold them in its ``counters``, cumulative as perfquery
    reads them. Returns the records with them taken out (a record without any is the same object; for
    ``from_records``, which reads the rest and refuses what it does not know), the counters as one
    :class:`CCSamples` row per record that held some (in record order, timed by its ``t``), and the index of each
    row's record. Records that are not objects, or whose ``counters`` is not one, are passed on for
    ``from_records`` to refuse.

    Raises
    ------
    FormatError
        More records than a subnet has ports (no line); line ``i + 1`` for record ``i`` holding these counters: a
        LID outside 1..0xBFFF, a port outside 0..255, a ``t`` that is not a time, a value that is not a non-negative
        integer or does not fit its counter (the messages of ``from_records``).

    Examples
    --------
    >>> recs, cc, rows = split_cc_records([{"lid": 2, "port": 3, "t": 1.0, "counters": {"PortXmitData": 9}},
    ...     {"lid": 2, "port": 4, "t": 1.0, "counters": {"PortXmitData": 9, "PortPktRcvFECN": 7}}])
    >>> recs[1]["counters"], rows.tolist(), int(cc.port[0]), float(cc.fecn[0])
    ({'PortXmitData': 9}, [1], 4, 7.0)
    """
    wanted = tuple(names)
    unknown = [n for n in wanted if n not in CC_COLUMN]
    if unknown:
        raise ValueError(f"not congestion control counters: {unknown}")
    if len(records) > MAX_FABRIC_PORTS:
        raise FormatError(source, None, f"{len(records):,} samples: more ports than a subnet has "
                                        f"({MAX_FABRIC_PORTS:,})")
    width = {n: int(_COL_BITS[CC_COLUMN[n]]) for n in wanted}
    out = list(records)
    rows: list[int] = []
    lids: list[int] = []
    ports: list[int] = []
    stamps: list[float] = []
    got: dict[str, tuple[list[int], list[int]]] = {n: ([], []) for n in wanted}  # rows and values of each counter
    for i, rec in enumerate(records):  # input decoding; the arithmetic stays vectorized
        counters = rec.get("counters") if type(rec) is dict or isinstance(rec, Mapping) else None
        if not (type(counters) is dict or isinstance(counters, Mapping)):
            continue
        held = [n for n in wanted if n in counters]
        if not held:
            continue
        try:
            lid, port, stamp = rec["lid"], rec["port"], rec["t"]
        except KeyError as exc:
            raise FormatError(source, i + 1, f"sample needs lid, port, t and counters (no {exc})") from None
        lid = lid if type(lid) is int else json_integer(lid)
        port = port if type(port) is int else json_integer(port)
        if lid is None or not 0 < lid <= MAX_UNICAST_LID or port is None or not 0 <= port <= 255:
            raise FormatError(source, i + 1, f"lid {rec['lid']!r} or port {rec['port']!r} out of range "
                                             f"(LIDs 1..{MAX_UNICAST_LID}, ports 0..255)")
        if isinstance(stamp, bool) or not isinstance(stamp, int | float) or not 0 <= stamp < float("inf"):
            raise FormatError(source, i + 1, f"t: {stamp!r} is not a time in seconds since the epoch")
        rest = dict(counters)
        for name in held:
            bits = width[name]
            raw = rest.pop(name)
            v = raw if type(raw) is int else json_integer(raw)
            if v is None:
                raise FormatError(source, i + 1, f"{name}: {str(raw)[:40]!r} is not an integer")
            if not 0 <= v < 1 << bits:
                raise FormatError(source, i + 1, f"{name}: {v} does not fit in {bits} bits")
            at, vals = got[name]
            at.append(len(rows))
            vals.append(v)
        out[i] = {**rec, "counters": rest}
        rows.append(i)
        lids.append(lid)
        ports.append(port)
        stamps.append(float(stamp))
    if not rows:
        return out, CCSamples.empty(), np.zeros(0, np.int64)
    c = len(CC_COLUMNS)
    values, bits = np.zeros((len(rows), c), np.uint64), np.zeros((len(rows), c), np.uint8)
    for name, (at, vals) in got.items():
        col = CC_COLUMN[name]
        values[at, col], bits[at, col] = np.array(vals, np.uint64), _COL_BITS[col]
    return (out, CCSamples(np.array(lids, np.int32), np.array(ports, np.int16), values, bits,
                           np.array(stamps, np.float64)), np.array(rows, np.int64))
