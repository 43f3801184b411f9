"""Counter increases and rates between two sweeps, vectorized over every port and counter.

Rules (per port and counter):

* data counters count 4-octet words: increases of ``PortXmitData``/``PortRcvData``
  are multiplied by 4 to give bytes;
* 64-bit extended counters never wrap in practice; a smaller value means the
  counter was reset or cleared;
* narrower basic counters stop at their maximum (IBA 1.3, 16.1.3.5: "the counter
  shall stop at all ones"); a value at the maximum is flagged ``LATCHED`` and its
  increase is a lower bound. Some devices wrap instead: with ``wrap=True`` a
  smaller value is taken as one wrap-around (``WRAPPED``), not as a reset;
* a counter that went backwards otherwise is flagged ``RESET``; its increase is
  the new value (what was counted since the reset), never negative, as
  Prometheus' ``rate()`` treats counter resets;
* a port or counter missing from either sweep, or read with different widths,
  is flagged ``STALE`` and has no rate (0) rather than an invented one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .counters import COLUMN, DATA_COLUMNS, WORD_BYTES, CounterSamples

__all__ = ["STALE", "RESET", "LATCHED", "WRAPPED", "CounterDeltas", "counter_deltas"]

STALE = np.uint8(1)
RESET = np.uint8(2)
LATCHED = np.uint8(4)
WRAPPED = np.uint8(8)

_DATA = np.zeros(len(COLUMN), dtype=bool)
_DATA[[COLUMN[c] for c in DATA_COLUMNS]] = True


@dataclass(frozen=True, eq=False)
class CounterDeltas:
    """Increases of every counter of every port of the newer sweep.

    Attributes
    ----------
    keys : ndarray, int64 ``[S]``
        ``port_key`` of each row (the newer sweep's ports, sorted).
    delta : ndarray, float64 ``[S, C]``
        Increase in counter units; data counters already in bytes.
    dt : ndarray, float64 ``[S, C]``
        Seconds between the two reads (0 where stale).
    flags : ndarray, uint8 ``[S, C]``
        Bit set of ``STALE``, ``RESET``, ``LATCHED``, ``WRAPPED``.
    """

    keys: np.ndarray
    delta: np.ndarray
    dt: np.ndarray
    flags: np.ndarray

    @property
    def rate(self) -> np.ndarray:
        """Increase per second, float64 ``[S, C]`` (0 where stale or ``dt`` is 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            r = self.delta / self.dt
        return np.where((self.dt > 0) & ((self.flags & STALE) == 0), r, 0.0)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Row of each of ``keys`` in this table, int64 (-1 where absent)."""
        keys = np.asarray(keys, dtype=np.int64)
        if len(self.keys) == 0:
            return np.full(keys.shape, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return np.where(self.keys[pos] == keys, pos, -1)


def counter_deltas(prev: CounterSamples, cur: CounterSamples, *, wrap: bool = False) -> CounterDeltas:
    """Increases from sweep ``prev`` to sweep ``cur`` (both merged: one row per port).

    Parameters
    ----------
    prev, cur : CounterSamples
        Two successive sweeps. Ports only in ``prev`` are not reported; ports only in
        ``cur`` are ``STALE``.
    wrap : bool
        Basic counters of this fabric wrap at their width instead of stopping there.

    Examples
    --------
    >>> from fabric_engine.telemetry.counters import CounterSamples
    >>> rec = lambda v, t: CounterSamples.from_records(
    ...     [{"lid": 2, "port": 3, "t": t, "extended": True, "counters": {"PortXmitData": v}}])
    >>> d = counter_deltas(rec(100, 0.0), rec(350, 2.0))
    >>> float(d.delta[0, COLUMN["PortXmitData"]]), float(d.rate[0, COLUMN["PortXmitData"]])
    (1000.0, 500.0)
    """
    order = np.argsort(cur.keys, kind="stable")
    keys = cur.keys[order]
    cv, cb, ct = cur.values[order], cur.bits[order], cur.t[order]
    pkeys = prev.keys
    porder = np.argsort(pkeys, kind="stable")
    pkeys = pkeys[porder]
    if len(pkeys):
        pos = np.minimum(np.searchsorted(pkeys, keys), len(pkeys) - 1)
        found = pkeys[pos] == keys
        prow = porder[pos]
        pv, pb, pt = prev.values[prow], prev.bits[prow], prev.t[prow]
    else:
        found = np.zeros(len(keys), dtype=bool)
        pv, pb, pt = np.zeros_like(cv), np.zeros_like(cb), np.zeros_like(ct)
    stale = ~found[:, None] | (cb == 0) | (pb != cb) | (ct <= pt)
    narrow = cb < 64
    width = np.minimum(cb, 63).astype(np.uint64)
    maxval = np.where(narrow, (np.uint64(1) << width) - np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF))
    back = cv < pv
    diff = cv - pv  # uint64, modulo 2**64: the increase where cv >= pv
    is_wrap = back & narrow if wrap else np.zeros(back.shape, dtype=bool)
    is_reset = back & ~is_wrap
    if wrap:
        np.bitwise_and(diff, maxval, out=diff, where=is_wrap)  # modulo 2**width
    np.copyto(diff, cv, where=is_reset)
    delta = diff.astype(np.float64)
    delta[:, _DATA] *= WORD_BYTES
    delta[stale] = 0.0
    # the flags are one bit each: multiply the booleans by their bit (in place, uint8 all along)
    flags = np.multiply(is_reset, RESET, dtype=np.uint8)
    flags |= np.multiply(is_wrap, WRAPPED, dtype=np.uint8)
    flags |= np.multiply(narrow & (cv == maxval) & (cb > 0), LATCHED, dtype=np.uint8)
    flags |= np.multiply(stale, STALE, dtype=np.uint8)
    dt = ct - pt
    dt[stale] = 0.0
    return CounterDeltas(keys, delta, dt, flags)
