"""Stream the LFTs of a :class:`Routing` as ``opensm-lfts.dump`` or ``ibroute`` text, one bytes chunk per switch.

Every switch's table lists the same destination LIDs with the same comments; only the out ports
differ. So the entry line of every LID is formatted once, with ``000`` for the port, into one byte
template, and each switch's table is that template (or the lines of its routed LIDs, picked with a
byte mask) with the three port digits written in through a ``(256, 3)`` digit table: numpy work per
switch, no Python per entry. :func:`iter_lfts` yields the chunks, :func:`write_to` writes them to a
binary file, so a dump of hundreds of MB never sits in memory as one string.
:func:`fabric_engine.formats.opensm_lfts.write` joins them for small callers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

from ..routing.tables import NO_PATH, Routing
from ..topology import KIND_HOST

__all__ = ["STYLES", "ENCODING", "iter_lfts", "write_to"]

STYLES: tuple[str, ...] = ("opensm", "ibroute")
#: Node names go out as UTF-8; ``surrogateescape`` keeps undecodable bytes read from a file as they were.
ENCODING: tuple[str, str] = ("utf-8", "surrogateescape")
_DIGITS = np.frombuffer("".join(f"{p:03d}" for p in range(256)).encode(), dtype=np.uint8).reshape(256, 3)


class _Template:
    """Entry lines of LIDs ``1..top`` with port ``000``: bytes, line lengths and where each port's digits go."""

    def __init__(self, routing: Routing, style: str) -> None:
        f = routing.fabric
        top = routing.lft.shape[1] - 1
        owner = f.lid_to_node.tolist()
        slot = f.lid_to_slot.tolist()
        guids = f.port_guid.tolist()
        kinds = ["Channel Adapter" if k == KIND_HOST else "Switch" for k in f.kind.tolist()]
        names = f.node_name.tolist()
        open_, close = (" # ", "\n") if style == "opensm" else (" : (", ")\n")
        heads: list[bytes] = []
        lines: list[bytes] = []
        for d in range(1, top + 1):
            n = owner[d] if d < len(owner) else -1
            info = f"{kinds[n]} portguid 0x{guids[slot[d]]:016x}: '{names[n]}'" if n >= 0 else "unknown"
            head = f"0x{d:04x} ".encode()
            heads.append(head)
            lines.append(head + b"000" + f"{open_}{info}{close}".encode(*ENCODING))
        self.lengths = np.fromiter(map(len, lines), dtype=np.int64, count=top)
        self.digit_at = np.fromiter(map(len, heads), dtype=np.int64, count=top)
        self.bytes = np.frombuffer(b"".join(lines), dtype=np.uint8)
        self._all_slots = self._digit_slots(self.lengths, self.digit_at)
        self._keep: np.ndarray | None = None  # the last routed-LID mask and its lines and digit slots
        self._picked = (self.bytes, self._all_slots)

    @staticmethod
    def _digit_slots(lengths: np.ndarray, digit_at: np.ndarray) -> np.ndarray:
        """Byte offsets ``(lines, 3)`` of the port digits in lines of ``lengths`` laid end to end."""
        starts = np.cumsum(lengths) - lengths
        return (starts + digit_at)[:, None] + np.arange(3)

    def table(self, ports: np.ndarray) -> np.ndarray:
        """The entry lines of one switch's LFT row ``ports`` (LIDs ``1..top``), NO_PATH entries left out."""
        keep = ports != NO_PATH
        if keep.all():
            body, slots = self.bytes, self._all_slots
        else:
            if self._keep is None or not np.array_equal(keep, self._keep):
                # Switches mostly share one set of routed LIDs: pick its lines once.
                self._keep = keep
                self._picked = (self.bytes[np.repeat(keep, self.lengths)],
                                self._digit_slots(self.lengths[keep], self.digit_at[keep]))
            body, slots = self._picked
            ports = ports[keep]
        out = body.copy()
        out[slots] = _DIGITS[ports]
        return out


def iter_lfts(routing: Routing, style: str = "opensm") -> Iterator[bytes]:
    """The LFT text of ``routing`` as UTF-8 bytes, one chunk per switch (header, routed entries, footer).

    Byte for byte what :func:`~fabric_engine.formats.opensm_lfts.write` returns, encoded. Only routed
    entries are written (NO_PATH and LID 0 are left out, as OpenSM and ``ibroute`` do). An unknown
    ``style`` raises ``ValueError`` here, before the first chunk.
    """
    if style not in STYLES:
        raise ValueError(f"unknown LFT style {style!r}; use 'opensm' or 'ibroute'")
    return _chunks(routing, style)


def _chunks(routing: Routing, style: str) -> Iterator[bytes]:
    f = routing.fabric
    lft = routing.lft
    top = lft.shape[1] - 1
    if f.num_switches == 0:
        yield b"\n"
        return
    template = _Template(routing, style)
    names, guids, lids = f.node_name[f.switches].tolist(), f.guid[f.switches].tolist(), f.lid[f.switches].tolist()
    for s, (name, guid, lid) in enumerate(zip(names, guids, lids, strict=True)):
        row = lft[s, 1:]
        body = template.table(row)
        if style == "opensm":
            head = f"Unicast lids [0-{top}] of switch Lid {lid} guid 0x{guid:016x} ('{name}'):\n"
            foot = f"{top} lids dumped\n"
        else:
            head = (f"Unicast lids [0x0-0x{top:x}] of switch Lid {lid} guid 0x{guid:016x} ({name}):\n"
                    "  Lid  Out   Destination\n       Port     Info \n")
            foot = f"{int(np.count_nonzero(row != NO_PATH))} valid lids dumped \n"
        yield b"".join((head.encode(*ENCODING), body, foot.encode()))


def write_to(routing: Routing, file: BinaryIO, style: str = "opensm") -> int:
    """Write the LFT text of ``routing`` to the binary ``file`` table by table; returns the bytes written."""
    written = 0
    for chunk in iter_lfts(routing, style):
        file.write(chunk)
        written += len(chunk)
    return written
