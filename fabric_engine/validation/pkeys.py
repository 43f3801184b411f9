"""``smpquery pkeys`` output read into P_Key tables, one per port.

``smpquery`` (infiniband-diags, ``smpquery.c``, ``pkey_table``) asks NodeInfo (and SwitchInfo for a switch's
external port) for the table's capacity, then prints every block of 32 entries as rows of eight::

    %4u: 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x

(the index of the row's first entry, then eight P_Keys in host order) and a last line
``%d pkeys capacity for this port``. It prints neither the LID nor the port it was asked about, so a
capture names them: each table follows the command line that printed it, as a terminal shows it
(``$ smpquery pkeys 5 1``, ``[root@ufm ~]# smpquery PKeyTable 5 1``, ``# smpquery pkeys 5 1`` as the collector
writes it) or, with ``-G``, the port GUID (``smpquery -G pkeys 0xb83fd20300000011 1``). The op's name matches
case-insensitively (``match_op``); the port defaults to 0 as in ``smpquery``. A zero entry is an empty slot;
bit 15 of a P_Key is its membership (full when set, IBA 10.9.1) and the low 15 bits its base.

>>> t = read_pkeys("$ smpquery pkeys 5 1\\n   0: 0x7fff 0x8001 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\\n"
...                "8 pkeys capacity for this port\\n").tables[0]
>>> t.lid, t.port, [hex(k) for k in t.keys], t.capacity
(5, 1, ['0x7fff', '0x8001'], 8)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..captured import Warning, noise, strip_bom, warning
from ..errors import FormatError

__all__ = ["PKeyTable", "PKeyCapture", "read_pkeys", "MAX_PKEYS_BYTES", "base_key", "FULL_MEMBER"]

#: Largest capture read: a 64-entry table is about 500 bytes; 200,000 ports fit.
MAX_PKEYS_BYTES = 128 << 20
FULL_MEMBER = 0x8000
# options of smpquery (ibdiag_common.c's common options and smpquery's own) that take a value
_VALUED = {"-C", "--Ca", "-P", "--Port", "-t", "--timeout", "-y", "--m_key", "--node-name-map", "--config",
           "-z", "--sm_port", "--Ca_name"}
_OPS = {"pkeys", "pkeytable"}
_INT = re.compile(r"0x[0-9a-fA-F]{1,16}|\d{1,20}")
_ZERO_ROW = " 0x0000" * 8
_ROW = re.compile(r"(\d{1,6}):((?:\s+0x[0-9a-fA-F]{4}){8})")
_CAPACITY = re.compile(r"(\d{1,6}) pkeys capacity for this port")


def base_key(pkey: int) -> int:
    """The P_Key without its membership bit."""
    return pkey & 0x7FFF


@dataclass(frozen=True)
class PKeyTable:
    """The non-zero P_Keys of one port (in table order); the port is named by ``lid`` or, with ``-G``, ``guid``."""

    lid: int | None
    guid: int | None
    port: int
    keys: tuple[int, ...]
    capacity: int
    line: int = 0

    @property
    def address(self) -> str:
        return f"LID {self.lid}" if self.lid is not None else f"GUID 0x{self.guid:016x}"


@dataclass(frozen=True)
class PKeyCapture:
    source: str
    tables: tuple[PKeyTable, ...]
    warnings: list[Warning] = field(default_factory=list)


def _decode(data: str | bytes, source: str) -> str:
    if len(data) > MAX_PKEYS_BYTES:
        raise FormatError(source, None, f"is {len(data)} bytes, more than the limit of {MAX_PKEYS_BYTES}")
    if isinstance(data, bytes):
        try:
            return data.decode()
        except UnicodeDecodeError as exc:
            raise FormatError(source, data[:exc.start].count(b"\n") + 1, "not UTF-8 text") from None
    return data


def _command(line: str, source: str, no: int) -> tuple[int | None, int | None, int] | None:
    """``(lid, guid, port)`` of an ``smpquery pkeys`` command line, ``None`` for any other line (tokens, no regex)."""
    tokens = line.split()
    try:
        at = next(i for i, t in enumerate(tokens) if t.rsplit("/", 1)[-1] == "smpquery")
    except StopIteration:
        return None
    rest, by_guid, i = tokens[at + 1:], False, 0
    while i < len(rest) and rest[i].startswith("-"):  # the options before the op
        opt = rest[i].split("=", 1)[0]
        by_guid |= opt in ("-G", "--Guid", "--guid")
        if opt in ("-D", "--Direct", "-c", "--combined"):
            raise FormatError(source, no, "a table asked by directed route: name the port by LID or GUID")
        i += 2 if opt in _VALUED and "=" not in rest[i] else 1
    if i >= len(rest) or rest[i].lower() not in _OPS:
        return None
    args = rest[i + 1:]
    if not 1 <= len(args) <= 2 or not all(_INT.fullmatch(a) for a in args):
        raise FormatError(source, no, f"expected 'smpquery pkeys <lid|guid> [port]', got {line[:80]!r}")
    port = int(args[1], 0) if len(args) > 1 else 0
    if not 0 <= port <= 255:
        raise FormatError(source, no, f"port {port} is outside 0..255")
    if by_guid:
        return None, int(args[0], 16) if args[0].lower().startswith("0x") else int(args[0]), port
    lid = int(args[0], 0)
    if not 0 < lid < 0xC000:
        raise FormatError(source, no, f"LID {args[0]} is not a unicast LID (1..0xBFFF)")
    return lid, None, port


def read_pkeys(data: str | bytes, source: str = "<smpquery pkeys>") -> PKeyCapture:
    """Every P_Key table of a capture (see the module docstring); raises :class:`FormatError` naming ``source:line``."""
    warnings: list[Warning] = []
    text = strip_bom(_decode(data, source), warnings)
    tables: list[PKeyTable] = []
    head: tuple[int | None, int | None, int, int] | None = None  # lid, guid, port, line of the open table
    keys: list[int] = []
    next_row = 0
    for no, raw in enumerate(text.splitlines(), 1):  # one pass over the lines
        line = raw.strip()
        if not line:
            continue
        if head is not None and line.endswith(_ZERO_ROW) and line[:-len(_ZERO_ROW)].rstrip() == f"{next_row}:":
            next_row += 8  # an empty row, most of every table: no regex, no number read
            continue
        m = _ROW.fullmatch(line)
        if m is not None:
            if head is None:
                raise FormatError(source, no, "a P_Key row before any 'smpquery pkeys <lid> <port>' line naming "
                                              "its port")
            if int(m.group(1)) != next_row:
                raise FormatError(source, no, f"row {m.group(1)} where row {next_row} was expected")
            keys.extend(k for k in (int(v, 16) for v in m.group(2).split()) if k)
            next_row += 8
            continue
        m = _CAPACITY.fullmatch(line)
        if m is not None:
            if head is None:
                raise FormatError(source, no, "a capacity line before any 'smpquery pkeys <lid> <port>' line")
            capacity = int(m.group(1))
            if next_row < capacity:
                raise FormatError(source, no, f"{next_row} entries printed, capacity {capacity}: the table is cut")
            tables.append(PKeyTable(head[0], head[1], head[2], tuple(keys), capacity, head[3]))
            head, keys, next_row = None, [], 0
            continue
        command = _command(line, source, no)
        if command is not None:
            if head is not None:
                raise FormatError(source, head[3], "this table has no 'pkeys capacity for this port' line: cut off")
            head = (*command, no)
            continue
        why = noise(raw)
        if why is None or head is not None:
            raise FormatError(source, no, f"not a line of 'smpquery pkeys': {line[:80]!r}")
        warnings.append(warning(no, raw, why))
    if head is not None:
        raise FormatError(source, head[3], "this table has no 'pkeys capacity for this port' line: cut off")
    if not tables:
        raise FormatError(source, None, "no P_Key table")
    return PKeyCapture(source, tuple(tables), warnings)
