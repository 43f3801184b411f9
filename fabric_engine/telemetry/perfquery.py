"""Read the text ``perfquery`` (infiniband-diags) prints into :class:`CounterSamples`.

Handled forms, all as printed by infiniband-diags 2.x and captured from ibsim:

* basic counters of one port: ``perfquery LID PORT``, a ``# Port counters: Lid 2
  port 3 (CapMask: 0x1300)`` header followed by ``Name:.....value`` lines;
* extended counters (``-x``): ``# Port extended counters: Lid 2 port 3 ...``;
* all ports aggregated (``-a``): one block with ``port 255``;
* many ports in one run (``-l LID 1,2,5`` or a port range, with or without ``-x``),
  the per-switch form collectors and Prometheus exporters use: one block per port.

Several outputs (for example ``perfquery -l`` and ``perfquery -x -l`` of every switch
of a sweep) can be given at once; :meth:`CounterSamples.merged` combines the basic
and extended reads of a port.

What real clusters write, as infiniband-diags' ``perfquery.c`` prints it:

* ``-x`` of hardware with ``CapMask2`` bit 1 (IsAddlPortCountersExtendedSupported):
  ``CounterSelect2`` and the error counters and ``PortXmitWait`` inside the extended
  block, all 64 bits wide there (so every counter of an extended block is read as 64-bit);
* basic blocks whose ``CapMask`` lacks bit 12 (PortXmitWait supported): perfquery prints
  ``PortXmitWait`` as 0 without reading it, so it is taken as not read (``bits`` 0);
* ``-E`` and ``-D`` (``# PortRcvErrorDetails counters: Lid 12 port 1``, ``# PortXmitDiscardDetails
  counters: ...``, as ``common_func`` of rdma-core's ``infiniband-diags/perfquery.c`` prints them, one block
  per run, ``port 255`` with ``-a``; the field names and their 16-bit widths are libibmad's ``fields.c``):
  their counters are read into the detail columns of the port (:data:`~.counters.DETAIL_COLUMNS`); a
  counter of another attribute inside such a block is an error naming its line;
* congestion control blocks (``--rcvcc``, ``--slrcvfecn``, ``--slrcvbecn``, ``--xmitcc``, ``--swportvlcong``,
  ``--vlxmittimecc``: ``# PortRcvConCtrl counters: Lid 12 port 1``): read by :mod:`.perfquery_cc` into the
  ``cc`` list :func:`parse_perfquery` is given (none: skipped with a warning), never into port counters;
* ``-X``, ``-S``, ``-T``, ``-c``, ``--oprcvcounters``, ``--flowctlcounters``, ``--vloppackets`` ... blocks
  (``# PortOpRcvCounters counters: Lid 12 port 1``, ``# PortSamplesControl: ...``):
  counter sets ibweb does not model; each block is checked line by line and skipped
  with a warning, so none of its fields is taken for a counter of the block before it.
  So are port counter blocks whose header is not ``Lid N port P`` (``Lid 5 Gid ... port 1``);
* captured-terminal noise: CR LF line ends are read as LF; a UTF-8 byte order mark is
  removed with a warning; shell prompt lines, a PuTTY (or ``script``) log banner and the
  tools' standard-error lines (``ibwarn: [pid] func: ...``, ``file.c:123; ...``,
  ``perfquery: iberror: ...``) are skipped, each with a warning (see
  :func:`noise_reason`); other tools' output of the same terminal session (``ibswitches``,
  ``ibstat``, ``sminfo``, ...) is skipped between blocks with one warning per tool naming its lines
  (:class:`fabric_engine.captured.Session`), and is an error inside a block. Any other line is still
  an error naming it.

Warnings are dicts ``{"line", "text", "reason", "source"}`` (``text`` is the skipped
line, stripped, at most 120 characters), appended to the ``warnings`` list the read functions take.
Line numbers count ``\n``-ended lines of the text as given.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

import numpy as np

from ..captured import Session, plain_lines
from ..captured import noise as noise_reason
from ..captured import source_warning as make_warning
from ..errors import FormatError
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NODE_PORTS, MAX_UNICAST_LID
from . import perfquery_cc
from .counters import BASIC_BITS, COLUMN, COLUMNS, DETAIL_ATTRIBUTES, DETAIL_COLUMNS, CounterSamples

try:  # built by ``pip install -e .`` (setup.py); the regular expressions below read the same lines, slower
    from . import _perfquery
except ImportError:  # pragma: no cover - a checkout whose extensions were not built
    _perfquery = None

__all__ = ["parse_perfquery", "parse_perfquery_many", "noise_reason", "make_warning", "is_perfquery"]

# The attribute after "# Port" (group 1: "" PortCounters, " extended", "RcvErrorDetails", "XmitDiscardDetails"),
# the LID and the port.
_HEADER = re.compile(r"^# Port( extended|RcvErrorDetails|XmitDiscardDetails)? counters: Lid (\d+) port (\d+)\b[^\n]*$",
                     re.M)
# A field's value starts at its first character that is not a dot, so the dots and the value never compete
# for the same characters: matching is linear in the line's length.
_FIELD = re.compile(r"^(\w+):\.*([^\s.]\S*)[ \t]*$", re.M)
# Header or field line, in one pass: (ext, lid, port, name, value).
_LINE = re.compile(r"^(?:# Port( extended|RcvErrorDetails|XmitDiscardDetails)? counters: Lid (\d+) port (\d+)\b[^\n]*"
                   r"|(\w+):\.*([^\s.]\S*)[ \t]*)$", re.M)
#: Block kinds, as the compiled lexer numbers them: the attribute a header names.
_KIND = {"": 0, " extended": 1, "RcvErrorDetails": 2, "XmitDiscardDetails": 3}
_KIND_NAME = ("PortCounters", "PortCountersExtended", "PortRcvErrorDetails", "PortXmitDiscardDetails")
# The header of a block of another attribute (``-E``: "# PortRcvErrorDetails counters: Lid 12 port 1",
# ``-c``: "# PortSamplesControl: Lid 12 port 1") or of port counters not addressed by a LID alone. The digit
# runs are possessive: giving digits back would rescan the rest of the line once per digit.
_OTHER_HEADER = re.compile(r"# ([A-Za-z][\w -]*?)(?: counters)?: (?:Lid \d++|DR path )[^\n]*? port \d++\b[^\n]*")
_CAPMASK = re.compile(r"\(CapMask: 0x([0-9A-Fa-f]{1,8})\b")
_XMIT_WAIT_SUPPORTED = 1 << 12  # PerfMgt ClassPortInfo CapabilityMask bit 12 (IBA 1.3, table 249)
_XMIT_WAIT = COLUMN["PortXmitWait"]
_ALIASES = {"PortMultiCastXmitPkts": "PortMulticastXmitPkts", "PortMultiCastRcvPkts": "PortMulticastRcvPkts"}
_COL = {**COLUMN, **{alias: COLUMN[name] for alias, name in _ALIASES.items()}}
_NAMES = tuple(name.encode() for name in _COL)
_NAME_COL = np.array(list(_COL.values()), dtype=np.int64)
_BASIC_W = np.array([BASIC_BITS.get(n, 64) for n in COLUMNS], dtype=np.uint8)
# PortCountersExtended: the data and packet counters, and (CapMask2 bit 1) the error counters and PortXmitWait,
# are all 64 bits wide.
_EXT_W = np.full(len(COLUMNS), 64, dtype=np.uint8)
# Width of each counter in a block of each kind (rows: _KIND); 0 where the attribute has no such counter.
_WIDTH = np.zeros((4, len(COLUMNS)), dtype=np.uint8)
_WIDTH[0], _WIDTH[1] = _BASIC_W, _EXT_W
_WIDTH[:2, [COLUMN[n] for n in DETAIL_COLUMNS]] = 0
for _k, _attr in ((2, "PortRcvErrorDetails"), (3, "PortXmitDiscardDetails")):
    _WIDTH[_k, [COLUMN[n] for n in DETAIL_ATTRIBUTES[_attr]]] = 16

def is_perfquery(text: str) -> bool:
    """Whether ``text`` has a block header of a counter set this module reads (how ``info`` tells the format)."""
    return _HEADER.search(text.replace("\ufeff", "")) is not None


# ------------------------------------------------------------------ captured-terminal noise
def _hashes(text: str) -> int:
    """Number of ``#`` characters: at least the number of comment lines, so equal to the headers' only when
    every comment line is a counter header (counting one character is three times faster than ``"\\n#"``)."""
    return text.count("#")


def _is_plain(text: str, fields: int, headers: int) -> bool:
    """Whether every line is a counter header, a field or blank: counted, not looked at."""
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    blank = text.count("\n\n") + text.startswith("\n")
    comments = text.count("\n#") + text.startswith("#")
    return comments == headers == _hashes(text) and lines - blank - comments == fields


def _skip_reason(name: str) -> str:
    if name in ("Port", "Port extended"):
        return "port counters not addressed as 'Lid N port P' (ibweb keys ports by LID): block skipped"
    if perfquery_cc.is_cc_attribute(name):
        return f"{name}: congestion control counters, read by perfquery_cc (not asked for here): block skipped"
    return (f"{name[:40]}: a counter set ibweb does not read (it reads PortCounters, PortCountersExtended, "
            "PortRcvErrorDetails and PortXmitDiscardDetails): block skipped")


def _clean(text: str, source: str, warnings: list | None, cc_read: bool = False) -> str:
    """``text`` with noise lines and blocks of other counter sets blanked: same lines, same numbers.

    Every line of a skipped block must still be a field line. Raises :class:`FormatError`
    at the first line that is neither perfquery output nor noise. ``cc_read``: congestion control blocks are read
    by :mod:`.perfquery_cc`, so they are blanked without a warning.
    """
    lines = text.split("\n")
    skipping = False
    session = Session()  # other tools' lines of a captured terminal session: one warning per tool
    in_block = False  # the line before was a counter header or field
    for i, ln in enumerate(lines):
        if not ln.strip():
            in_block = False
            continue
        in_block, was_in_block = True, in_block
        if ln.startswith("#"):  # a header starts (or ends) a skipped block; other comments change nothing
            if _HEADER.match(ln):
                skipping = False
            elif (other := _OTHER_HEADER.fullmatch(ln.rstrip())) is not None:
                skipping = True
                lines[i] = ""
                if not (cc_read and perfquery_cc.is_cc_attribute(other.group(1))):
                    _append(warnings, make_warning(source, i + 1, ln, _skip_reason(other.group(1))))
            continue
        if _FIELD.match(ln):
            if skipping:
                lines[i] = ""
            continue
        in_block = False
        reason = noise_reason(ln)
        lines[i] = ""
        if reason is not None:
            _append(warnings, make_warning(source, i + 1, ln, reason))
            continue
        tool = session.foreign(i + 1, ln)
        if tool is None:
            raise FormatError(source, i + 1, f"not a perfquery counter line: {ln.strip()[:80]!r}")
        if was_in_block:
            raise FormatError(source, i + 1, f"a line of {tool} output inside a counter block: {ln.strip()[:80]!r}")
    for w in session.warnings():
        _append(warnings, make_warning(source, w["line"], w["text"], w["reason"]))
    return "\n".join(lines)


def _append(warnings: list | None, warning: dict) -> None:
    if warnings is not None:
        warnings.append(warning)


def _number(digits: str) -> int:
    """``int(digits)`` for header numbers; anything longer than 9 digits is out of every range anyway."""
    return int(digits) if len(digits) <= 9 else 1 << 40


def _counter_value(raw: str) -> int | None:
    """The value of a counter field, or ``None`` unless it is a non-negative 64-bit decimal integer."""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 20 and int(raw) < 1 << 64 else None


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _xmit_wait_unsupported(text: str) -> bool:
    """Whether some header's CapMask says PortXmitWait is not supported (cheap: one scan for the masks)."""
    return any(not int(m, 16) & _XMIT_WAIT_SUPPORTED for m in set(_CAPMASK.findall(text)))


def _drop_unread_xmit_wait(text: str, ext: np.ndarray, values: np.ndarray, bits: np.ndarray) -> None:
    """Clear ``PortXmitWait`` of basic blocks whose CapMask lacks bit 12: perfquery printed 0 without reading it."""
    if not _xmit_wait_unsupported(text):
        return
    for block, header in enumerate(_HEADER.finditer(text)):
        cap = _CAPMASK.search(header.group(0))
        if cap is not None and ext[block] == 0 and not int(cap.group(1), 16) & _XMIT_WAIT_SUPPORTED:
            values[block, _XMIT_WAIT], bits[block, _XMIT_WAIT] = 0, 0


def parse_perfquery(text: str, t: float, source: str = "perfquery", warnings: list | None = None,
                    cc: list | None = None) -> CounterSamples:
    """Parse one ``perfquery`` output (any of the forms above) read at time ``t``.

    Parameters
    ----------
    text : str
        The program's standard output (as captured: see the module docstring for the noise read past).
    t : float
        When the values were read (seconds since the epoch); the collector uses the
        moment the command returned.
    source : str
        Name for error messages (file or command line).
    warnings : list, optional
        Gets one dict ``{"line", "text", "reason", "source"}`` appended per skipped line or block.
    cc : list, optional
        Gets the :class:`~.perfquery_cc.CCSamples` of the output's congestion control blocks appended (when it
        has some); without it those blocks are skipped with a warning.

    Returns
    -------
    CounterSamples
        One row per block, in output order. Fields ibweb does not track (``PortSelect``,
        ``CounterSelect``, ...) are skipped.

    Raises
    ------
    FormatError
        A counter line before any header, a value that is not a non-negative integer,
        a value too wide for its counter, a LID outside 1..0xBFFF or a port outside
        0..255 (255: all ports), more than 1,048,576 blocks, or a line that is neither
        perfquery output nor captured-terminal noise.

    Examples
    --------
    >>> s = parse_perfquery("# Port extended counters: Lid 2 port 3\\nPortXmitData:......42\\n", t=1.0)
    >>> int(s.lid[0]), int(s.port[0]), int(s.values[0, COLUMN["PortXmitData"]])
    (2, 3, 42)
    """
    text = plain_lines(text, source, warnings)
    cc_read = cc is not None and perfquery_cc.has_cc_blocks(text)
    if cc_read:  # noise lines are warned about by the port counter read below
        cc.append(perfquery_cc.parse_perfquery_cc(text, t, source))
    if _perfquery is not None:
        return _parse_lexed(text, t, source, warnings, cc_read)
    matches = _LINE.findall(text)
    headers = sum(1 for m in matches if m[1])
    if not _is_plain(text, len(matches) - headers, headers):
        text = _clean(text, source, warnings, cc_read)
        matches = _LINE.findall(text)
    if not matches:
        return CounterSamples.empty()
    ext_s, lid_s, port_s, names, raw = zip(*matches, strict=True)
    is_hdr = np.fromiter(map(len, lid_s), dtype=np.int64, count=len(matches)) > 0
    block = np.cumsum(is_hdr) - 1
    if not is_hdr[0]:
        m = _FIELD.search(text)
        raise FormatError(source, _line_of(text, m.start()),
                          f"counter {m.group(1)!r} before any '# Port counters' header")
    hdr = np.flatnonzero(is_hdr)
    nblocks = len(hdr)
    if nblocks > MAX_FABRIC_PORTS:
        raise FormatError(source, _locate(text, MAX_FABRIC_PORTS, None),
                          f"more than {MAX_FABRIC_PORTS:,} counter blocks: more ports than one subnet has")
    cols = np.fromiter(map(_COL.get, names, itertools.repeat(-1)), dtype=np.int64, count=len(matches))
    keep = np.flatnonzero(~is_hdr & (cols >= 0))
    kept_raw = [raw[i] for i in keep]
    try:
        vals = np.array(kept_raw, dtype=np.uint64) if kept_raw else np.zeros(0, np.uint64)
        if any(not r.isascii() for r in kept_raw):
            raise ValueError
    except (ValueError, OverflowError):
        bad = next(int(i) for i in keep if _counter_value(raw[i]) is None)
        raise FormatError(source, _match_line(text, bad),
                          f"{names[bad]}: {raw[bad][:40]!r} is not a non-negative integer of at most 64 bits") from None
    ext = np.array([_KIND[ext_s[i]] for i in hdr], dtype=np.int8)
    lid = np.array([_number(lid_s[i]) for i in hdr], dtype=np.int64)
    port = np.array([_number(port_s[i]) for i in hdr], dtype=np.int64)
    out_of_range = (port > MAX_NODE_PORTS) & (port != 255) | (lid > MAX_UNICAST_LID) | (lid <= 0)
    if out_of_range.any():
        b = int(np.flatnonzero(out_of_range)[0])
        raise FormatError(source, _locate(text, b, None),
                          f"lid {lid_s[hdr[b]][:12]} port {port_s[hdr[b]][:12]} out of range "
                          f"(LIDs 1..{MAX_UNICAST_LID}, ports 0..{MAX_NODE_PORTS} or 255 for all ports)")
    return _samples(text, t, source, ext, lid, port, block[keep], cols[keep], vals)


def _samples(text: str, t: float, source: str, ext: np.ndarray, lid: np.ndarray, port: np.ndarray,
             rows: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> CounterSamples:
    """The samples of blocks ``ext``/``lid``/``port`` with ``vals`` at ``(rows, cols)``; widths checked."""
    nblocks, c = len(lid), len(COLUMNS)
    values = np.zeros((nblocks, c), np.uint64)
    bits = np.zeros((nblocks, c), np.uint8)
    values[rows, cols] = vals
    width = _WIDTH[ext[rows], cols]
    if not width.all():
        k = int(np.flatnonzero(width == 0)[0])
        b, col = int(rows[k]), int(cols[k])
        raise FormatError(source, _locate(text, b, COLUMNS[col]),
                          f"{COLUMNS[col]}: not a counter of a {_KIND_NAME[ext[b]]} block")
    bits[rows, cols] = width
    too_wide = (bits < 64) & (values >> np.minimum(bits, 63).astype(np.uint64) > 0)
    if too_wide.any():
        b, col = (int(x[0]) for x in np.nonzero(too_wide))
        raise FormatError(source, _locate(text, b, COLUMNS[col]),
                          f"{COLUMNS[col]}: {int(values[b, col])} does not fit in {int(bits[b, col])} bits")
    _drop_unread_xmit_wait(text, ext, values, bits)
    stamps = np.where(bits > 0, float(t), 0.0)
    return CounterSamples(lid.astype(np.int32), port.astype(np.int16), values, bits, stamps)


def _lex(text: str) -> tuple:
    """``_perfquery.lex`` of ``text``: (kind, ext, line, a, b, value) as arrays, the first stray line, headers."""
    kind, ext_b, line_b, a_b, b_b, value_b, stray, _ = _perfquery.lex(text.encode("utf-8", "surrogateescape"), _NAMES)
    kind = np.frombuffer(kind or b"", np.int8)  # None when there are no lines
    arrays = (kind, *(np.frombuffer(buf or b"", dtype) for buf, dtype in
                      ((ext_b, np.int8), (line_b, np.int64), (a_b, np.int64), (b_b, np.int64), (value_b, np.uint64))))
    return arrays, int(stray), int(np.count_nonzero(kind == 0))


def _parse_lexed(text: str, t: float, source: str, warnings: list | None = None,
                 cc_read: bool = False) -> CounterSamples:
    """:func:`parse_perfquery` on the lines of the compiled lexer (``_perfquery.c``), with the same checks.

    Measured (tests/bench/bench_telemetry.py): a sweep of 40,960 switch ports, 55 MB of text,
    took 4.3 s through the regular expressions and their Python strings; the lexer reads it in
    a tenth of a second, and what is left here works on arrays. Text with noise or blocks of
    other counter sets (a stray line, or more ``#`` than headers) is cleaned and lexed again.
    """
    (kind, ext_all, line, a, b, value), stray, headers = _lex(text)
    if stray or _hashes(text) != headers:
        text = _clean(text, source, warnings, cc_read)
        (kind, ext_all, line, a, b, value), stray, _ = _lex(text)
    if stray:
        ln = text.split("\n")[stray - 1]
        raise FormatError(source, int(stray), f"not a perfquery counter line: {ln.strip()[:80]!r}")
    if len(kind) == 0:
        return CounterSamples.empty()
    is_hdr = kind == 0
    if not is_hdr[0]:
        name = text.split("\n")[int(line[0]) - 1].split(":", 1)[0]
        raise FormatError(source, int(line[0]), f"counter {name!r} before any '# Port counters' header")
    hdr = np.flatnonzero(is_hdr)
    nblocks = len(hdr)
    if nblocks > MAX_FABRIC_PORTS:
        raise FormatError(source, int(line[hdr[MAX_FABRIC_PORTS]]),
                          f"more than {MAX_FABRIC_PORTS:,} counter blocks: more ports than one subnet has")
    block = np.cumsum(is_hdr) - 1
    fld = ~is_hdr
    bad = np.flatnonzero(fld & (b != 0) & (a >= 0))
    if bad.size:
        text_line = text.split("\n")[int(line[bad[0]]) - 1]
        name, val = text_line.split(":", 1)
        val = val.lstrip(".").strip()[:40]
        raise FormatError(source, int(line[bad[0]]),
                          f"{name}: {val!r} is not a non-negative integer of at most 64 bits")
    lid, port = a[hdr], b[hdr]
    ext = ext_all[hdr]
    out_of_range = (port > MAX_NODE_PORTS) & (port != 255) | (lid > MAX_UNICAST_LID) | (lid <= 0)
    if out_of_range.any():
        k = int(np.flatnonzero(out_of_range)[0])
        hl = text.split("\n")[int(line[hdr[k]]) - 1]
        m = _HEADER.match(hl)
        raise FormatError(source, int(line[hdr[k]]),
                          f"lid {m.group(2)[:12]} port {m.group(3)[:12]} out of range "
                          f"(LIDs 1..{MAX_UNICAST_LID}, ports 0..{MAX_NODE_PORTS} or 255 for all ports)")
    keep = np.flatnonzero(fld & (a >= 0))
    return _samples(text, t, source, ext, lid, port, block[keep], _NAME_COL[a[keep]], value[keep])


def _match_line(text: str, index: int) -> int:
    """Line number of the ``index``-th header or field line (error path only)."""
    return _line_of(text, next(itertools.islice(_LINE.finditer(text), index, None)).start())


def _locate(text: str, block: int, name: str | None) -> int:
    """Line number of ``name`` in block ``block`` (error path only)."""
    headers = list(_HEADER.finditer(text))
    start = headers[block].start()
    if name is not None:
        m = re.compile(rf"^{re.escape(name)}:", re.M).search(text, start)
        if m:
            return _line_of(text, m.start())
    return _line_of(text, start)


def _parse_many_lexed(outputs: list[tuple[str, float, str]]) -> CounterSamples | None:
    """:func:`_parse_lexed` of many outputs at once: each is lexed, then the array work is done once for all.

    A sweep is thousands of small outputs (two per switch); the checks and the scatter into
    ``values`` cost little per line but tens of numpy calls per output. Returns None when an
    output has anything to complain about or to clean: the caller then parses them one by one,
    which raises the very error (or gives the very warnings) :func:`parse_perfquery` gives.
    """
    parts, stamps = [], []
    for text, t, source in outputs:
        marks: list = []
        text = plain_lines(text, source, marks)
        (kind, ext, _, a, b, value), stray, headers = _lex(text)
        if marks or stray or _hashes(text) != headers:
            return None
        if (ext[kind == 0] == 0).any() and _xmit_wait_unsupported(text):  # only basic blocks have the quirk
            return None
        if len(kind) == 0:
            continue
        if kind[0] != 0 or headers > MAX_FABRIC_PORTS:
            return None
        parts.append((kind, ext, a, b, value))
        stamps.append((float(t), headers))
    if not parts:
        return CounterSamples.empty()
    kind, ext, a, b, value = (np.concatenate(x) for x in zip(*parts, strict=True))
    is_hdr = kind == 0
    fld = ~is_hdr
    if (fld & (b != 0) & (a >= 0)).any():
        return None
    hdr = np.flatnonzero(is_hdr)
    lid, port, ext = a[hdr], b[hdr], ext[hdr]
    if ((port > MAX_NODE_PORTS) & (port != 255) | (lid > MAX_UNICAST_LID) | (lid <= 0)).any():
        return None
    block = np.cumsum(is_hdr) - 1
    keep = np.flatnonzero(fld & (a >= 0))
    values = np.zeros((len(hdr), len(COLUMNS)), np.uint64)
    bits = np.zeros((len(hdr), len(COLUMNS)), np.uint8)
    rows, cc = block[keep], _NAME_COL[a[keep]]
    values[rows, cc] = value[keep]
    bits[rows, cc] = _WIDTH[ext[rows], cc]
    if not bits[rows, cc].all():  # a counter in a block of another attribute: the one-by-one parse names it
        return None
    if ((bits < 64) & (values >> np.minimum(bits, 63).astype(np.uint64) > 0)).any():
        return None
    t_block = np.repeat([t for t, _ in stamps], [n for _, n in stamps])
    return CounterSamples(lid.astype(np.int32), port.astype(np.int16), values, bits,
                          np.where(bits > 0, t_block[:, None], 0.0))


def parse_perfquery_many(outputs: Iterable[tuple[str, float, str]], warnings: list | None = None,
                         cc: list | None = None) -> CounterSamples:
    """Parse many ``(text, t, source)`` outputs and merge them into one row per port.

    Errors are those of :func:`parse_perfquery` on the first output that has one; ``warnings``
    gets those of every output (each names its ``source``); ``cc`` as for :func:`parse_perfquery`.
    """
    outputs = list(outputs)
    samples = _parse_many_lexed(outputs) if _perfquery is not None else None  # None for any '#' not a header
    if samples is None:
        samples = CounterSamples.concat(parse_perfquery(text, t, src, warnings, cc) for text, t, src in outputs)
    return samples.merged()
