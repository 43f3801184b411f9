"""Read ``perfquery -T`` (PortExtendedSpeedsCounters) in both layouts infiniband-diags prints.

``perfquery.c`` (rdma-core ``infiniband-diags``) prints ``# <name> counters: <portid> port <n>`` and then
libibmad's dump of the attribute, one ``Name:....value`` line per field (names padded with dots to 32
characters, ``fields.c``):

* ``PortExtendedSpeedsCounters``: ``PortSelect``, ``CounterSelect`` (hex), ``SyncHeaderErrorCounter``,
  ``UnknownBlockCounter`` (16 bits), ``ErrorDetectionCounterLane0..11`` (16 bits),
  ``FECCorrectableBlockCtrLane0..11`` and ``FECUncorrectableBlockCtrLane0..11`` (32 bits);
* ``PortExtendedSpeedsCounters with RS-FEC Active`` (when ClassPortInfo has IsPMRSFECCountersSupported
  and PortInfoExtended reports RS-FEC active): the same first four, ``FECCorrectableSymbolCtrLane0..11``,
  ``PortFECCorrectableBlockCtr``, ``PortFECUncorrectableBlockCtr``, ``PortFECCorrectedSymbolCtr``.

``<portid>`` is ``Lid 12``, ``Lid 12 Gid <gid>`` or a ``DR path ...``; ports are keyed ``lid:12`` (or the
DR path) and the port number, since the output names no GUID. The dump goes through a 1536-byte buffer
(``common_func``): a block that fills it loses its last fields, and its last printed value may be cut,
so that value is dropped with a warning. A 16-bit counter at 65535 has saturated (a warning): errors past it are
not counted, so it is not read (a stuck lane would give a BER of 0): a saturated lane leaves every lane's and the
port's raw errors unread, a saturated sync header or unknown block counter the effective errors (IBA
PortExtendedSpeedsCounters; the counters stop at all ones, they do not wrap).

Counts become: ``raw_errors_lane`` error detections per lane (corrected symbols with RS-FEC),
``raw_errors`` their sum (``PortFECCorrectedSymbolCtr`` with RS-FEC), ``fec_corrected`` and
``fec_uncorrectable`` blocks, ``eff_errors`` uncorrectable blocks plus sync header and unknown block
errors. Each is at least one bit per count, so BER computed from them (:func:`.grade.ber_from_deltas`)
is a lower bound. The output carries neither speed nor time: the caller gives both.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import FormatError
from ..topology.limits import MAX_NODE_PORTS, MAX_UNICAST_LID
from ._lines import Skipper, lines_of
from .records import LANES, Builder, HealthRecords

__all__ = ["read", "looks_like"]

_HEADER = re.compile(r"# PortExtendedSpeedsCounters( with RS-FEC Active)? counters: "
                     r"(?:Lid (\d{1,9})(?: Gid [0-9A-Fa-f:.]+)?|(DR path [^\n]*?)) port (\d{1,9})[ \t]*")
_FIELD = re.compile(r"(\w+):\.*([^\s.]\S*)[ \t]*")
_COMMON = ("PortSelect", "CounterSelect", "SyncHeaderErrorCounter", "UnknownBlockCounter")
_PLAIN = (*_COMMON, *(f"ErrorDetectionCounterLane{i}" for i in range(12)),
          *(f"FECCorrectableBlockCtrLane{i}" for i in range(12)),
          *(f"FECUncorrectableBlockCtrLane{i}" for i in range(12)))
_RSFEC = (*_COMMON, *(f"FECCorrectableSymbolCtrLane{i}" for i in range(12)),
          "PortFECCorrectableBlockCtr", "PortFECUncorrectableBlockCtr", "PortFECCorrectedSymbolCtr")
_BITS16 = {"SyncHeaderErrorCounter", "UnknownBlockCounter", *(f"ErrorDetectionCounterLane{i}" for i in range(12))}
#: Size of ``common_func``'s buffer in perfquery.c, the last byte being the string's end.
DUMP_BUFFER = 1536


def looks_like(text: str) -> bool:
    """Whether ``text`` holds a ``perfquery -T`` block header."""
    return "# PortExtendedSpeedsCounters" in text


def read(text: str, source: str = "perfquery -T", warnings: list | None = None) -> HealthRecords:
    """The ports of ``perfquery -T`` output (one or more blocks, several runs concatenated)."""
    warnings = warnings if warnings is not None else []
    lines = lines_of(text, source, warnings)
    skip = Skipper(source, "perfquery", warnings)
    out = Builder(source)
    block: dict | None = None

    def close() -> None:
        if block is not None:
            _finish(block, out, source, warnings)

    for i, ln in enumerate(lines, 1):
        if not ln.strip():
            continue
        if ln.startswith("#"):
            m = _HEADER.fullmatch(ln.rstrip())
            if m is None:
                close()
                block = None
                skip.skip(i, ln)
                continue
            close()
            rsfec, lid, dr, port = m.group(1) is not None, m.group(2), m.group(3), int(m.group(4))
            if lid is not None and not 0 < int(lid) <= MAX_UNICAST_LID:
                raise FormatError(source, i, f"LID {lid} out of range 1..{MAX_UNICAST_LID}")
            if port > MAX_NODE_PORTS and port != 255:
                raise FormatError(source, i, f"port {port} out of range 0..{MAX_NODE_PORTS} (255: all ports)")
            block = {"line": i, "rsfec": rsfec, "name": f"lid:{lid}" if lid else dr, "port": port,
                     "fields": {}, "chars": 0, "last": None, "last_len": 0}
            continue
        m = _FIELD.fullmatch(ln.strip())
        if m is None or block is None:
            if block is not None:
                close()
                block = None
            skip.skip(i, ln)
            continue
        name, value = m.group(1), m.group(2)
        layout = _RSFEC if block["rsfec"] else _PLAIN
        if name not in layout:
            attr = "PortExtendedSpeedsCounters" + (" with RS-FEC Active" if block["rsfec"] else "")
            raise FormatError(source, i, f"{name} is not a field of {attr}")
        if name in block["fields"]:
            raise FormatError(source, i, f"{name} printed twice in one block (header at line {block['line']})")
        try:
            number = int(value, 16) if value.startswith("0x") else int(value)
        except ValueError:
            raise FormatError(source, i, f"{name}: {value!r} is not a number") from None
        if number >= 1 << 64:
            raise FormatError(source, i, f"{name}: {value} does not fit the counter")
        block["fields"][name] = (number, i)
        block["chars"] += len(ln) + 1
        block["last"], block["last_len"] = name, len(ln)
    close()
    skip.finish()
    return out.build()


def _finish(block: dict, out: Builder, source: str, warnings: list) -> None:
    fields = block["fields"]
    layout = _RSFEC if block["rsfec"] else _PLAIN
    # libibmad writes a line into what is left of the buffer less 2 bytes: a last line of exactly that length
    # may have been cut (it is the only one that can be)
    room = DUMP_BUFFER - (block["chars"] - block["last_len"] - 1) - 2 if block["last"] is not None else -1
    if len(fields) < len(layout) and block["last_len"] == room:
        _, line = fields.pop(block["last"])
        warnings.append({"line": line, "text": block["last"],
                         "reason": f"perfquery's {DUMP_BUFFER}-byte dump buffer filled: the last printed value may "
                                   "be cut short, so it is not read, and the fields after it were not printed"})
    elif len(fields) < len(layout):
        missing = [f for f in layout if f not in fields]
        warnings.append({"line": block["line"], "text": "",
                         "reason": f"{len(missing)} fields missing from the block ({missing[0]} ...): not read"})
    saturated = [name for name, (value, _line) in fields.items() if name in _BITS16 and value == 0xFFFF]
    if saturated:
        warnings.append({"line": fields[saturated[0]][1], "text": ", ".join(saturated)[:120],
                         "reason": f"{len(saturated)} 16-bit counters saturated at 65535: errors since are not "
                                   "counted (not read: their BER is unknown)"})
    stuck = set(saturated)

    def get(name: str) -> float:
        return float(fields[name][0]) if name in fields and name not in stuck else np.nan

    values: dict = {}
    if block["rsfec"]:
        lanes = [get(f"FECCorrectableSymbolCtrLane{i}") for i in range(LANES)]
        total = get("PortFECCorrectedSymbolCtr")
        values["raw_errors"] = total if not np.isnan(total) else _sum(lanes)
        values["fec_corrected"] = get("PortFECCorrectableBlockCtr")
        values["fec_uncorrectable"] = get("PortFECUncorrectableBlockCtr")
    else:
        lanes = [get(f"ErrorDetectionCounterLane{i}") for i in range(LANES)]
        if any(name.startswith("ErrorDetection") for name in stuck):  # the worst lane unknown: so is the raw BER
            lanes = [np.nan] * LANES
        corr = [get(f"FECCorrectableBlockCtrLane{i}") for i in range(LANES)]
        values["raw_errors"] = _sum(lanes) + _sum(corr)
        values["fec_corrected"] = _sum(corr)
        values["fec_uncorrectable"] = _sum([get(f"FECUncorrectableBlockCtrLane{i}") for i in range(LANES)])
    values["raw_errors_lane"] = lanes
    values["eff_errors"] = values["fec_uncorrectable"] + get("SyncHeaderErrorCounter") + get("UnknownBlockCounter")
    out.add(0, block["name"], block["port"], values, block["line"])


def _sum(values: list[float]) -> float:
    """Sum of the values read (NaN when none was)."""
    arr = np.array(values)
    return float(np.nansum(arr)) if (~np.isnan(arr)).any() else np.nan
