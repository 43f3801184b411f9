"""Port counters of an ibdiagnet capture as :class:`~fabric_engine.telemetry.counters.CounterSamples`.

``ibdiagnet2.pm`` has one block per port: a header line
``Port=1 Lid=0x0003 GUID=0x... Device=54002 Port Name=...`` between dashed lines, then one
``name=value`` line per counter (snake_case names, ``0x`` hex values). The ``PM_INFO`` section of
``ibdiagnet2.db_csv`` has the same counters as CSV columns in CamelCase. Both name the
``PortCounters`` fields (``symbol_error_counter`` / ``SymbolErrorCounter`` ...), their
``PortCountersExtended`` 64-bit versions (``port_xmit_data_extended`` / ``PortXmitDataExtended``)
and ibdiagnet's 64-bit error counters (``..._extended`` / ``...Ext``).

A name is matched with its underscores removed, case-insensitively, against the counters of
:data:`~fabric_engine.telemetry.counters.COLUMNS`; per port the widest reading of a counter wins,
so the 64-bit data counters replace the 32-bit ones that saturate. Counters ibweb does not track
(Mellanox's retransmission or FEC counters) are skipped. A value of ``N/A``, ``NA``, ``ERR``, ``-1``
or ``0xfffffffffffffffe`` (what ibdiagnet writes when a device does not support a counter) is no
reading. Anything else that is not a number, or is too wide for its counter, is a
:class:`FormatError` naming the line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from ..errors import FormatError
from ..telemetry.counters import BASIC_BITS, COLUMN, COLUMNS, DETAIL_BITS, EXTENDED_COLUMNS, CounterSamples
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NODE_PORTS, MAX_UNICAST_LID

__all__ = ["counter_column", "samples_from_columns", "counters_from_pm"]

_ABSENT = 0xFFFFFFFFFFFFFFFE  # ibdiagnet's "not supported" value, also our marker for "no reading"
_NO_READING = frozenset({"", "N/A", "NA", "ERR", "-1", "0xfffffffffffffffe", "0xFFFFFFFFFFFFFFFE"})
_BY_KEY: dict[str, tuple[int, int]] = {}
for _name in COLUMNS:
    _key = _name.lower()
    _BY_KEY[_key] = (COLUMN[_name], {**BASIC_BITS, **DETAIL_BITS}.get(_name, 64))
    for _suffix in ("extended", "ext"):
        _BY_KEY.setdefault(_key + _suffix, (COLUMN[_name], 64))
# Spellings other tools' readers of ibdiagnet2.pm use.
for _alias, _name in (("linkdowncounter", "LinkDownedCounter"), ("portxmitdiscard", "PortXmitDiscards"),
                      ("excessivebuffererrors", "ExcessiveBufferOverrunErrors")):
    _BY_KEY[_alias] = (COLUMN[_name], BASIC_BITS[_name])
for _name in EXTENDED_COLUMNS[4:]:  # unicast and multicast packets exist only in the 64-bit attribute
    _BY_KEY[_name.lower()] = (COLUMN[_name], 64)


def counter_column(name: str) -> tuple[int, int] | None:
    """``(column, bits)`` of a counter named as ibdiagnet names it, or ``None`` for one ibweb does not track."""
    return _BY_KEY.get(name.replace("_", "").lower())


def _number(v: str) -> int:
    v = v.strip()
    if v in _NO_READING:
        return _ABSENT
    n = int(v, 16) if v[:2] in ("0x", "0X") else int(v)
    if not 0 <= n < 1 << 64:
        raise ValueError(v)
    return n


def samples_from_columns(columns: Mapping[str, tuple[list[str], np.ndarray]], lid: np.ndarray, port: np.ndarray,
                         row_lines: np.ndarray, source: str, t: float) -> CounterSamples:
    """Samples of ports ``(lid, port)`` (read on ``row_lines``) from ``name -> (values, line of each value)``."""
    bad = np.flatnonzero((lid < 1) | (lid > MAX_UNICAST_LID) | (port < 0) | (port > MAX_NODE_PORTS) & (port != 255))
    if bad.size:
        i = int(bad[0])
        raise FormatError(source, int(row_lines[i]), f"lid {int(lid[i])} port {int(port[i])} out of range "
                                                     f"(LIDs 1..{MAX_UNICAST_LID}, ports 0..{MAX_NODE_PORTS} or 255)")
    n, c = len(lid), len(COLUMNS)
    values = np.zeros((n, c), np.uint64)
    bits = np.zeros((n, c), np.uint8)
    for name, (raw, lines) in columns.items():
        found = counter_column(name)
        if found is None:
            continue
        col, width = found
        try:
            nums = np.array([_number(v) for v in raw], dtype=np.uint64)
        except ValueError:
            i = next(i for i, v in enumerate(raw) if not _valid(v))
            raise FormatError(source, int(lines[i]),
                              f"{name}: {raw[i].strip()[:40]!r} is not a counter value") from None
        present = nums != _ABSENT
        if width < 64:
            wide = np.flatnonzero(present & (nums >> np.uint64(width) != 0))
            if wide.size:
                i = int(wide[0])
                raise FormatError(source, int(lines[i]), f"{name}: {int(nums[i])} does not fit in {width} bits")
        take = present & (bits[:, col] <= width)
        values[take, col] = nums[take]
        bits[take, col] = width
    return CounterSamples(lid.astype(np.int32), port.astype(np.int16), values, bits,
                          np.where(bits > 0, float(t), 0.0))


def _valid(v: str) -> bool:
    try:
        _number(v)
    except ValueError:
        return False
    return True


_HEADER = re.compile(r"Port=(\d+)\s+Lid=(0x[0-9A-Fa-f]+|\d+)\s+GUID=(0x[0-9A-Fa-f]+)\s+Device=\S*\s+Port Name=.*")
_FIELD = re.compile(r"(\w+)=(\S*)")


def counters_from_pm(text: str, source: str = "ibdiagnet2.pm", t: float = 0.0) -> CounterSamples:
    """Port counters of an ``ibdiagnet2.pm``; ``t`` is when the sweep ran (the file carries no time)."""
    lids: list[int] = []
    ports: list[int] = []
    heads: list[int] = []
    cols: dict[str, tuple[list[str], list[int]]] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] == "#" or not line.strip("-"):
            continue
        m = _FIELD.fullmatch(line)
        if m is not None:
            if not lids:
                raise FormatError(source, lineno, f"counter {m.group(1)[:40]!r} before any 'Port=... Lid=...' line")
            name = m.group(1)
            if counter_column(name) is not None:
                vals, lines = cols.setdefault(name, ([], []))
                missing = len(lids) - 1 - len(vals)
                if missing < 0:
                    raise FormatError(source, lineno, f"counter {name} given twice for one port")
                vals.extend([""] * missing)
                lines.extend([lineno] * missing)
                vals.append(m.group(2))
                lines.append(lineno)
            continue
        m = _HEADER.fullmatch(line)
        if m is None:
            raise FormatError(source, lineno, f"not an ibdiagnet2.pm line: {line[:80]!r}")
        if len(lids) >= MAX_FABRIC_PORTS:
            raise FormatError(source, lineno, f"more than {MAX_FABRIC_PORTS:,} ports: more than one subnet has")
        lid = m.group(2)
        lids.append(min(int(lid, 16) if lid[:2] == "0x" else int(lid[:9]), 1 << 40))
        ports.append(min(int(m.group(1)[:9]), 1 << 20))
        heads.append(lineno)
    n = len(lids)
    columns = {}
    for name, (vals, lines) in cols.items():
        pad = n - len(vals)
        columns[name] = (vals + [""] * pad, np.array(lines + [lines[-1]] * pad, dtype=np.int64))
    return samples_from_columns(columns, np.array(lids, dtype=np.int64), np.array(ports, dtype=np.int64),
                                np.array(heads, dtype=np.int64), source, t)
