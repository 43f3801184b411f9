"""The notifications' one clock: every "now" of the dispatcher, the queue, its backoff and the failing-channel
condition is read here, so a test drives minutes of an outage by moving this clock instead of sleeping.

:func:`now` is the wall clock (UTC). :class:`DrivenClock` is a clock that only moves when told; installed with
:func:`use` (and :func:`reset`), the queue's attempts, backoffs and rate windows follow it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

__all__ = ["now", "use", "reset", "DrivenClock"]


def _wall() -> datetime:
    return datetime.now(tz=UTC)


_source: list[Callable[[], datetime]] = [_wall]


def now() -> datetime:
    """The current time of the notifications (UTC, aware)."""
    return _source[0]()


def use(clock: Callable[[], datetime]) -> None:
    """Read "now" from ``clock`` from here on (a :class:`DrivenClock`; :func:`reset` restores the wall clock)."""
    _source[0] = clock


def reset() -> None:
    """Back to the wall clock."""
    _source[0] = _wall


class DrivenClock:
    """A clock that stands still until :meth:`advance` moves it (thread-safe)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._t = start or _wall()
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._t

    def advance(self, seconds: float) -> datetime:
        """Move the clock ``seconds`` ahead; the new time."""
        with self._lock:
            self._t += timedelta(seconds=seconds)
            return self._t
