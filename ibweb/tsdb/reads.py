"""How the embedded store answers: a grid of slots x buckets from one tier (and what its finer tier has not packed
yet), chart bins from the tier fitting the bin width, and per-slot folds of a whole window for the top-N.

A chart of one port reads a few packed rows of its block (and the pending rows of its part), never a whole sweep;
a top-N folds every row of the window one at a time (:class:`Fold`).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence

import numpy as np

from .codec import byte_planes, from_planes, reduce_bins, reduce_groups
from .layout import BLOCK, PART, Tier
from .series import series_of
from .store import bin_edges

__all__ = ["Fold", "binned", "binned_stats", "fold", "grid", "tier_for"]


class Fold:
    """Per-slot reduction of a window: weighted sum and weight (``mean``), or the extreme (``max``, ``min``)."""

    def __init__(self, size: int, agg: str) -> None:
        self.agg = agg
        fill = 0.0 if agg == "mean" else (-np.inf if agg == "max" else np.inf)
        self.value = np.full(size, fill)
        self.weight = np.zeros(size)

    def add(self, block: int, values: np.ndarray, step: float) -> None:
        """A packed row's window columns, ``values`` ``[BLOCK, buckets]``, of block ``block``."""
        self._merge(slice(block * BLOCK, (block + 1) * BLOCK), values, step)

    def add_slots(self, first: int, values: np.ndarray, step: float) -> None:
        """One bucket of a pending row, ``values`` ``[n]`` from slot ``first``."""
        n = min(len(values), len(self.value) - first)
        self._merge(slice(first, first + n), values[:n, None], step)

    def _merge(self, where: slice, values: np.ndarray, step: float) -> None:
        valid = ~np.isnan(values)
        self.weight[where] += valid.sum(axis=1) * step
        if self.agg == "mean":
            self.value[where] += np.where(valid, values, 0).sum(axis=1, dtype=np.float64) * step
        elif self.agg == "max":
            self.value[where] = np.maximum(self.value[where], np.where(valid, values, -np.inf).max(axis=1))
        else:
            self.value[where] = np.minimum(self.value[where], np.where(valid, values, np.inf).min(axis=1))

    def result(self) -> np.ndarray:
        """float64 per slot, NaN where nothing was folded."""
        seen = self.weight > 0
        value = self.value / np.maximum(self.weight, 1e-300) if self.agg == "mean" else self.value
        return np.where(seen, value, np.nan)


def _unpacked_from(tiers: Sequence[Tier], k: int, g0: int, done: dict[int, int]) -> int:
    """The first bucket of tier ``k`` from ``g0`` on that tier ``k-1`` has not packed yet (read from it)."""
    return g0 if (k - 1) not in done else max(g0, math.ceil(done[k - 1] / tiers[k].step))


def grid(db: sqlite3.Connection, tiers: Sequence[Tier], fabric: int, k: int, name: str, blocks: tuple[int, int],
         g0: int, g1: int, done: dict[int, int], pick: np.ndarray | None = None) -> np.ndarray:
    """Tier ``k``'s buckets ``[g0, g1)`` of the slots of blocks ``[lo, hi)`` (only those at offsets ``pick`` from the
    first, when given), float32 ``[slots, g1-g0]``. Rows are decompressed whole, but only the picked slots' bytes
    are put back together."""
    tier, (lo, hi) = tiers[k], blocks
    s0, s1 = lo * BLOCK, hi * BLOCK
    pick = np.arange(s1 - s0) if pick is None else np.asarray(pick, dtype=np.int64)
    out = np.full((len(pick), g1 - g0), np.nan, dtype=np.float32)
    nb = tier.span // tier.step
    in_block = pick // BLOCK + lo
    for block, start, data in db.execute(
            "SELECT block, start, data FROM packed WHERE fabric = ? AND tier = ? AND series = ? AND block >= ? "
            "AND block < ? AND start > ? AND start < ?",
            (fabric, k, name, lo, hi, g0 * tier.step - tier.span, g1 * tier.step)):
        mine = np.flatnonzero(in_block == block)
        if not len(mine):
            continue
        first = start // tier.step
        a, b = max(g0, first), min(g1, first + nb)
        planes = byte_planes(data).reshape(4, BLOCK, nb)
        every = len(mine) == BLOCK and bool((pick[mine] % BLOCK == np.arange(BLOCK)).all())  # the block, in order
        values = from_planes(planes if every else planes[:, pick[mine] % BLOCK])
        out[mine, a - g0:b - g0] = values[:, a - first:b - first]
    rows = db.execute(
        "SELECT part, bucket, data FROM pending WHERE fabric = ? AND tier = ? AND series = ? AND part >= ? "
        "AND part <= ? AND bucket >= ? AND bucket < ?",
        (fabric, k, name, s0 // PART, (s1 - 1) // PART, g0, g1)).fetchall()
    slot = s0 + pick
    whole = len(pick) == s1 - s0 and bool((pick == np.arange(len(pick))).all())  # every slot, in order
    for part, bucket, data in rows:  # rows of parts and buckets, not ports
        planes = byte_planes(data, "lz4")  # a part holds the slots its fabric had, up to PART
        if whole:
            a, b = max(s0, part * PART), min(s1, part * PART + planes.shape[1])
            out[a - s0:b - s0, bucket - g0] = from_planes(planes[:, a - part * PART:b - part * PART])
            continue
        offset = slot - part * PART
        mine = np.flatnonzero((offset >= 0) & (offset < planes.shape[1]))
        out[mine, bucket - g0] = from_planes(planes[:, offset[mine]])
    if k:
        d0 = _unpacked_from(tiers, k, g0, done)
        if d0 < g1:  # what tier k-1 has not packed yet is read from it and reduced here
            ratio = tier.step // tiers[k - 1].step
            finer = grid(db, tiers, fabric, k - 1, name, blocks, d0 * ratio, g1 * ratio, done, pick)
            out[:, d0 - g0:] = reduce_groups(finer, ratio, series_of(name).agg, axis=1)
    return out


#: Buckets a chart bin may fold at most when a finer tier is read (a 500-bin chart of 41 h reads the raw 10 s tier).
BUCKETS_PER_BIN = 32


def tier_for(tiers: Sequence[Tier], newest: float | None, start: float, width: float) -> int:
    """The tier a window from ``start`` in bins of ``width`` s is read from: of the tiers still covering ``start``
    whose step fits in a bin, the finest that folds at most :data:`BUCKETS_PER_BIN` buckets a bin (the sweeps
    themselves where they are kept: counts of samples, the newest minutes not yet packed into coarser tiers), else the
    coarsest; with none fitting, the finest covering it; else the coarsest."""
    covering = [k for k, tier in enumerate(tiers) if newest is None or start >= newest - tier.keep]
    covering = covering or [len(tiers) - 1]
    fine = [k for k in covering if tiers[k].step <= width]
    few = [k for k in fine if tiers[k].step * BUCKETS_PER_BIN >= width]
    return min(few) if few else max(fine) if fine else min(covering)


def binned(db: sqlite3.Connection, tiers: Sequence[Tier], fabric: int, newest: float | None, done: dict[int, int],
           name: str, slots: np.ndarray, start: float, end: float, points: int) -> tuple[np.ndarray, np.ndarray]:
    """``slots``' series in chart bins: bin starts ``[points]`` and values float64 ``[len(slots), points]``."""
    edges, width = bin_edges(start, end, points)
    k = tier_for(tiers, newest, start, width)
    tier, agg = tiers[k], series_of(name).agg
    g0, g1 = math.floor(start / tier.step), math.ceil(end / tier.step)
    out = np.full((len(slots), points), np.nan)
    for block in np.unique(slots // BLOCK).tolist():  # one read per block of the slots asked
        mine = np.flatnonzero(slots // BLOCK == block)
        got = grid(db, tiers, fabric, k, name, (block, block + 1), g0, g1, done, slots[mine] % BLOCK)
        if tier.step <= width:
            which = np.clip(((np.arange(g0, g1) * tier.step - start) // width).astype(np.int64), 0, points - 1)
            firsts = np.searchsorted(which, np.arange(points))
            out[mine] = reduce_bins(got, np.minimum(firsts, got.shape[1] - 1), agg)
            out[mine[:, None], np.flatnonzero(firsts >= got.shape[1])[None, :]] = np.nan
        else:  # buckets wider than bins: each bin shows the bucket it falls in
            out[mine] = got[:, (np.floor(edges / tier.step) - g0).astype(np.int64)]
    return edges, out


def binned_stats(db: sqlite3.Connection, tiers: Sequence[Tier], fabric: int, newest: float | None,
                 done: dict[int, int], name: str, slots: np.ndarray, start: float, end: float,
                 points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """``slots``' series in chart bins, several reductions: bin starts ``[points]``, then per slot and bin the count
    of buckets with a value (int64), their sum and their peak (float64, NaN where the count is 0), and the seconds
    one bucket stands for (the step of the tier read, as :func:`binned` picks it). Beyond the raw tier a bucket is
    the series' reduction of its span (a 1-minute mean's peak is the peak of means)."""
    edges, width = bin_edges(start, end, points)
    k = tier_for(tiers, newest, start, width)
    tier = tiers[k]
    g0, g1 = math.floor(start / tier.step), math.ceil(end / tier.step)
    count = np.zeros((len(slots), points), dtype=np.int64)
    total, peak = np.full((len(slots), points), np.nan), np.full((len(slots), points), np.nan)
    for part in np.unique(slots // PART).tolist():  # one read per part of the slots asked (its pending rows once)
        mine = np.flatnonzero(slots // PART == part)
        lo, hi = int(slots[mine].min()) // BLOCK, int(slots[mine].max()) // BLOCK + 1
        got = grid(db, tiers, fabric, k, name, (lo, hi), g0, g1, done, slots[mine] - lo * BLOCK)
        if tier.step > width:  # buckets wider than bins: each bin shows the bucket it falls in
            got = got[:, (np.floor(edges / tier.step) - g0).astype(np.int64)]
            which = np.arange(points)
        else:
            which = np.clip(((np.arange(g0, g1) * tier.step - start) // width).astype(np.int64), 0, points - 1)
        firsts = np.minimum(np.searchsorted(which, np.arange(points)), got.shape[1] - 1)
        empty = np.searchsorted(which, np.arange(points)) >= got.shape[1]
        valid = ~np.isnan(got)
        n = np.add.reduceat(valid.astype(np.int64), firsts, axis=1)
        n[:, empty] = 0
        count[mine] = n
        total[mine] = np.where(n > 0, np.add.reduceat(np.where(valid, got, 0).astype(np.float64), firsts, axis=1),
                               np.nan)
        peak[mine] = np.where(n > 0, np.maximum.reduceat(np.where(valid, got, -np.inf).astype(np.float64), firsts,
                                                         axis=1), np.nan)
    return edges, count, total, peak, float(tier.step)


def fold(db: sqlite3.Connection, tiers: Sequence[Tier], fabric: int, k: int, name: str, g0: int, g1: int,
         done: dict[int, int], acc: Fold) -> None:
    """Fold tier ``k``'s buckets ``[g0, g1)`` of every slot into ``acc``, each region from the finest tier that
    holds it (no grid: one decoded row at a time)."""
    tier = tiers[k]
    nb = tier.span // tier.step
    for block, start, data in db.execute(
            "SELECT block, start, data FROM packed WHERE fabric = ? AND tier = ? AND series = ? AND start > ? "
            "AND start < ?", (fabric, k, name, g0 * tier.step - tier.span, g1 * tier.step)):
        first = start // tier.step
        a, b = max(g0, first), min(g1, first + nb)
        acc.add(block, from_planes(byte_planes(data).reshape(4, BLOCK, nb)[:, :, a - first:b - first]), tier.step)
    for part, _, data in db.execute(
            "SELECT part, bucket, data FROM pending WHERE fabric = ? AND tier = ? AND series = ? AND bucket >= ? "
            "AND bucket < ?", (fabric, k, name, g0, g1)):
        acc.add_slots(part * PART, from_planes(byte_planes(data, "lz4")), tier.step)
    if k:
        d0 = _unpacked_from(tiers, k, g0, done)
        if d0 < g1:
            ratio = tier.step // tiers[k - 1].step
            fold(db, tiers, fabric, k - 1, name, d0 * ratio, g1 * ratio, done, acc)
