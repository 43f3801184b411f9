"""Counter increases and rates between two sweeps, vectorized over every port and counter.

Rules (per port and counter):

* data counters count 4-octet words: increases of ``PortXmitData``/``PortRcvData``
  are multiplied by 4 to give bytes;
* 64-bit extended counters never wrap in practice: a smaller 64-bit value is always
  a ``RESET`` (the counter was cleared), never ``2**64 - old + new``, whatever the
  fabric's ``wrap`` setting;
* narrower basic counters stop at their maximum (IBA 1.3, 16.1.3.5: "the counter
  shall stop at all ones"); a value at the maximum is flagged ``LATCHED`` and its
  increase is a lower bound. Some devices wrap instead: with ``wrap=True`` a
  smaller basic (32 bits or fewer) value is taken as one wrap-around (``WRAPPED``),
  not as a reset;
* a counter that went backwards otherwise is flagged ``RESET``; its increase is
  the new value (what was counted since the reset), never negative, as
  Prometheus' ``rate()`` treats counter resets, provided that is plausible (below);
* a port or counter missing from either sweep, read with different widths, or read
  twice with the same time and value, is flagged ``STALE`` and has no rate (0) rather
  than an invented one.

Reads that cannot be turned into a rate are *held* (issue 26): flagged ``STALE`` plus
the reason, with ``delta`` and ``dt`` kept as the counters gave them so that an alert
can show the figures, and a rate of 0:

* ``OUT_OF_ORDER``: the newer sweep's read is older than the previous one (a replayed
  or re-ordered sample);
* ``FUTURE``: either read is later than ``now`` + :data:`FUTURE_MARGIN_S` (a clock
  set years ahead);
* ``TOO_CLOSE``: the reads are less than :data:`MIN_INTERVAL_S` apart (1e7 words in
  1 ms would read as 320 Gb/s), or have the same time and different values;
* ``OVER_CAPACITY``: more than :data:`CAPACITY_MARGIN` times what the port's link can
  carry (:meth:`CounterDeltas.hold_over`, given the limits by
  :func:`~fabric_engine.telemetry.observe.observe`); a reset whose new value is not
  plausible is held this way.

A held rate is 0 and its link stale for that pair of sweeps, not the last good rate:
the history and rollups record measurements, and an old rate shown as current is one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from .counters import COLUMN, DATA_COLUMNS, WORD_BYTES, CounterSamples

__all__ = [
    "STALE", "RESET", "LATCHED", "WRAPPED", "OUT_OF_ORDER", "FUTURE", "TOO_CLOSE", "OVER_CAPACITY", "SUSPECT",
    "FUTURE_MARGIN_S", "MIN_INTERVAL_S", "CAPACITY_MARGIN", "CounterDeltas", "counter_deltas",
]

STALE = np.uint8(1)
RESET = np.uint8(2)
LATCHED = np.uint8(4)
WRAPPED = np.uint8(8)
OUT_OF_ORDER = np.uint8(16)
FUTURE = np.uint8(32)
TOO_CLOSE = np.uint8(64)
OVER_CAPACITY = np.uint8(128)
#: The reasons a read is held (each also sets ``STALE``).
SUSPECT = np.uint8(OUT_OF_ORDER | FUTURE | TOO_CLOSE | OVER_CAPACITY)

#: Seconds a read may be ahead of this clock (clocks of collectors drift; years do not).
FUTURE_MARGIN_S = 300.0
#: Fewest seconds between two reads that give a rate: half the shortest sweep interval a collector may have
#: (0.5 s), so a sweep that starts a little late still counts; closer, the reads' time stamps are not exact enough.
MIN_INTERVAL_S = 0.25
#: Times the link's capacity that a data counter may show (time stamps of two reads are not exact).
CAPACITY_MARGIN = 1.5

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
        Increase in counter units; data counters already in bytes (0 where stale for want
        of a comparable read; where held, what the counters gave).
    dt : ndarray, float64 ``[S, C]``
        Seconds between the two reads (0 where stale for want of a comparable read; where
        held, the difference of the two times, negative for ``OUT_OF_ORDER``).
    flags : ndarray, uint8 ``[S, C]``
        Bit set of ``STALE``, ``RESET``, ``LATCHED``, ``WRAPPED`` and the held reasons
        ``OUT_OF_ORDER``, ``FUTURE``, ``TOO_CLOSE``, ``OVER_CAPACITY`` (:data:`SUSPECT`).
    t : ndarray, float64 ``[S, C]``
        Time of the newer read (0 where the newer sweep has no such counter).
    """

    keys: np.ndarray
    delta: np.ndarray
    dt: np.ndarray
    flags: np.ndarray
    t: np.ndarray

    @property
    def rate(self) -> np.ndarray:
        """Increase per second, float64 ``[S, C]`` (0 where stale, held or ``dt`` is 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            r = self.delta / self.dt
        return np.where((self.dt > 0) & ((self.flags & STALE) == 0), r, 0.0)

    @property
    def implied_rate(self) -> np.ndarray:
        """What ``delta / dt`` would give, held or not, float64 ``[S, C]`` (0 where ``dt <= 0``): an alert's figure."""
        with np.errstate(divide="ignore", invalid="ignore"):
            r = self.delta / self.dt
        return np.where(self.dt > 0, r, 0.0)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Row of each of ``keys`` in this table, int64 (-1 where absent)."""
        keys = np.asarray(keys, dtype=np.int64)
        if len(self.keys) == 0:
            return np.full(keys.shape, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return np.where(self.keys[pos] == keys, pos, -1)

    def hold_over(self, max_rate: np.ndarray) -> CounterDeltas:
        """These deltas with every rate above ``max_rate`` held (``STALE | OVER_CAPACITY``).

        Parameters
        ----------
        max_rate : ndarray, float64 ``[S, C]``
            Highest plausible increase per second of each counter (bytes for data
            counters; ``inf`` where there is no limit).

        Examples
        --------
        >>> from fabric_engine.telemetry.counters import CounterSamples
        >>> rec = lambda v, t: CounterSamples.from_records(
        ...     [{"lid": 2, "port": 3, "t": t, "extended": True, "counters": {"PortXmitData": v}}])
        >>> d = counter_deltas(rec(0, 0.0), rec(10**10, 1.0), now=1.0)
        >>> limit = np.full(d.delta.shape, np.inf)
        >>> limit[0, COLUMN["PortXmitData"]] = 1.5 * 200e9 / 8  # 1.5x a 200 Gb/s link, in bytes/s
        >>> held = d.hold_over(limit)
        >>> float(held.rate[0, COLUMN["PortXmitData"]]), bool(held.flags[0, COLUMN["PortXmitData"]] & OVER_CAPACITY)
        (0.0, True)
        """
        with np.errstate(invalid="ignore"):  # inf x 0 where dt is 0: NaN, not over
            over = ((self.flags & STALE) == 0) & (self.dt > 0) & (self.delta > max_rate * self.dt)
        if not over.any():
            return self
        return replace(self, flags=self.flags | np.multiply(over, STALE | OVER_CAPACITY, dtype=np.uint8))


def counter_deltas(prev: CounterSamples, cur: CounterSamples, *, wrap: bool = False, now: float | None = None,
                   future_s: float = FUTURE_MARGIN_S, min_interval_s: float = MIN_INTERVAL_S) -> CounterDeltas:
    """Increases from sweep ``prev`` to sweep ``cur`` (both merged: one row per port).

    Parameters
    ----------
    prev, cur : CounterSamples
        Two successive sweeps. Ports only in ``prev`` are not reported; ports only in
        ``cur`` are ``STALE``.
    wrap : bool
        Basic counters of this fabric wrap at their width instead of stopping there
        (64-bit extended counters never do).
    now : float, optional
        The clock reads are checked against (``FUTURE``); defaults to ``time.time()``.
    future_s : float
        How far ahead of ``now`` a read may be.
    min_interval_s : float
        Fewest seconds between two reads that give a rate (closer: ``TOO_CLOSE``).

    Examples
    --------
    >>> from fabric_engine.telemetry.counters import CounterSamples
    >>> rec = lambda v, t: CounterSamples.from_records(
    ...     [{"lid": 2, "port": 3, "t": t, "extended": True, "counters": {"PortXmitData": v}}])
    >>> d = counter_deltas(rec(100, 0.0), rec(350, 2.0))
    >>> float(d.delta[0, COLUMN["PortXmitData"]]), float(d.rate[0, COLUMN["PortXmitData"]])
    (1000.0, 500.0)
    >>> d = counter_deltas(rec(100, 0.0), rec(10**7, 0.001))  # 1 ms apart: no rate
    >>> float(d.rate[0, COLUMN["PortXmitData"]]), bool(d.flags[0, COLUMN["PortXmitData"]] & TOO_CLOSE)
    (0.0, True)
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
    comparable = found[:, None] & (cb > 0) & (pb == cb)
    dt = ct - pt
    # the checks of the times: a read older than the one before, from the future, or too close to it
    limit = (time.time() if now is None else float(now)) + future_s
    older = comparable & (dt < 0)
    future = comparable & ((ct > limit) | (pt > limit))
    repeat = comparable & (dt == 0) & (cv == pv)  # the same read seen twice: nothing new, nothing suspect
    close = comparable & (dt >= 0) & (dt < min_interval_s) & ~repeat
    held = older | future | close
    stale = ~comparable | repeat | held
    narrow = cb < 64
    width = np.minimum(cb, 63).astype(np.uint64)
    maxval = np.where(narrow, (np.uint64(1) << width) - np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF))
    back = cv < pv
    diff = cv - pv  # uint64, modulo 2**64: the increase where cv >= pv
    is_wrap = back & narrow if wrap else np.zeros(back.shape, dtype=bool)  # only basic counters wrap
    is_reset = back & ~is_wrap  # a 64-bit counter that went backwards is always a reset
    if wrap:
        np.bitwise_and(diff, maxval, out=diff, where=is_wrap)  # modulo 2**width
    np.copyto(diff, cv, where=is_reset)
    delta = diff.astype(np.float64)
    delta[:, _DATA] *= WORD_BYTES
    blank = stale & ~held  # held reads keep their figures for the alerts
    delta[blank] = 0.0
    dt[blank] = 0.0
    # the flags are one bit each: multiply the booleans by their bit (in place, uint8 all along)
    flags = np.multiply(is_reset & comparable, RESET, dtype=np.uint8)
    flags |= np.multiply(is_wrap & comparable, WRAPPED, dtype=np.uint8)
    flags |= np.multiply(narrow & (cv == maxval) & (cb > 0), LATCHED, dtype=np.uint8)
    flags |= np.multiply(stale, STALE, dtype=np.uint8)
    flags |= np.multiply(older, OUT_OF_ORDER, dtype=np.uint8)
    flags |= np.multiply(future, FUTURE, dtype=np.uint8)
    flags |= np.multiply(close, TOO_CLOSE, dtype=np.uint8)
    return CounterDeltas(keys, delta, dt, flags, ct)
