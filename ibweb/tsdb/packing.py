"""How the embedded store's sweeps become history: pending rows per part, packed rows per block, coarser tiers.

A sweep is one ``pending`` row per series and part (:data:`~.layout.PART` slots, lz4). When a tier's ``span`` is
complete (raw: before the span of the newest sweep), its pending rows are transposed into one ``packed`` row per
series, block and span (``[BLOCK, span/step]``, zstd) and reduced by the series' aggregation into the next tier's
pending rows; ``marks`` says up to where each tier is packed. All on the caller's connection and transaction.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from .codec import decode_block, encode_block, encode_rows, reduce_groups
from .layout import BLOCK, PART, Tier
from .series import series_of

__all__ = ["compact", "done_marks", "pack_span", "pending_rows"]


def done_marks(db: sqlite3.Connection, fabric: int) -> dict[int, int]:
    """Up to where (s) each tier of ``fabric`` is packed, by tier index."""
    return dict(db.execute("SELECT tier, done FROM marks WHERE fabric = ?", (fabric,)).fetchall())


def pending_rows(fabric: int, slots: np.ndarray, values: Mapping[str, np.ndarray], bucket: int) -> Iterator[tuple]:
    """The raw tier's ``pending`` rows of one sweep: ``(fabric, series, part, bucket, data)``, parts all NaN left
    out."""
    if not len(slots):
        return
    size = (int(slots.max()) // BLOCK + 1) * BLOCK  # slots in whole blocks; a part holds up to PART of them
    for name, array in values.items():
        dense = np.full(size, np.nan, dtype=np.float32)
        dense[slots] = array
        for part in range(0, size, PART):
            piece = dense[part:part + PART]
            if not np.isnan(piece).all():
                yield fabric, name, part // PART, bucket, encode_block(piece, "lz4")


def compact(db: sqlite3.Connection, tiers: Sequence[Tier], fabric: int, newest: float) -> bool:
    """Pack every tier's complete spans (raw: before the span of ``newest``); whether any was packed."""
    packed, upto = False, math.floor(newest / tiers[0].span) * tiers[0].span
    for k, tier in enumerate(tiers):
        while True:
            row = db.execute("SELECT MIN(bucket) FROM pending WHERE fabric = ? AND tier = ?", (fabric, k)).fetchone()
            if row[0] is None:
                break
            start = row[0] * tier.step // tier.span * tier.span
            if start + tier.span > upto:
                break
            pack_span(db, tiers, fabric, k, start)
            packed = True
        upto = done_marks(db, fabric).get(k, -math.inf)  # tier k+1 holds what tier k packed
    return packed


def pack_span(db: sqlite3.Connection, tiers: Sequence[Tier], fabric: int, k: int, start: int) -> None:
    """Tier ``k``'s pending rows of the span at ``start`` become packed rows per block, and the next tier's pending
    rows (reduced by each series' aggregation); one part (:data:`~.layout.PART` slots) at a time."""
    tier, nxt = tiers[k], tiers[k + 1] if k + 1 < len(tiers) else None
    nb, b0 = tier.span // tier.step, start // tier.step
    pairs = db.execute(
        "SELECT DISTINCT series, part FROM pending WHERE fabric = ? AND tier = ? AND bucket >= ? AND bucket < ?",
        (fabric, k, b0, b0 + nb)).fetchall()
    for name, part in pairs:
        rows = db.execute(
            "SELECT bucket, data FROM pending WHERE fabric = ? AND tier = ? AND series = ? AND part = ? "
            "AND bucket >= ? AND bucket < ?", (fabric, k, name, part, b0, b0 + nb)).fetchall()
        got = [decode_block(r[1], (-1,), "lz4") for r in rows]  # a part grows with its fabric
        mat = np.full((nb, PART), np.nan, dtype=np.float32)
        for (bucket, _), values in zip(rows, got, strict=True):
            mat[bucket - b0, :len(values)] = values
        keep = np.flatnonzero(~np.isnan(mat).all(axis=0).reshape(PART // BLOCK, BLOCK).all(axis=1))
        blocks = np.ascontiguousarray(mat.reshape(nb, PART // BLOCK, BLOCK)[:, keep].transpose(1, 2, 0))
        numbers = (part * (PART // BLOCK) + keep).tolist()
        db.executemany(
            "INSERT OR REPLACE INTO packed (fabric, tier, series, block, start, data) VALUES (?, ?, ?, ?, ?, ?)",
            zip([fabric] * len(keep), [k] * len(keep), [name] * len(keep), numbers, [start] * len(keep),
                encode_rows(blocks), strict=True))
        if nxt is not None:
            ratio = nxt.step // tier.step
            coarse = reduce_groups(mat, ratio, series_of(name).agg, axis=0)
            js = np.flatnonzero(~np.isnan(coarse).all(axis=1))
            db.executemany(
                "INSERT OR REPLACE INTO pending (fabric, tier, series, part, bucket, data) VALUES (?, ?, ?, ?, ?, ?)",
                zip([fabric] * len(js), [k + 1] * len(js), [name] * len(js), [part] * len(js),
                    (start // nxt.step + js).tolist(), encode_rows(coarse[js], "lz4"), strict=True))
    db.execute("DELETE FROM pending WHERE fabric = ? AND tier = ? AND bucket >= ? AND bucket < ?",
               (fabric, k, b0, b0 + nb))
    db.execute("INSERT OR REPLACE INTO marks (fabric, tier, done) VALUES (?, ?, ?)",
               (fabric, k, max(start + tier.span, done_marks(db, fabric).get(k, 0))))
