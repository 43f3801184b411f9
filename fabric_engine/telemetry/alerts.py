"""Error-counter rates against thresholds: which ports raise alerts.

Thresholds are error events per minute per port, one per error counter. ibweb's
defaults: ``LinkDownedCounter`` and ``LinkErrorRecoveryCounter`` alert on one
event a minute (a link that retrains is always worth a look), physical-layer
counters (symbol, receive, integrity, overrun errors) from 10 a minute, discards
and constraint errors from 100 a minute. Ten times the threshold is ``critical``.
Operators override them per fabric.

An alert that names nodes carries them as data (:func:`named`): ``text``, its message with ``{0}``,
``{1}``... where the nodes stand, and ``nodes``, their indices in the fabric (-1: not in it), so each
reader renders the names it may read (the feed: ``host-<i>`` for a hidden host, ``hidden node`` for
one not in the fabric) instead of relabelling a finished text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .counters import COLUMN, ERROR_COUNTERS
from .rates import RESET, STALE, CounterDeltas

__all__ = ["DEFAULT_THRESHOLDS", "Thresholds", "error_alerts", "named", "rate_text"]

#: Errors per minute per port at which a counter raises an alert.
DEFAULT_THRESHOLDS: dict[str, float] = {
    "SymbolErrorCounter": 10.0, "LinkErrorRecoveryCounter": 1.0, "LinkDownedCounter": 1.0, "PortRcvErrors": 10.0,
    "PortRcvRemotePhysicalErrors": 10.0, "PortRcvSwitchRelayErrors": 100.0, "PortXmitDiscards": 100.0,
    "PortXmitConstraintErrors": 100.0, "PortRcvConstraintErrors": 100.0, "LocalLinkIntegrityErrors": 10.0,
    "ExcessiveBufferOverrunErrors": 10.0, "QP1Dropped": 100.0, "VL15Dropped": 100.0,
}


def named(template: str, nodes: Sequence[int], names: Sequence[str]) -> dict:
    """The parts of an alert whose message names nodes: ``text``, ``nodes`` and ``message``.

    ``template``: the message with ``{0}``, ``{1}``... for the nodes (other braces doubled);
    ``nodes``: their indices (-1 for a node not in the fabric); ``names``: how they read in
    ``message``, the text as a view of every tenant reads it.

    >>> named("{0} port 1 - {1} port 3", [4, -1], ["gpu0001", "leaf02"])["message"]
    'gpu0001 port 1 - leaf02 port 3'
    """
    return {"text": template, "nodes": [int(n) for n in nodes], "message": template.format(*names)}


@dataclass(frozen=True)
class Thresholds:
    """Alert thresholds in errors per minute (``per_minute``) and the critical factor."""

    per_minute: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    critical_factor: float = 10.0

    def __post_init__(self) -> None:
        unknown = set(self.per_minute) - set(ERROR_COUNTERS)
        if unknown:
            raise ValueError(f"no such error counter: {', '.join(sorted(unknown))}")
        if any(v <= 0 for v in self.per_minute.values()):
            raise ValueError("thresholds must be positive")

    def vector(self) -> np.ndarray:
        """Threshold per error counter in ``ERROR_COUNTERS`` order, per second (inf where none)."""
        return np.array([self.per_minute.get(n, np.inf) / 60.0 for n in ERROR_COUNTERS], dtype=np.float64)


def rate_text(counter: str, per_min: float, threshold_per_min: float) -> str:
    """How alerts and conditions say an error counter's rate: ``SymbolErrorCounter at 25.0/min (threshold 10/min)``."""
    return f"{counter} at {per_min:.1f}/min (threshold {threshold_per_min:g}/min)"


def error_alerts(deltas: CounterDeltas, rows: np.ndarray, end: Callable[[int], tuple[int, str, int]], links: np.ndarray,
                 thresholds: Thresholds | None = None, limit: int = 50) -> list[dict]:
    """Alerts for the ports at ``rows`` of ``deltas`` whose error rates reach a threshold.

    Parameters
    ----------
    deltas : CounterDeltas
    rows : ndarray, int64 ``[K]``
        Rows of ``deltas`` to check (-1 to skip).
    end : callable
        ``end(k)`` -> ``(node index, node name, port)`` of entry ``k``, called only for alerting ports.
    links : ndarray, int64 ``[K]``
        Directed link leaving each port (-1 if none), carried in the alert.
    limit : int
        At most this many alerts, worst first.

    Returns
    -------
    list of dict
        ``{"kind": "errors", "severity", "counter", "link", "port", "rate_per_min", "message", "text", "nodes"}``
        (``port``: ``"name port"``; ``text``/``nodes``: :func:`named`).
    """
    th = (thresholds or Thresholds()).vector()
    cols = np.array([COLUMN[n] for n in ERROR_COUNTERS])
    ok = rows >= 0
    r = np.where(ok, rows, 0)
    rate = deltas.rate[r][:, cols]
    flags = deltas.flags[r][:, cols]
    # A reset (cleared counters) shows what was counted since; still a real count of errors.
    usable = ok[:, None] & ((flags & STALE) == 0)
    ratio = np.where(usable, rate / th[None, :], 0.0)
    hit = np.argwhere(ratio >= 1.0)
    if hit.size == 0:
        return []
    worst = hit[_worst_first(ratio[hit[:, 0], hit[:, 1]], limit)]
    factor = (thresholds or Thresholds()).critical_factor
    out = []
    for k, c in worst:  # loop over the few alerting ports
        name = ERROR_COUNTERS[c]
        per_min = float(rate[k, c] * 60.0)
        reset = bool(flags[k, c] & RESET)
        node, node_name, port = end(int(k))
        out.append({
            "kind": "errors", "severity": "critical" if ratio[k, c] >= factor else "warning", "counter": name,
            "link": int(links[k]), "port": f"{node_name} port {port}", "rate_per_min": round(per_min, 3),
            **named(f"{{0}} port {port}: {rate_text(name, per_min, th[c] * 60)}"
                    + (" after a counter reset" if reset else ""), [node], [node_name]),
        })
    return out


def _worst_first(ratio: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the ``limit`` largest of ``ratio``, largest first, ties in index order.

    The same as ``np.argsort(-ratio, kind="stable")[:limit]``, but only the candidates at or
    above the ``limit``-th largest are sorted: a fabric with errors on every port (a million
    entries at 40,960 ports) costs a partition instead of a full sort.
    """
    if len(ratio) > limit > 0:
        kth = np.partition(-ratio, limit - 1)[limit - 1]
        cand = np.flatnonzero(-ratio <= kth)
        return cand[np.argsort(-ratio[cand], kind="stable")][:limit]
    return np.argsort(-ratio, kind="stable")[:limit]
