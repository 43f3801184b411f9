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
from .counters import BASIC_BITS, COLUMN, COLUMNS, EXTENDED_COLUMNS, CounterSamples

__all__ = ["parse_perfquery", "parse_perfquery_many"]

_HEADER = re.compile(r"^# Port (extended )?counters: Lid (\d+) port (\d+)\b[^\n]*$", re.M)
_FIELD = re.compile(r"^(\w+):\.*([^\s.][^\n]*?)\s*$", re.M)
# Header or field line, in one pass: (ext, lid, port, name, value).
_LINE = re.compile(r"^(?:# Port (extended )?counters: Lid (\d+) port (\d+)\b[^\n]*|(\w+):\.*(\S+)[ \t]*)$", re.M)
_ALIASES = {"PortMultiCastXmitPkts": "PortMulticastXmitPkts", "PortMultiCastRcvPkts": "PortMulticastRcvPkts"}
_COL = {**COLUMN, **{alias: COLUMN[name] for alias, name in _ALIASES.items()}}
_BASIC_W = np.array([BASIC_BITS.get(n, 64) for n in COLUMNS], dtype=np.uint8)
_EXT_W = np.array([64 if n in EXTENDED_COLUMNS else BASIC_BITS.get(n, 64) for n in COLUMNS], dtype=np.uint8)


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
        a value too wide for its counter, or a line that is not perfquery output.

    Examples
    --------
    >>> s = parse_perfquery("# Port extended counters: Lid 2 port 3\\nPortXmitData:......42\\n", t=1.0)
    >>> int(s.lid[0]), int(s.port[0]), int(s.values[0, COLUMN["PortXmitData"]])
    (2, 3, 42)
    """
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
    cols = np.fromiter(map(_COL.get, names, itertools.repeat(-1)), dtype=np.int64, count=len(matches))
    keep = np.flatnonzero(~is_hdr & (cols >= 0))
    kept_raw = [raw[i] for i in keep]
    try:
        vals = np.array(kept_raw, dtype=np.uint64) if kept_raw else np.zeros(0, np.uint64)
    except (ValueError, OverflowError):
        bad = next(int(i) for i in keep if not raw[i].isdigit())
        raise FormatError(source, _locate(text, int(block[bad]), names[bad]),
                          f"{names[bad]}: {raw[bad]!r} is not a non-negative integer") from None
    ext = np.array([ext_s[i] == "extended " for i in hdr], dtype=bool)
    lid = np.array([int(lid_s[i]) for i in hdr], dtype=np.int64)
    port = np.array([int(port_s[i]) for i in hdr], dtype=np.int64)
    if port.max() > 255 or lid.max() >= 0xC000 or lid.min() <= 0:
        b = int(np.flatnonzero((port > 255) | (lid >= 0xC000) | (lid <= 0))[0])
        raise FormatError(source, _locate(text, b, None), f"lid {lid[b]} port {port[b]} out of range")
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


def _locate(text: str, block: int, name: str | None) -> int:
    """Line number of ``name`` in block ``block`` (error path only)."""
    headers = list(_HEADER.finditer(text))
    start = headers[block].start()
    if name is not None:
        m = re.compile(rf"^{re.escape(name)}:", re.M).search(text, start)
        if m:
            return _line_of(text, m.start())
    return _line_of(text, start)


def parse_perfquery_many(outputs: Iterable[tuple[str, float, str]]) -> CounterSamples:
    """Parse many ``(text, t, source)`` outputs and merge them into one row per port."""
    return CounterSamples.concat(parse_perfquery(text, t, src) for text, t, src in outputs).merged()
