"""Progress bars for long command-line operations (stdlib only, on stderr).

A :class:`Progress` is a callable taking a fraction in 0..1, the signature the
engine's long functions accept as ``progress=``; :meth:`Progress.stage` names the
step under way. On a terminal it redraws one line; elsewhere (a log, CI) it
prints a line per tenth so logs stay short.

>>> import io
>>> out = io.StringIO()
>>> bar = Progress("eBB", stream=out, tty=False)
>>> for i in range(1, 5):
...     bar(i / 4)
>>> bar.done()
>>> print(out.getvalue().splitlines()[-1])
eBB: done in 0.0 s
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]

_WIDTH = 30


class Progress:
    """A progress bar labelled ``label``; call it with the fraction done."""

    def __init__(self, label: str, stream: TextIO | None = None, tty: bool | None = None,
                 enabled: bool = True) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.enabled = enabled
        self.started = time.monotonic()
        self.step = ""
        self._last_tenth = -1

    def stage(self, step: str) -> None:
        """Name the step under way (shown beside the bar)."""
        self.step = step
        self(0.0 if self._last_tenth < 0 else self._last_tenth / 10)

    def __call__(self, fraction: float) -> None:
        if not self.enabled:
            return
        fraction = min(max(float(fraction), 0.0), 1.0)
        elapsed = time.monotonic() - self.started
        step = f" {self.step}" if self.step else ""
        if self.tty:
            filled = int(round(fraction * _WIDTH))
            bar = "#" * filled + "-" * (_WIDTH - filled)
            self.stream.write(f"\r{self.label}: [{bar}] {fraction * 100:5.1f}% {elapsed:6.1f} s{step}\x1b[K")
            self.stream.flush()
            return
        tenth = int(fraction * 10)
        if tenth > self._last_tenth:
            self._last_tenth = tenth
            self.stream.write(f"{self.label}: {fraction * 100:3.0f}% after {elapsed:.1f} s{step}\n")

    def done(self) -> None:
        """Finish the bar with the total time."""
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        self.stream.write(("\r" if self.tty else "") + f"{self.label}: done in {elapsed:.1f} s" +
                          ("\x1b[K\n" if self.tty else "\n"))
        self.stream.flush()
