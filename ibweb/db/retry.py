"""Writes that wait out a locked database instead of failing.

The embedded default is SQLite: one writer at a time. Transactions take the write lock
when they begin (``transaction_mode: IMMEDIATE`` in settings), so a writer waits up to the
busy timeout instead of failing at once when a read turns into a write; past the timeout
SQLite still answers ``database is locked``. PostgreSQL answers deadlocks and serialization
failures the same way. The background writers (events, job polls, rollups, sweep records)
go through :func:`retry_locked`: a locked database delays their write, never drops it.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import OperationalError, connection

__all__ = ["is_transient", "retry_locked", "MAX_WAIT_S"]

log = logging.getLogger("ibweb.db")

T = TypeVar("T")

#: A write is retried for at most this long (then its error is raised and logged by its caller).
MAX_WAIT_S = 600.0
_TRANSIENT = ("database is locked", "database table is locked", "deadlock detected",
              "could not serialize access", "could not obtain lock")


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a lock conflict that the same write, tried again later, gets past."""
    return isinstance(exc, OperationalError) and any(m in str(exc).lower() for m in _TRANSIENT)


def retry_locked(fn: Callable[..., T], *args, what: str = "write", max_wait_s: float = MAX_WAIT_S,
                 sleep: Callable[[float], None] = time.sleep, **kwargs) -> T:
    """``fn(*args, **kwargs)``, called again (backing off to 2 s) while the database is locked.

    ``fn`` must be one whole transaction (or a single statement): it is retried from its start.
    Inside an outer transaction nothing is retried (the outer one has failed already).
    """
    start = time.monotonic()
    delay, warned = 0.02, start
    while True:
        try:
            return fn(*args, **kwargs)
        except OperationalError as exc:
            waited = time.monotonic() - start
            if not is_transient(exc) or connection.in_atomic_block or waited > max_wait_s:
                raise
            if time.monotonic() - warned > 30.0:
                warned = time.monotonic()
                log.warning("%s waits for the database (%.0f s so far): %s", what, waited, exc)
            sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2.0, 2.0)
