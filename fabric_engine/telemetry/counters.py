"""Port counters as arrays: which counters exist, how wide they are, and one sweep's samples.

The counters are those of the PerfMgt ``PortCounters`` and ``PortCountersExtended``
attributes (InfiniBand Architecture Specification Vol. 1, Release 1.3, 16.1.3.5 and
16.1.4.11) and of the ``PortRcvErrorDetails`` and ``PortXmitDiscardDetails`` attributes, under
the field names ``perfquery`` prints. Widths are the basic
attribute's; the data and packet counters are 64 bits wide when they come from
``PortCountersExtended`` (``perfquery -x``). ``PortXmitData`` and ``PortRcvData``
count 4-octet words in both attributes, so byte counts are the counter times 4.

A :class:`CounterSamples` holds one sweep: one row per port, keyed by ``(lid, port)``
(switch ports are addressed through the switch's LID, as ``perfquery`` does), one
column per entry of :data:`COLUMNS`. ``bits[s, c]`` is the width the value was read
with (0 when that output had no such field), ``t[s, c]`` the time it was read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError

__all__ = [
    "COLUMNS", "COLUMN", "BASIC_BITS", "DETAIL_ATTRIBUTES", "DETAIL_BITS", "DETAIL_COLUMNS", "EXTENDED_COLUMNS",
    "DATA_COLUMNS", "ERROR_COUNTERS", "WORD_BYTES",
    "CounterSamples", "port_key", "json_integer",
]

#: Every counter ibweb reads, in column order.
COLUMNS: tuple[str, ...] = (
    "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
    "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
    "PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "QP1Dropped",
    "VL15Dropped", "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortXmitWait",
    "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts",
    # PortRcvErrorDetails (perfquery -E) and PortXmitDiscardDetails (perfquery -D): what PortRcvErrors
    # and PortXmitDiscards count, by cause
    "PortLocalPhysicalErrors", "PortMalformedPktErrors", "PortBufferOverrunErrors", "PortDLIDMappingErrors",
    "PortVLMappingErrors", "PortLoopingErrors",
    "PortInactiveDiscards", "PortNeighborMTUDiscards", "PortSwLifetimeLimitDiscards", "PortSwHOQLifetimeLimitDiscards",
)
#: Column index by counter name.
COLUMN: dict[str, int] = {name: i for i, name in enumerate(COLUMNS)}
#: Width in bits of each counter in the basic ``PortCounters`` attribute (IBA 1.3, table 247).
BASIC_BITS: dict[str, int] = {
    "SymbolErrorCounter": 16, "LinkErrorRecoveryCounter": 8, "LinkDownedCounter": 8, "PortRcvErrors": 16,
    "PortRcvRemotePhysicalErrors": 16, "PortRcvSwitchRelayErrors": 16, "PortXmitDiscards": 16,
    "PortXmitConstraintErrors": 8, "PortRcvConstraintErrors": 8, "LocalLinkIntegrityErrors": 4,
    "ExcessiveBufferOverrunErrors": 4, "QP1Dropped": 16, "VL15Dropped": 16, "PortXmitData": 32,
    "PortRcvData": 32, "PortXmitPkts": 32, "PortRcvPkts": 32, "PortXmitWait": 32,
}
#: Counters of the detail attributes, by attribute as perfquery's block headers name it (IBA 1.3, 16.1.4.1-2;
#: libibmad's fields.c): all 16 bits wide.
DETAIL_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "PortRcvErrorDetails": COLUMNS[22:28],
    "PortXmitDiscardDetails": COLUMNS[28:32],
}
DETAIL_COLUMNS: tuple[str, ...] = COLUMNS[22:32]
DETAIL_BITS: dict[str, int] = dict.fromkeys(DETAIL_COLUMNS, 16)
#: Counters of ``PortCountersExtended`` (all 64 bits wide).
EXTENDED_COLUMNS: tuple[str, ...] = (
    "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortUnicastXmitPkts", "PortUnicastRcvPkts",
    "PortMulticastXmitPkts", "PortMulticastRcvPkts",
)
#: Counters that count 4-octet words.
DATA_COLUMNS: tuple[str, ...] = ("PortXmitData", "PortRcvData")
#: Error counters, the ones that raise alerts: PortCounters' errors and discards and their details.
ERROR_COUNTERS: tuple[str, ...] = COLUMNS[:13] + DETAIL_COLUMNS
WORD_BYTES = 4

_WIDTH = {**BASIC_BITS, **DETAIL_BITS}
_PERFQUERY_ALIASES = {"PortMultiCastXmitPkts": "PortMulticastXmitPkts", "PortMultiCastRcvPkts": "PortMulticastRcvPkts"}


def port_key(lid: np.ndarray | int, port: np.ndarray | int) -> np.ndarray | int:
    """The int64 key ``lid * 256 + port`` that identifies a port (255 = all ports aggregated)."""
    return np.asarray(lid, dtype=np.int64) * 256 + np.asarray(port, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class CounterSamples:
    """Counter values of many ports, read in one sweep.

    Attributes
    ----------
    lid : ndarray, int32 ``[S]``
        LID the port was addressed through (the switch LID for switch ports).
    port : ndarray, int16 ``[S]``
        Port number; 255 is ``perfquery -a``'s aggregate of all ports.
    values : ndarray, uint64 ``[S, C]``
        Raw counter values (data counters still in 4-octet words).
    bits : ndarray, uint8 ``[S, C]``
        Width each value was read with; 0 where the output had no such counter.
    t : ndarray, float64 ``[S, C]``
        Time each value was read (seconds since the epoch).

    Examples
    --------
    >>> s = CounterSamples.from_records([{"lid": 2, "port": 3, "t": 10.0, "extended": True,
    ...                                   "counters": {"PortXmitData": 1000}}])
    >>> int(s.values[0, COLUMN["PortXmitData"]]), int(s.bits[0, COLUMN["PortXmitData"]])
    (1000, 64)
    """

    lid: np.ndarray
    port: np.ndarray
    values: np.ndarray
    bits: np.ndarray
    t: np.ndarray

    def __len__(self) -> int:
        return len(self.lid)

    @property
    def keys(self) -> np.ndarray:
        """``port_key(lid, port)`` of every row, int64 ``[S]``."""
        return port_key(self.lid, self.port)

    @classmethod
    def empty(cls) -> CounterSamples:
        c = len(COLUMNS)
        return cls(np.zeros(0, np.int32), np.zeros(0, np.int16), np.zeros((0, c), np.uint64),
                   np.zeros((0, c), np.uint8), np.zeros((0, c), np.float64))

    @classmethod
    def concat(cls, parts: Iterable[CounterSamples]) -> CounterSamples:
        """All rows of ``parts`` in order (duplicate ports are kept; see :meth:`merged`)."""
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("lid", "port", "values", "bits", "t")))

    def merged(self) -> CounterSamples:
        """One row per port: where several rows read the same counter, the widest (then newest) wins.

        This is how a basic and an extended read of the same port combine: the error
        counters and ``PortXmitWait`` come from the basic read, the 64-bit data and
        packet counters from the extended one. Rows come out sorted by key.
        """
        if len(self) == 0:
            return self
        order = np.argsort(self.keys, kind="stable")  # a port's rows together, in their order
        keys = self.keys[order]
        if (keys[1:] != keys[:-1]).all():  # one row per port already (merged shards of distinct switches)
            return CounterSamples(*(getattr(self, f)[order] for f in ("lid", "port", "values", "bits", "t")))
        bits, t = self.bits[order], self.t[order]
        start = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        group = np.cumsum(np.r_[True, keys[1:] != keys[:-1]]) - 1
        # Per port and counter, all counters at once: the widest reads, of those the newest, of those the last.
        widest = bits == np.maximum.reduceat(bits, start, axis=0)[group]
        t_w = np.where(widest, t, -np.inf)
        newest = widest & (t_w == np.maximum.reduceat(t_w, start, axis=0)[group])
        row = np.where(newest, np.arange(len(keys))[:, None], -1)
        pick = order[np.maximum.reduceat(row, start, axis=0)]
        cols = np.arange(len(COLUMNS))[None, :]
        uniq = keys[start]
        return CounterSamples((uniq // 256).astype(np.int32), (uniq % 256).astype(np.int16), self.values[pick, cols],
                              self.bits[pick, cols], self.t[pick, cols])

    @classmethod
    def from_records(cls, records: Iterable[Mapping], source: str = "records") -> CounterSamples:
        """Samples from JSON-like records (the push API's body).

        Each record: ``{"lid": int, "port": int, "t": float, "extended": bool,
        "counters": {name: int}}``; ``extended`` says the data and packet counters
        are 64-bit ``PortCountersExtended`` values. Unknown counter names are an error.
        """
        records = list(records)
        n, c = len(records), len(COLUMNS)
        lid = np.zeros(n, np.int32)
        port = np.zeros(n, np.int16)
        values = np.zeros((n, c), np.uint64)
        bits = np.zeros((n, c), np.uint8)
        t = np.zeros((n, c), np.float64)
        for i, rec in enumerate(records):  # input decoding; the arithmetic stays vectorized
            if not isinstance(rec, Mapping):
                raise FormatError(source, i + 1, "a sample is an object with lid, port, t and counters")
            try:
                rec_lid, rec_port, stamp = rec["lid"], rec["port"], rec["t"]
                counters = rec["counters"]
            except KeyError as exc:
                raise FormatError(source, i + 1, f"sample needs lid, port, t and counters (no {exc})") from None
            rec_lid, rec_port = json_integer(rec_lid), json_integer(rec_port)
            # Ports 0..254 and 255 (perfquery -a's aggregate of all ports); unicast LIDs 1..0xBFFF.
            if rec_lid is None or not 0 < rec_lid < 0xC000 or rec_port is None or not 0 <= rec_port <= 255:
                raise FormatError(source, i + 1, f"lid {rec['lid']!r} or port {rec['port']!r} out of range "
                                                 f"(LIDs 1..49151, ports 0..255)")
            if isinstance(stamp, bool) or not isinstance(stamp, int | float) or not 0 <= stamp < float("inf"):
                raise FormatError(source, i + 1, f"t: {stamp!r} is not a time in seconds since the epoch")
            extended = rec.get("extended", False)
            if not isinstance(extended, bool):
                raise FormatError(source, i + 1, f"extended: {extended!r} is not true or false")
            if not isinstance(counters, Mapping):
                raise FormatError(source, i + 1, "counters: expected an object of counter name -> value")
            lid[i], port[i] = rec_lid, rec_port
            for name, value in counters.items():
                name = _PERFQUERY_ALIASES.get(name, name)
                col = COLUMN.get(name)
                if col is None:
                    raise FormatError(source, i + 1, f"unknown counter {str(name)[:40]!r}")
                width = 64 if extended and name in EXTENDED_COLUMNS else _WIDTH.get(name, 64)
                v = json_integer(value)
                if v is None:
                    raise FormatError(source, i + 1, f"{name}: {str(value)[:40]!r} is not an integer")
                if not 0 <= v < (1 << width):
                    raise FormatError(source, i + 1, f"{name}: {v} does not fit in {width} bits")
                values[i, col], bits[i, col], t[i, col] = v, width, stamp
        return cls(lid, port, values, bits, t)


def json_integer(value) -> int | None:
    """An integer from JSON: an int (not a bool), or a decimal string of at most 20 digits; else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
        return int(value)
    return None
