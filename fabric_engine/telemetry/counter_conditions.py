"""Counter-based health conditions of ports, with hysteresis: what stays wrong until the counters calm down.

:func:`~.alerts.error_alerts` says which ports are above a threshold in *one* sweep; a
condition here lasts from the first bad sweep until ``clear_sweeps`` calm sweeps in a row,
so a port that is bad every other sweep stays one condition (one event). Kinds:

* ``error_rate``: an error counter of the port at or above its :class:`~.alerts.Thresholds`
  rate (``critical`` at ``critical_factor`` times); calm: every counter below its threshold.
* ``port_flapping``: ``LinkDownedCounter`` plus ``LinkErrorRecoveryCounter`` increased at
  least ``flap_count`` times within the last ``flap_window`` sweeps; calm: neither increased.
* ``symbol_errors_rising``: ``SymbolErrorCounter`` rose in ``rising_sweeps`` sweeps in a row;
  calm: it did not rise.

State is kept per port identity (node GUID, port number), never per row or link index, so a
topology change that shifts indices does not mix ports. Each condition carries ``since``
(first bad sweep of this occurrence) and ``count`` (occurrences of this kind on this port
seen by this tracker, this one included).

Condition alerts: ``{"kind", "severity", "condition": True, "port": "name port", "guid",
"ports": [port], "nodes": [node index in the current fabric], "since", "count", "evidence", "message", "text"}``
(``text``/``nodes``: :func:`~.alerts.named`). ``evidence`` holds the figures of the newest sweep
and the rule they were judged by, and the message says them: ``error_rate`` the worst counter, its
rate and threshold per minute; ``port_flapping`` the flaps within the window and the count that
raises it; ``symbol_errors_rising`` the sweeps in a row the counter rose and its newest increase.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .alerts import named, rate_text
from .counters import COLUMN, ERROR_COUNTERS
from .rates import STALE

__all__ = ["COUNTER_CONDITION_KINDS", "ConditionRules", "CounterConditions", "PortSweep", "port_sweep"]

#: The kinds, in the column order of the state arrays.
COUNTER_CONDITION_KINDS: tuple[str, ...] = ("error_rate", "port_flapping", "symbol_errors_rising")
_ERR, _FLAP, _SYM = range(3)


@dataclass(frozen=True)
class ConditionRules:
    """When a counter condition starts and clears (counts of sweeps)."""

    clear_sweeps: int = 3
    flap_count: int = 2
    flap_window: int = 5
    rising_sweeps: int = 2

    def __post_init__(self) -> None:
        for name in ("clear_sweeps", "flap_count", "flap_window", "rising_sweeps"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1")


@dataclass(frozen=True)
class PortSweep:
    """What one sweep says of each port, arrays of length ``K`` (one entry per port read, comparable reads only).

    ``guid`` uint64, ``port`` int64, ``node`` int64 (index in the current fabric),
    ``ratio`` float64 (worst error rate over its threshold), ``flaps`` float64
    (link-down plus error-recovery increase), ``symbol`` float64 (symbol error increase),
    ``worst`` int64 (index in :data:`~.counters.ERROR_COUNTERS` of ``ratio``'s counter);
    ``node_name``: the name of each node of the current fabric (indexed by ``node``);
    ``rate_per_min`` and ``threshold_per_min`` float64 (``worst``'s rate and threshold in errors per
    minute; ``None``: not known, the message then says the ratio only).
    """

    guid: np.ndarray
    port: np.ndarray
    node: np.ndarray
    ratio: np.ndarray
    flaps: np.ndarray
    symbol: np.ndarray
    worst: np.ndarray
    node_name: Sequence[str]
    rate_per_min: np.ndarray | None = None
    threshold_per_min: np.ndarray | None = None


class CounterConditions:
    """Per-port condition state across sweeps (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> cc = CounterConditions(ConditionRules(clear_sweeps=2))
    >>> def sweep(ratio):
    ...     z = np.zeros(1)
    ...     return PortSweep(np.array([5], np.uint64), np.array([1]), np.array([0]), np.array([ratio]), z, z,
    ...                      np.array([4]), ["h1"])
    >>> [c["kind"] for c in cc.update(sweep(2.0), 10.0)]
    ['error_rate']
    >>> [c["since"] for c in cc.update(sweep(0.0), 20.0)]
    [10.0]
    >>> cc.update(sweep(0.0), 30.0)
    []
    """

    def __init__(self, rules: ConditionRules | None = None, critical_factor: float = 10.0) -> None:
        self.rules = rules or ConditionRules()
        self.critical_factor = critical_factor
        k = len(COUNTER_CONDITION_KINDS)
        self.keys = np.zeros((0, 2), dtype=np.uint64)  # (guid, port), sorted rows
        self.active = np.zeros((0, k), dtype=bool)
        self.since = np.zeros((0, k), dtype=np.float64)
        self.calm = np.zeros((0, k), dtype=np.int64)  # calm sweeps in a row while active
        self.count = np.zeros((0, k), dtype=np.int64)  # occurrences
        self.rises = np.zeros(0, dtype=np.int64)  # sweeps in a row the symbol errors rose
        self.flaps = np.zeros((0, self.rules.flap_window), dtype=bool)  # sweeps with a flap, newest last
        self.severity = np.zeros(0, dtype=bool)  # error rate critical
        self.last: dict | None = None  # the newest sweep's per-port names and node indices, by state row

    def _align(self, keys: np.ndarray) -> np.ndarray:
        """Grow the state to hold ``keys`` (``[K, 2]`` uint64); the state row of each."""
        both = np.concatenate([self.keys, keys])
        union, inverse = np.unique(both, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        old, new = inverse[:len(self.keys)], inverse[len(self.keys):]
        if len(union) != len(self.keys):
            def grow(a: np.ndarray, fill) -> np.ndarray:
                out = np.full((len(union), *a.shape[1:]), fill, dtype=a.dtype)
                out[old] = a
                return out
            self.active, self.since = grow(self.active, False), grow(self.since, np.nan)
            self.calm, self.count = grow(self.calm, 0), grow(self.count, 0)
            self.rises, self.flaps = grow(self.rises, 0), grow(self.flaps, False)
            self.severity = grow(self.severity, False)
        self.keys = union
        return new

    def seed(self, kind: str, guid: int, port: int, since: float) -> None:
        """Take ``since`` for the condition ``kind`` of port ``(guid, port)`` if it becomes active next (a restart)."""
        row = self._align(np.array([[guid, port]], dtype=np.uint64))[0]
        c = COUNTER_CONDITION_KINDS.index(kind)
        if not self.active[row, c]:
            self.since[row, c] = since

    def update(self, sweep: PortSweep, t: float) -> list[dict]:
        """Advance by one sweep read at ``t``; the active conditions (ports not in ``sweep`` keep their state)."""
        r = self.rules
        keys = np.stack([np.asarray(sweep.guid, np.uint64), np.asarray(sweep.port, np.int64).astype(np.uint64)], 1)
        rows = self._align(keys.reshape(-1, 2))
        flapped = np.asarray(sweep.flaps) > 0
        rose = np.asarray(sweep.symbol) > 0
        self.flaps[rows] = np.concatenate([self.flaps[rows][:, 1:], flapped[:, None]], axis=1)
        self.rises[rows] = np.where(rose, self.rises[rows] + 1, 0)
        ratio = np.asarray(sweep.ratio, np.float64)
        bad = np.stack([ratio >= 1.0, self.flaps[rows].sum(axis=1) >= r.flap_count,
                        self.rises[rows] >= r.rising_sweeps], 1)
        calm = np.stack([ratio < 1.0, ~flapped, ~rose], 1)
        was = self.active[rows]
        run = np.where(calm, self.calm[rows] + 1, 0)
        now = bad | (was & (run < r.clear_sweeps))
        starts = now & ~was
        # a seeded since (restart) is kept; otherwise this sweep starts it
        since = np.where(starts & np.isnan(self.since[rows]), t, self.since[rows])
        self.since[rows] = np.where(now, since, np.nan)
        self.count[rows] += starts
        self.calm[rows] = np.where(now, run, 0)
        self.active[rows] = now
        self.severity[rows] = ratio >= self.critical_factor
        seen = np.zeros(len(self.keys), dtype=bool)
        seen[rows] = True
        # what is not seen and not active (and never was) is forgotten: the state stays as large as the fabric
        keep = seen | self.active.any(axis=1) | (self.count > 0).any(axis=1)
        row_of = np.full(len(self.keys), -1, dtype=np.int64)
        row_of[rows] = np.arange(len(rows))
        self.last = {"row_of": row_of[keep], "sweep": sweep}
        if not keep.all():
            for name in ("keys", "active", "since", "calm", "count", "rises", "flaps", "severity"):
                setattr(self, name, getattr(self, name)[keep])
        return self.conditions()

    def conditions(self) -> list[dict]:
        """The active conditions as alerts (few: the loop runs over active ones only)."""
        if self.last is None:
            return []
        row_of, s = self.last["row_of"], self.last["sweep"]
        out = []
        for row, c in np.argwhere(self.active).tolist():
            k = int(row_of[row])
            guid, port = int(self.keys[row, 0]), int(self.keys[row, 1])
            node = int(s.node[k]) if k >= 0 else -1
            who = str(s.node_name[node]) if node >= 0 else f"0x{guid:016x}"  # a node gone: its GUID
            name = f"{who} port {port}"
            kind = COUNTER_CONDITION_KINDS[c]
            severity, what, evidence = self._evidence(kind, row, k, s)
            out.append({"kind": kind, "severity": severity, "condition": True, "port": name,
                        "guid": f"0x{guid:016x}", "ports": [port],
                        "since": round(float(self.since[row, c]), 3), "count": int(self.count[row, c]),
                        "evidence": evidence, **named(f"{{0}} port {port}: {what}", [node], [who])})
        return out

    def _evidence(self, kind: str, row: int, k: int, s: PortSweep) -> tuple[str, str, dict]:
        """Severity, what the message says and the figures behind it, for condition ``kind`` of state row ``row``.

        ``k``: the port's entry in the newest sweep ``s`` (-1: not read by it; the figures of the state only).
        """
        r = self.rules
        if kind == "error_rate":
            severity = "critical" if self.severity[row] else "warning"
            if k < 0:
                return severity, "errors above threshold (not read by the newest sweep)", {}
            counter = ERROR_COUNTERS[int(s.worst[k])]
            ratio = float(s.ratio[k])
            evidence = {"counter": counter, "ratio": round(ratio, 3), "critical_factor": self.critical_factor}
            if s.rate_per_min is not None and s.threshold_per_min is not None:
                rate, limit = float(s.rate_per_min[k]), float(s.threshold_per_min[k])
                evidence.update(rate_per_min=round(rate, 3), threshold_per_min=limit)
                return severity, rate_text(counter, rate, limit), evidence
            return severity, f"{counter} at {ratio:.1f} times its threshold", evidence
        if kind == "port_flapping":
            flaps = int(self.flaps[row].sum())
            evidence = {"flapping_sweeps": flaps, "window_sweeps": r.flap_window, "flap_count": r.flap_count}
            return "warning", (f"link went down or retrained in {flaps} of the last {r.flap_window} sweeps "
                               f"(condition at {r.flap_count})"), evidence
        rises = int(self.rises[row])
        increase = int(s.symbol[k]) if k >= 0 else 0
        evidence = {"rising_sweeps": rises, "rising_sweeps_rule": r.rising_sweeps, "symbol_errors_increase": increase}
        return "warning", (f"symbol errors rose in {rises} sweeps in a row (condition at {r.rising_sweeps}), "
                           f"+{increase} in the newest"), evidence


def port_sweep(fabric, deltas, rows: np.ndarray, thresholds) -> PortSweep:
    """The :class:`PortSweep` of the out port of every directed link of ``fabric``.

    ``rows``: row of ``deltas`` (:class:`~.rates.CounterDeltas`) of each directed link's out port
    (-1 where not read); ports without a comparable read are left out. ``thresholds``: a
    :class:`~.alerts.Thresholds`.
    """
    f = fabric
    th = thresholds.vector()
    cols = np.array([COLUMN[n] for n in ERROR_COUNTERS])
    ok = np.flatnonzero(rows >= 0)
    r = rows[ok]
    flags = deltas.flags[r]
    usable = (flags & STALE) == 0
    ratio = np.where(usable[:, cols], deltas.rate[r][:, cols] / th[None, :], 0.0)
    ok_cols = usable[:, cols].any(axis=1)  # a port with no comparable read tells nothing
    delta = np.where(usable, deltas.delta[r], 0.0)
    flaps = delta[:, COLUMN["LinkDownedCounter"]] + delta[:, COLUMN["LinkErrorRecoveryCounter"]]
    node = np.asarray(f.dl_src)[ok]
    keep = ok_cols
    worst = ratio.argmax(axis=1) if ratio.shape[1] else np.zeros(len(ok), np.int64)
    at = np.arange(len(ok))
    rate_per_min = np.where(usable[:, cols], deltas.rate[r][:, cols], 0.0)[at, worst] * 60.0 if len(cols) else None
    return PortSweep(np.asarray(f.guid, np.uint64)[node][keep], np.asarray(f.dl_src_port, np.int64)[ok][keep],
                     node[keep], ratio.max(axis=1, initial=0.0)[keep], flaps[keep],
                     delta[:, COLUMN["SymbolErrorCounter"]][keep], worst[keep], f.node_name,
                     rate_per_min[keep] if rate_per_min is not None else None,
                     (th[worst] * 60.0)[keep] if len(cols) else None)
