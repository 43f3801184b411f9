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
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

import numpy as np

from ..errors import FormatError
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NODE_PORTS, MAX_UNICAST_LID
from .counters import BASIC_BITS, COLUMN, COLUMNS, EXTENDED_COLUMNS, CounterSamples

try:  # built by ``pip install -e .`` (setup.py); the regular expressions below read the same lines, slower
    from . import _perfquery
except ImportError:  # pragma: no cover - a checkout whose extensions were not built
    _perfquery = None

__all__ = ["parse_perfquery", "parse_perfquery_many"]

_HEADER = re.compile(r"^# Port (extended )?counters: Lid (\d+) port (\d+)\b[^\n]*$", re.M)
# A field's value starts at its first character that is not a dot, so the dots and the value never compete
# for the same characters: matching is linear in the line's length.
_FIELD = re.compile(r"^(\w+):\.*([^\s.]\S*)[ \t]*$", re.M)
# Header or field line, in one pass: (ext, lid, port, name, value).
_LINE = re.compile(r"^(?:# Port (extended )?counters: Lid (\d+) port (\d+)\b[^\n]*|(\w+):\.*([^\s.]\S*)[ \t]*)$",
                   re.M)
_ALIASES = {"PortMultiCastXmitPkts": "PortMulticastXmitPkts", "PortMultiCastRcvPkts": "PortMulticastRcvPkts"}
_COL = {**COLUMN, **{alias: COLUMN[name] for alias, name in _ALIASES.items()}}
_NAMES = tuple(name.encode() for name in _COL)
_NAME_COL = np.array(list(_COL.values()), dtype=np.int64)
_BASIC_W = np.array([BASIC_BITS.get(n, 64) for n in COLUMNS], dtype=np.uint8)
_EXT_W = np.array([64 if n in EXTENDED_COLUMNS else BASIC_BITS.get(n, 64) for n in COLUMNS], dtype=np.uint8)


def _number(digits: str) -> int:
    """``int(digits)`` for header numbers; anything longer than 9 digits is out of every range anyway."""
    return int(digits) if len(digits) <= 9 else 1 << 40


def _counter_value(raw: str) -> int | None:
    """The value of a counter field, or ``None`` unless it is a non-negative 64-bit decimal integer."""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 20 and int(raw) < 1 << 64 else None


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _check_stray_lines(text: str, source: str, fields: int) -> None:
    """Raise on the first line that is neither a header, a field, a comment nor blank.

    Fast path: count lines with ``str.count``; only on a mismatch look at each line.
    """
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    blank = text.count("\n\n") + (1 if text.startswith("\n") else 0)
    comments = text.count("\n#") + (1 if text.startswith("#") else 0)
    if lines - blank - comments == fields:
        return
    for no, ln in enumerate(text.splitlines(), 1):
        if ln.strip() and not ln.startswith("#") and not _FIELD.match(ln):
            raise FormatError(source, no, f"not a perfquery counter line: {ln.strip()[:80]!r}")


def parse_perfquery(text: str, t: float, source: str = "perfquery") -> CounterSamples:
    """Parse one ``perfquery`` output (any of the forms above) read at time ``t``.

    Parameters
    ----------
    text : str
        The program's standard output.
    t : float
        When the values were read (seconds since the epoch); the collector uses the
        moment the command returned.
    source : str
        Name for error messages (file or command line).

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
        0..255 (255: all ports), more than 1,048,576 blocks, or a line that is not
        perfquery output.

    Examples
    --------
    >>> s = parse_perfquery("# Port extended counters: Lid 2 port 3\\nPortXmitData:......42\\n", t=1.0)
    >>> int(s.lid[0]), int(s.port[0]), int(s.values[0, COLUMN["PortXmitData"]])
    (2, 3, 42)
    """
    if "\r" in text:  # CR LF line ends (a capture saved on Windows): read as LF
        text = text.replace("\r\n", "\n")
    if _perfquery is not None:
        return _parse_lexed(text, t, source)
    matches = _LINE.findall(text)
    if not matches:
        _check_stray_lines(text, source, 0)
        return CounterSamples.empty()
    ext_s, lid_s, port_s, names, raw = zip(*matches, strict=True)
    is_hdr = np.fromiter(map(len, lid_s), dtype=np.int64, count=len(matches)) > 0
    _check_stray_lines(text, source, len(matches) - int(is_hdr.sum()))
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
        raise FormatError(source, _locate(text, int(block[bad]), names[bad]),
                          f"{names[bad]}: {raw[bad][:40]!r} is not a non-negative integer of at most 64 bits") from None
    ext = np.array([ext_s[i] == "extended " for i in hdr], dtype=bool)
    lid = np.array([_number(lid_s[i]) for i in hdr], dtype=np.int64)
    port = np.array([_number(port_s[i]) for i in hdr], dtype=np.int64)
    out_of_range = (port > MAX_NODE_PORTS) & (port != 255) | (lid > MAX_UNICAST_LID) | (lid <= 0)
    if out_of_range.any():
        b = int(np.flatnonzero(out_of_range)[0])
        raise FormatError(source, _locate(text, b, None),
                          f"lid {lid_s[hdr[b]][:12]} port {port_s[hdr[b]][:12]} out of range "
                          f"(LIDs 1..{MAX_UNICAST_LID}, ports 0..{MAX_NODE_PORTS} or 255 for all ports)")
    c = len(COLUMNS)
    values = np.zeros((nblocks, c), np.uint64)
    bits = np.zeros((nblocks, c), np.uint8)
    rows, cc = block[keep], cols[keep]
    values[rows, cc] = vals
    width = np.where(ext[:, None], _EXT_W[None, :], _BASIC_W[None, :])
    bits[rows, cc] = width[rows, cc]
    too_wide = (bits < 64) & (values >> np.minimum(bits, 63).astype(np.uint64) > 0)
    if too_wide.any():
        b, col = (int(x[0]) for x in np.nonzero(too_wide))
        raise FormatError(source, _locate(text, b, COLUMNS[col]),
                          f"{COLUMNS[col]}: {int(values[b, col])} does not fit in {int(bits[b, col])} bits")
    stamps = np.where(bits > 0, float(t), 0.0)
    return CounterSamples(lid.astype(np.int32), port.astype(np.int16), values, bits, stamps)


def _parse_lexed(text: str, t: float, source: str) -> CounterSamples:
    """:func:`parse_perfquery` on the lines of the compiled lexer (``_perfquery.c``), with the same checks.

    Measured (tests/bench/bench_telemetry.py): a sweep of 40,960 switch ports, 55 MB of text,
    took 4.3 s through the regular expressions and their Python strings; the lexer reads it in
    a tenth of a second, and what is left here works on arrays.
    """
    raw = text.encode("utf-8", "surrogateescape")
    kind, ext_b, line_b, a_b, b_b, value_b, stray, _ = _perfquery.lex(raw, _NAMES)
    kind = np.frombuffer(kind or b"", np.int8)
    if stray:
        ln = text.splitlines()[stray - 1] if stray <= len(text.splitlines()) else ""
        raise FormatError(source, int(stray), f"not a perfquery counter line: {ln.strip()[:80]!r}")
    if len(kind) == 0:
        return CounterSamples.empty()
    line = np.frombuffer(line_b, np.int64)
    a, b = np.frombuffer(a_b, np.int64), np.frombuffer(b_b, np.int64)
    is_hdr = kind == 0
    if not is_hdr[0]:
        name = text.splitlines()[int(line[0]) - 1].split(":", 1)[0]
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
        text_line = text.splitlines()[int(line[bad[0]]) - 1]
        name, value = text_line.split(":", 1)
        value = value.lstrip(".").strip()[:40]
        raise FormatError(source, int(line[bad[0]]),
                          f"{name}: {value!r} is not a non-negative integer of at most 64 bits")
    lid, port = a[hdr], b[hdr]
    ext = np.frombuffer(ext_b, np.int8)[hdr].astype(bool)
    out_of_range = (port > MAX_NODE_PORTS) & (port != 255) | (lid > MAX_UNICAST_LID) | (lid <= 0)
    if out_of_range.any():
        k = int(np.flatnonzero(out_of_range)[0])
        hl = text.splitlines()[int(line[hdr[k]]) - 1]
        m = _HEADER.match(hl)
        raise FormatError(source, int(line[hdr[k]]),
                          f"lid {m.group(2)[:12]} port {m.group(3)[:12]} out of range "
                          f"(LIDs 1..{MAX_UNICAST_LID}, ports 0..{MAX_NODE_PORTS} or 255 for all ports)")
    keep = np.flatnonzero(fld & (a >= 0))
    c = len(COLUMNS)
    values = np.zeros((nblocks, c), np.uint64)
    bits = np.zeros((nblocks, c), np.uint8)
    rows, cc = block[keep], _NAME_COL[a[keep]]
    values[rows, cc] = np.frombuffer(value_b, np.uint64)[keep]
    width = np.where(ext[:, None], _EXT_W[None, :], _BASIC_W[None, :])
    bits[rows, cc] = width[rows, cc]
    too_wide = (bits < 64) & (values >> np.minimum(bits, 63).astype(np.uint64) > 0)
    if too_wide.any():
        blk, col = (int(x[0]) for x in np.nonzero(too_wide))
        raise FormatError(source, _locate(text, blk, COLUMNS[col]),
                          f"{COLUMNS[col]}: {int(values[blk, col])} does not fit in {int(bits[blk, col])} bits")
    stamps = np.where(bits > 0, float(t), 0.0)
    return CounterSamples(lid.astype(np.int32), port.astype(np.int16), values, bits, stamps)


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
    output has anything to complain about: the caller then parses them one by one, which
    raises the very error :func:`parse_perfquery` gives.
    """
    parts, stamps = [], []
    for text, t, _ in outputs:
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        kind, ext_b, _, a_b, b_b, value_b, stray, _ = _perfquery.lex(text.encode("utf-8", "surrogateescape"), _NAMES)
        if stray:
            return None
        kind = np.frombuffer(kind or b"", np.int8)
        if len(kind) == 0:
            continue
        headers = int(np.count_nonzero(kind == 0))
        if kind[0] != 0 or headers > MAX_FABRIC_PORTS:
            return None
        parts.append((kind, np.frombuffer(ext_b, np.int8), np.frombuffer(a_b, np.int64), np.frombuffer(b_b, np.int64),
                      np.frombuffer(value_b, np.uint64)))
        stamps.append((float(t), headers))
    if not parts:
        return CounterSamples.empty()
    kind, ext, a, b, value = (np.concatenate(x) for x in zip(*parts, strict=True))
    is_hdr = kind == 0
    fld = ~is_hdr
    if (fld & (b != 0) & (a >= 0)).any():
        return None
    hdr = np.flatnonzero(is_hdr)
    lid, port, ext = a[hdr], b[hdr], ext[hdr].astype(bool)
    if ((port > MAX_NODE_PORTS) & (port != 255) | (lid > MAX_UNICAST_LID) | (lid <= 0)).any():
        return None
    block = np.cumsum(is_hdr) - 1
    keep = np.flatnonzero(fld & (a >= 0))
    values = np.zeros((len(hdr), len(COLUMNS)), np.uint64)
    bits = np.zeros((len(hdr), len(COLUMNS)), np.uint8)
    rows, cc = block[keep], _NAME_COL[a[keep]]
    values[rows, cc] = value[keep]
    bits[rows, cc] = np.where(ext[rows], _EXT_W[cc], _BASIC_W[cc])
    if ((bits < 64) & (values >> np.minimum(bits, 63).astype(np.uint64) > 0)).any():
        return None
    t_block = np.repeat([t for t, _ in stamps], [n for _, n in stamps])
    return CounterSamples(lid.astype(np.int32), port.astype(np.int16), values, bits,
                          np.where(bits > 0, t_block[:, None], 0.0))


def parse_perfquery_many(outputs: Iterable[tuple[str, float, str]]) -> CounterSamples:
    """Parse many ``(text, t, source)`` outputs and merge them into one row per port.

    Errors are those of :func:`parse_perfquery` on the first output that has one.
    """
    outputs = list(outputs)
    samples = _parse_many_lexed(outputs) if _perfquery is not None else None
    if samples is None:
        samples = CounterSamples.concat(parse_perfquery(text, t, src) for text, t, src in outputs)
    return samples.merged()
