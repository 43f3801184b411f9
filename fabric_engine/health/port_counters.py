"""Symbol errors of the PerfMgt port counters the collector's sweep reads, as health rows for symbol BER.

``perfquery -l <lid> <ports>`` prints ``PortCounters``, whose ``SymbolErrorCounter`` ("minor link errors detected on
one or more physical lanes", IBA Vol. 1, 16.1.3.5) is 16 bits wide and *saturates*: it stops at 65535 instead of
wrapping (libibmad ``fields.c``: ``IB_PC_ERR_SYM_F``, bits 16..31 of the attribute; infiniband-diags ``perfquery.c``
only resets it, with ``-R``). ``perfquery -x`` may print it again from ``PortCountersExtended``, 64 bits wide,
where the port supports the extended width (ClassPortInfo ``CapabilityMask2``); the sweep keeps the widest read
(:meth:`~fabric_engine.telemetry.counters.CounterSamples.merged`), with its width.

:func:`symbol_rows` turns a sweep's samples into :class:`~.records.HealthRecords` of ``sym_errors`` per port, named
as ``perfquery -T`` names its ports (``lid:<lid>`` and the port), timed when the counter was read, their source
saying the width: :data:`SOURCE` (16 bits) or :data:`SOURCE_EXTENDED` (64 bits). The symbol BER then comes from
the delta between two sweeps as every counted BER does (:func:`~.grade.ber_from_deltas`: errors over lane rate x
lanes x interval, a lower count than before, a clear, gives "unknown"). :func:`saturated` names the rows whose
interval cannot be measured because the 16-bit counter stood at its top: errors past it were not counted, so a
delta to or at 65535 is unknown, not a rate (the interval after a clear of a saturated counter is unknown too,
being lower than before).
"""

from __future__ import annotations

import numpy as np

from ..telemetry.counters import COLUMN, CounterSamples
from .records import FIELDS, HealthRecords

__all__ = ["SOURCE", "SOURCE_EXTENDED", "SYMBOL_ERROR_MAX", "symbol_rows", "saturated", "lid_port_keys"]

#: Source of the rows read from ``PortCounters`` (16-bit, saturating ``SymbolErrorCounter``).
SOURCE = "perfquery PortCounters"
#: Source of the rows read from ``PortCountersExtended`` (64 bits: never seen to saturate).
SOURCE_EXTENDED = "perfquery PortCountersExtended"
#: Where the 16-bit ``SymbolErrorCounter`` stops.
SYMBOL_ERROR_MAX = 0xFFFF
_COL = COLUMN["SymbolErrorCounter"]


def symbol_rows(samples: CounterSamples, skip: np.ndarray | None = None) -> HealthRecords:
    """One row per port of ``samples`` (one row per port, :meth:`~CounterSamples.merged`) that read
    ``SymbolErrorCounter``: ``sym_errors`` and ``t``; ports 1..254 only (255 is ``perfquery -a``'s sum, 0 a
    switch's management port, which has no cable). ``skip``: ``lid * 256 + port`` of ports left out (those
    another reader already counts)."""
    bits = samples.bits[:, _COL] if len(samples) else np.zeros(0, np.uint8)
    keep = (bits > 0) & (samples.port >= 1) & (samples.port <= 254)
    if skip is not None and skip.size:
        keep &= ~np.isin(samples.keys, skip)
    rows = np.flatnonzero(keep)
    n = rows.size
    # every other field "not given", as one read-only broadcast row (a sweep has every port: no copies of nothing)
    data = {f: np.broadcast_to(np.array(fill, dtype), (n, cols) if cols else (n,))
            for f, (dtype, cols, fill) in FIELDS.items()}
    data["sym_errors"] = samples.values[rows, _COL].astype(np.float64)
    data["t"] = samples.t[rows, _COL]
    lids, which = np.unique(samples.lid[rows], return_inverse=True)  # a name per switch, not per port
    names = np.array([f"lid:{x}" for x in lids.tolist()] or [""], dtype=object)[which]
    source = np.full(n, SOURCE, object)
    source[bits[rows] > 16] = SOURCE_EXTENDED
    return HealthRecords(np.zeros(n, np.uint64), names, samples.port[rows].astype(np.int16), data, source)

def saturated(kind: str, rec: HealthRecords) -> np.ndarray:
    """Rows of ``rec`` (all of source ``kind``, without a sweep number) whose ``SymbolErrorCounter`` stood at its
    16-bit top: their symbol BER is unknown."""
    if kind != SOURCE:
        return np.zeros(len(rec), bool)
    return rec["sym_errors"] >= SYMBOL_ERROR_MAX


def lid_port_keys(rec: HealthRecords) -> np.ndarray:
    """``lid * 256 + port`` of the rows of ``rec`` named ``lid:<lid>`` (as ``perfquery -T``'s are), -1 for others."""
    names = rec.name.astype(str)
    digits = np.char.replace(names, "lid:", "", count=1)
    ok = np.char.startswith(names, "lid:") & np.char.isdigit(digits) & (np.char.str_len(digits) <= 9)
    lid = np.where(ok, digits, "0").astype(np.int64)
    return np.where(ok, lid * 256 + rec.port.astype(np.int64), -1)
