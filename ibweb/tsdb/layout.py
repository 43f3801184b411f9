"""How the embedded store lays history out: its tiers, its blocks and parts of port slots, and its tables.

Ports get a **slot** per fabric the first time they are written. Each :class:`Tier` is a regular time grid
(``step`` seconds per bucket). A sweep becomes one ``pending`` row per series and **part** (:data:`PART` slots);
when a tier's ``span`` is complete its pending rows become one ``packed`` row per series, **block** (:data:`BLOCK`
slots) and span, and the next tier's pending rows (:mod:`.packing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BLOCK", "DAY", "LEGACY_LAYOUT", "PART", "SCHEMA", "TOP_BINS", "Tier", "check_tiers", "default_tiers",
           "middle_span"]

DAY = 86400
#: Ports per block: a chart of one port decompresses its block's rows only.
BLOCK = 256
#: Slots per pending row (64 blocks): a sweep is a few rows per series, a chart's read of them stays small.
PART = 64 * BLOCK
#: Bins a top-N window is read in at least (picks the tier).
TOP_BINS = 24


@dataclass(frozen=True)
class Tier:
    """A regular grid: ``step`` s per bucket, ``span`` s per packed row, rows kept ``keep`` s."""

    step: int
    span: int
    keep: int


def default_tiers(retention_days: int = 90, raw_step: int = 10, minute_step: int = 60) -> tuple[Tier, ...]:
    """Raw ``raw_step`` buckets in 10-minute rows for 2 days, ``minute_step`` buckets (1 minute by default,
    ``IBWEB_TSDB_STEP_S``) in rows of :func:`middle_span` and 1-hour buckets by week for ``retention_days``;
    ``ValueError`` naming ``IBWEB_TSDB_STEP_S`` unless ``minute_step`` is a multiple of ``raw_step`` that divides an
    hour."""
    if minute_step < raw_step or minute_step % raw_step or 3600 % minute_step:
        raise ValueError(f"IBWEB_TSDB_STEP_S={minute_step}: expected a multiple of {raw_step} s that divides 3600 s "
                         "(e.g. 60 or 300)")
    keep = retention_days * DAY
    return (Tier(raw_step, 600, min(2 * DAY, keep)), Tier(minute_step, middle_span(minute_step), keep),
            Tier(3600, 7 * DAY, keep))


def middle_span(step: int) -> int:
    """The packed row of the middle tier: about 360 buckets (what a read of the newest, not yet packed hours folds),
    whole hours that divide a day (6 h at a minute, a day at 5 minutes)."""
    return next((3600 * k for k in (1, 2, 3, 4, 6, 8, 12) if 3600 * k >= 360 * step), DAY)


#: ``(step, span)`` of each tier of files written before the layout was recorded in them (10 s, 5 min, 1 h).
LEGACY_LAYOUT = ((10, 600), (300, DAY), (3600, 7 * DAY))


def check_tiers(tiers: Sequence[Tier]) -> None:
    """``ValueError`` naming the tier unless each step divides its span and the next tier's step, and is divided by
    the finer tier's."""
    for k, tier in enumerate(tiers):
        if tier.step <= 0 or tier.span % tier.step or tier.keep <= 0:
            raise ValueError(f"tier {k} {tier}: span must be a positive multiple of step, keep positive")
        if k and (tier.step % tiers[k - 1].step or tiers[k - 1].span % tier.step):
            raise ValueError(f"tier {k} {tier}: step must be a multiple of tier {k - 1}'s step and divide its span")


SCHEMA = """
CREATE TABLE IF NOT EXISTS ports (fabric INTEGER NOT NULL, slot INTEGER NOT NULL, guid INTEGER NOT NULL,
  port INTEGER NOT NULL, PRIMARY KEY (fabric, slot));
CREATE TABLE IF NOT EXISTS pending (fabric INTEGER NOT NULL, tier INTEGER NOT NULL, series TEXT NOT NULL,
  part INTEGER NOT NULL, bucket INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY (fabric, tier, series, part, bucket));
CREATE INDEX IF NOT EXISTS pending_bucket ON pending (fabric, tier, bucket);
CREATE TABLE IF NOT EXISTS packed (fabric INTEGER NOT NULL, tier INTEGER NOT NULL, series TEXT NOT NULL,
  block INTEGER NOT NULL, start INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY (fabric, tier, series, block, start));
CREATE INDEX IF NOT EXISTS packed_start ON packed (fabric, tier, start);
CREATE TABLE IF NOT EXISTS marks (fabric INTEGER NOT NULL, tier INTEGER NOT NULL, done INTEGER NOT NULL,
  PRIMARY KEY (fabric, tier));
CREATE TABLE IF NOT EXISTS fabrics (fabric INTEGER PRIMARY KEY, newest REAL NOT NULL);
CREATE TABLE IF NOT EXISTS layout (tier INTEGER PRIMARY KEY, step INTEGER NOT NULL, span INTEGER NOT NULL);
"""
