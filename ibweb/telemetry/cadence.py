"""Sweeps on a fixed cadence (issue 35: a 10 s interval gave sweeps every 11 s).

A sweep's slot is the previous *scheduled* start plus the interval, never the previous end (or the moment
the scheduler happened to look) plus the interval: a scheduler that checks every tick or beat starts each
sweep at its first look at or after the slot, and the lateness does not add up. When a sweep overruns
(it is still running when one or more slots pass), the next starts late for the newest slot passed and
the older ones are skipped, counted for a note in the log.

>>> c = Cadence()
>>> c.due(100.0), c.begin(100.0, 10.0), c.next_at
(True, 0, 110.0)
>>> c.due(109.9), c.due(111.0), c.begin(111.0, 10.0), c.next_at
(False, True, 0, 120.0)
>>> c.begin(145.0, 10.0), c.next_at  # slots 120 and 130 passed while a sweep ran: 140 starts late
(2, 150.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Cadence"]


@dataclass
class Cadence:
    """The next slot of a fabric's sweeps, in wall-clock seconds (``None``: none yet, the first is due)."""

    next_at: float | None = None

    def due(self, now: float) -> bool:
        """Whether a sweep should start at ``now``."""
        return self.next_at is None or now >= self.next_at

    def begin(self, now: float, interval_s: float) -> int:
        """A sweep starts at ``now``: move to the next slot; returns the slots skipped (passed while overrunning).

        A clock set back by more than an interval, or a first sweep, starts the cadence again at ``now``.
        """
        if self.next_at is None or now < self.next_at - interval_s:
            self.next_at = now + interval_s
            return 0
        passed = max(0, math.floor((now - self.next_at) / interval_s))  # slots after the one taken now
        self.next_at += (passed + 1) * interval_s
        return passed
