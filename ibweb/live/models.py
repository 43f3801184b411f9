"""The live app's database tables: the isolated ports (:mod:`ibweb.live.validation.isolations`, issue 38). Per-port
history is in the time-series store (:mod:`ibweb.tsdb`), recent ticks in the history ring
(:mod:`ibweb.live.history.ring`); migration 0004_remove_linkrollup dropped the one-minute rollups' table (issue 40)."""

from .validation.isolations import PortIsolation

__all__ = ["PortIsolation"]
