"""Which of a fabric's alerts a tick raised and which it cleared: what :data:`~ibweb.live.signals.fabric_alerts` says.

An alert is told from another across ticks by its identity fields (:func:`alert_key`), not its message or counts,
which may change while it lasts; alerts of :data:`~ibweb.live.signals.ONE_SHOT_KINDS` are each their own occurrence.
"""

from __future__ import annotations

from ibweb.live.signals import ONE_SHOT_KINDS

__all__ = ["AlertDiff", "alert_key"]

#: Fields that tell one alert from another across ticks (their message and counts may change).
_ALERT_KEY = ("kind", "job", "link", "port", "counter", "node", "a", "b", "partition", "action")


def alert_key(alert: dict) -> tuple:
    """The identity of ``alert`` across ticks (with its time and message for a one-shot kind)."""
    key = tuple(str(alert.get(k)) for k in _ALERT_KEY)
    return key + (str(alert.get("t")), str(alert.get("message"))) if alert.get("kind") in ONE_SHOT_KINDS else key


class AlertDiff:
    """The alerts of a fabric's previous tick, to tell what the next one raised and cleared."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Start again: the next tick is a first one (all its alerts raised, sent even when there are none)."""
        self._alerts: dict[tuple, dict] = {}
        self._first = True

    def diff(self, alerts: list[dict]) -> tuple[list[dict], list[dict], bool] | None:
        """``(raised, cleared, first)`` of this tick's ``alerts``; None when nothing changed after the first tick."""
        now = {alert_key(a): a for a in alerts}
        raised = [a for k, a in now.items() if k not in self._alerts]
        cleared = [a for k, a in self._alerts.items() if k not in now]
        first, self._first = self._first, False
        self._alerts = now
        return (raised, cleared, first) if raised or cleared or first else None
