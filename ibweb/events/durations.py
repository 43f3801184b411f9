"""How long an event lasted, in the units a reader wants: ``"45 s"``, ``"4 min 7 s"``, ``"2 h 3 min"``."""

from __future__ import annotations

import math

__all__ = ["human_duration"]

_UNITS = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))


def human_duration(seconds: float) -> str:
    """``seconds`` as its two largest units (the smaller one left out at zero), rounded down.

    >>> [human_duration(s) for s in (0.4, 45, 247, 240, 7380, 273600)]
    ['< 1 s', '45 s', '4 min 7 s', '4 min', '2 h 3 min', '3 d 4 h']
    """
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a duration is a finite number of seconds >= 0, not {seconds!r}")
    whole = int(seconds)
    if whole == 0:
        return "< 1 s"
    for i, (unit, size) in enumerate(_UNITS):
        if whole >= size:
            out = f"{whole // size} {unit}"
            if i + 1 < len(_UNITS):
                small, small_size = _UNITS[i + 1]
                rest = whole % size // small_size
                if rest:
                    out += f" {rest} {small}"
            return out
    return "< 1 s"  # pragma: no cover - whole >= 1 always finds "s"
