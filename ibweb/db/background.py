"""One background thread of a process, for work the embedded default (Celery eager) must not do on its caller.

A :class:`BackgroundLane` runs what it is given one at a time, in order, on a thread of its own (started on first
use); a failure is logged, never raised to whoever submitted it; the thread's database connections are closed after
each piece of work. :meth:`BackgroundLane.wait_idle` waits until nothing is left (tests, shutdown).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from django.db import close_old_connections

__all__ = ["BackgroundLane"]


class BackgroundLane:
    """A named thread running submitted calls one after another (see the module docstring)."""

    def __init__(self, name: str, log: logging.Logger) -> None:
        self.name = name
        self._log = log
        self._executor: ThreadPoolExecutor | None = None
        self._futures: set[Future] = set()
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn(*args)`` on the lane's thread after what is already queued."""
        def run() -> None:
            try:
                fn(*args)
            except Exception:  # the lane's caller is long gone: the failure is logged
                self._log.exception("%s: %s failed", self.name, getattr(fn, "__name__", fn))
            finally:
                close_old_connections()

        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self.name)
            future = self._executor.submit(run)
            self._futures.add(future)
            future.add_done_callback(self._futures.discard)

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until the lane has nothing left to run; whether it got there within ``timeout_s``."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            with self._lock:
                pending = list(self._futures)
            if not pending:
                return True
            for f in pending:
                try:
                    f.result(timeout=max(0.0, end - time.monotonic()))
                except Exception:  # noqa: S112 - a timeout; the work's own failures are logged by run()
                    continue
        with self._lock:
            return not self._futures
