"""How the embedded store stays bounded: each tier's rows dropped past its ``keep``, the oldest spans past a size.

Retention is per tier, by whole packed rows (span starts) and pending buckets older than the fabric's newest sweep
minus the tier's ``keep``. Past ``max_bytes`` the oldest packed spans go first, the finest tier first, and the file
gives the pages back (``auto_vacuum = INCREMENTAL``, set when the file is made).
"""

from __future__ import annotations

import logging
import math
import sqlite3
from collections.abc import Sequence

from .layout import Tier

__all__ = ["bound", "expire", "used_bytes"]

log = logging.getLogger("ibweb.tsdb.embedded")


def expire(db: sqlite3.Connection, tiers: Sequence[Tier], fabric: int, newest: float) -> None:
    """Drop ``fabric``'s rows of each tier older than ``newest`` minus the tier's ``keep``."""
    for k, tier in enumerate(tiers):
        db.execute("DELETE FROM packed WHERE fabric = ? AND tier = ? AND start + ? <= ?",
                   (fabric, k, tier.span, newest - tier.keep))
        db.execute("DELETE FROM pending WHERE fabric = ? AND tier = ? AND bucket < ?",
                   (fabric, k, math.floor((newest - tier.keep) / tier.step)))


def used_bytes(db: sqlite3.Connection) -> int:
    """Bytes of the file in use (pages minus free pages)."""
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    free = db.execute("PRAGMA freelist_count").fetchone()[0]
    return (pages - free) * db.execute("PRAGMA page_size").fetchone()[0]


def bound(db: sqlite3.Connection, max_bytes: int, name: object = "tsdb") -> bool:
    """Drop the oldest packed spans, finest tier first, while the file uses more than ``max_bytes``; whether any
    was dropped (the pages are then given back). ``name``: the file, for the log."""
    dropped = False
    while used_bytes(db) > max_bytes:
        row = db.execute("SELECT tier, MIN(start) FROM packed GROUP BY tier ORDER BY tier LIMIT 1").fetchone()
        if row is None:
            break
        db.execute("DELETE FROM packed WHERE tier = ? AND start = ?", row)
        log.warning("tsdb: %s over its bound of %s bytes; dropped tier %s's span at %s", name, max_bytes, *row)
        dropped = True
    if dropped:
        db.execute("PRAGMA incremental_vacuum")
    return dropped
