"""``info`` of a ``perfquery`` capture: which ports were read and which error counters count.

A file whose lines include a perfquery block header (``# Port counters: Lid 2 port 3``,
``# Port extended counters: ...``, ``# PortRcvErrorDetails counters: ...``,
``# PortXmitDiscardDetails counters: ...``) is read as perfquery output
(:func:`fabric_engine.telemetry.parse_perfquery_many`: the reads of one port merged into one
row); its skipped lines go to stderr as the fabric readers' do.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

__all__ = ["perfquery_summary", "print_perfquery_summary"]


def perfquery_summary(path: str, quiet: bool = False) -> dict | None:
    """Summary of the perfquery capture at ``path``, or ``None`` when the file is not perfquery output.

    ``{"ports": ports sampled, "lids": the LIDs read, "counters": names read, "with_errors": ports with a
    non-zero error counter, "errors": {counter: {"total": sum, "ports": ports where non-zero}},
    "warnings": [...]}``; error counters
    are :data:`~fabric_engine.telemetry.ERROR_COUNTERS`, the receive-error and discard details included.
    """
    from .errors import FormatError
    from .formats._input import read_text
    from .telemetry import COLUMN, COLUMNS, ERROR_COUNTERS, parse_perfquery_many
    from .telemetry.perfquery import is_perfquery

    try:
        text = read_text(Path(path))
    except FormatError:  # binary (an ibdiagnet archive) or unreadable: the fabric readers say what it is
        return None
    if not is_perfquery(text):
        return None
    warnings: list = []
    samples = parse_perfquery_many([(text, 0.0, path)], warnings=warnings)
    if not quiet:
        for w in warnings:
            shown = f": {w['text']}" if w["text"] else ""
            print(f"warning: {path}:{w['line']}: {w['reason']}{shown}", file=sys.stderr)
    cols = np.array([COLUMN[c] for c in ERROR_COUNTERS])
    errors = samples.values[:, cols]
    read = samples.bits.any(axis=0)
    return {
        "ports": len(samples), "lids": np.unique(samples.lid).tolist(),
        "counters": [name for name, r in zip(COLUMNS, read, strict=True) if r],
        "with_errors": int(np.count_nonzero(errors.any(axis=1))),
        "errors": {name: {"total": int(errors[:, i].sum(dtype=np.uint64)), "ports": int(np.count_nonzero(errors[:, i]))}
                   for i, name in enumerate(ERROR_COUNTERS) if errors[:, i].any()},
        "warnings": warnings,
    }


def print_perfquery_summary(path: str, d: dict) -> None:
    """The summary of :func:`perfquery_summary` as ``info`` prints it."""
    print(f"perfquery {Path(path).name}: {d['ports']} ports sampled, {len(d['counters'])} counters read, "
          f"{d['with_errors']} ports with error counts")
    for name, e in d["errors"].items():
        print(f"  {name:<32} {e['total']:>12,} on {e['ports']} port{'s' if e['ports'] != 1 else ''}")
