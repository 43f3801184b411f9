"""The embedded backend: per-port series in one SQLite file, in downsampling tiers, bounded in size.

Ports get a **slot** per fabric the first time they are written (``ports``: slot -> node GUID, port number; a
re-cabled port keeps its slot). Each :class:`Tier` is a regular time grid (``step`` seconds per bucket). A sweep
becomes one ``pending`` row per series and **part** (:data:`PART` slots: a few rows per sweep, one lz4 call each).
When a tier's ``span`` is complete its pending rows are transposed into one ``packed`` row per series, **block**
(:data:`BLOCK` slots) and span (``[BLOCK, span/step]``, zstd), and reduced by the series' aggregation into the next
tier's pending rows. So a chart of one port over any window reads a few packed rows of its block (and the pending
rows of its part), never a whole sweep; a top-N folds every row of the window one at a time. Measured
(``tests/bench/bench_tsdb.py``, 32 series): 0.41 byte per raw sample, 115 kB per port per day at 10 s; writing
costs 0.7% of a core at 25,000 ports and 3.5% at 200,000 (one sweep per 10 s, packing included). Values are kept as
:mod:`.codec` says.

Retention is per tier (``keep``: raw 2 days, 5-minute and 1-hour buckets for ``retention_days``), enforced
by dropping whole packed rows by span start; past ``max_bytes`` the oldest spans go first, the finest tier first,
and the file gives the pages back (``auto_vacuum = INCREMENTAL``). Times are the sweeps' own ``t``: the newest
written ``t`` of a fabric is its "now" for retention. A tier holds what its finer tier has packed; reads
derive the rest from the finer tier, so the newest sweep is always readable. A sweep older than the packed raw
history is dropped with a warning.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .codec import byte_planes, decode_block, encode_block, encode_rows, from_planes, reduce_bins, reduce_groups
from .series import PORT_ID, checked_sweep, series_of
from .store import TOP, Range, SwitchRange, bin_edges, fabric_list, top_order

__all__ = ["BLOCK", "DAY", "PART", "EmbeddedStore", "Tier", "default_tiers"]

log = logging.getLogger(__name__)

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


def default_tiers(retention_days: int = 90, raw_step: int = 10) -> tuple[Tier, ...]:
    """Raw ``raw_step`` buckets in 10-minute rows for 2 days, 5-minute buckets by day and 1-hour buckets by week for
    ``retention_days``."""
    keep = retention_days * DAY
    return (Tier(raw_step, 600, min(2 * DAY, keep)), Tier(300, DAY, keep), Tier(3600, 7 * DAY, keep))


def _check_tiers(tiers: Sequence[Tier]) -> None:
    for k, tier in enumerate(tiers):
        if tier.step <= 0 or tier.span % tier.step or tier.keep <= 0:
            raise ValueError(f"tier {k} {tier}: span must be a positive multiple of step, keep positive")
        if k and (tier.step % tiers[k - 1].step or tiers[k - 1].span % tier.step):
            raise ValueError(f"tier {k} {tier}: step must be a multiple of tier {k - 1}'s step and divide its span")


_SCHEMA = """
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
"""


class _Ports:
    """A fabric's port identities and their slots, sorted for vectorized lookups (GUIDs ranked, then one int64 code
    per port: GUID rank x 65536 + port number)."""

    def __init__(self, keys: np.ndarray, slots: np.ndarray) -> None:
        self.guids = np.unique(keys["guid"])
        codes = self._codes(keys)
        order = np.argsort(codes, kind="stable")
        self.keys, self.slots, self.codes = keys[order], slots[order], codes[order]
        self.count = len(keys)
        self.last: tuple[bytes, np.ndarray] | None = None  # the previous sweep's ports and slots

    def _codes(self, keys: np.ndarray) -> np.ndarray:
        rank = np.searchsorted(self.guids, keys["guid"])
        known = rank < len(self.guids)
        known[known] = self.guids[rank[known]] == keys["guid"][known]
        return np.where(known, rank.astype(np.int64) * 65536 + keys["port"], -1)

    def find(self, query: np.ndarray) -> np.ndarray:
        """Slot of each :data:`PORT_ID` of ``query``, -1 where unknown."""
        if not self.count:
            return np.full(len(query), -1, dtype=np.int64)
        fingerprint = query.tobytes()
        if self.last is not None and self.last[0] == fingerprint:
            return self.last[1].copy()
        codes = self._codes(query)
        pos = np.minimum(np.searchsorted(self.codes, codes), self.count - 1)
        slots = np.where((codes >= 0) & (self.codes[pos] == codes), self.slots[pos], -1).astype(np.int64)
        if (slots >= 0).all():
            self.last = (fingerprint, slots.copy())
        return slots


class _Fold:
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


class EmbeddedStore:
    """:class:`~.store.TimeSeriesStore` in the SQLite file ``path`` (created as needed)."""

    def __init__(self, path: str | Path, *, retention_days: int = 90, max_bytes: int = 20 << 30,
                 tiers: Sequence[Tier] | None = None) -> None:
        self.tiers = tuple(tiers or default_tiers(retention_days))
        _check_tiers(self.tiers)
        self.max_bytes = int(max_bytes)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._lock = threading.RLock()
        self._db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only takes on a new file, before any table
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(_SCHEMA)
        self._ports: dict[int, _Ports] = {}

    # -- ports ---------------------------------------------------------------------------------------------
    def _load_ports(self, fabric: int) -> _Ports:
        rows = self._db.execute("SELECT slot, guid, port FROM ports WHERE fabric = ?", (fabric,)).fetchall()
        data = np.array(rows, dtype=np.int64).reshape(-1, 3)
        keys = np.empty(len(data), dtype=PORT_ID)
        keys["guid"], keys["port"] = data[:, 1].view(np.uint64), data[:, 2]
        self._ports[fabric] = _Ports(keys, data[:, 0])
        return self._ports[fabric]

    def _current_ports(self, fabric: int) -> _Ports:
        """The fabric's ports, read again when another process (or connection) added some."""
        ports = self._ports.get(fabric)
        (top,), = self._db.execute("SELECT MAX(slot) FROM ports WHERE fabric = ?", (fabric,))
        if ports is None or ports.count != (top + 1 if top is not None else 0):
            ports = self._load_ports(fabric)
        return ports

    def _slots(self, fabric: int, keys: np.ndarray, *, assign: bool) -> np.ndarray:
        ports = self._ports.get(fabric) or self._load_ports(fabric)
        slots = ports.find(keys)
        if (slots < 0).any():
            ports = self._load_ports(fabric)  # another process may have added them
            slots = ports.find(keys)
        if assign and (slots < 0).any():
            new = keys[slots < 0]
            fresh = ports.count + np.arange(len(new), dtype=np.int64)
            self._db.executemany("INSERT INTO ports (fabric, slot, guid, port) VALUES (?, ?, ?, ?)",
                                 zip([fabric] * len(new), fresh.tolist(), new["guid"].view(np.int64).tolist(),
                                     new["port"].tolist(), strict=True))
            slots[slots < 0] = fresh
            self._ports[fabric] = _Ports(np.concatenate([ports.keys, new]), np.concatenate([ports.slots, fresh]))
        return slots

    # -- marks ---------------------------------------------------------------------------------------------
    def _done(self, fabric: int) -> dict[int, int]:
        return dict(self._db.execute("SELECT tier, done FROM marks WHERE fabric = ?", (fabric,)).fetchall())

    def _newest(self, fabric: int) -> float | None:
        row = self._db.execute("SELECT newest FROM fabrics WHERE fabric = ?", (fabric,)).fetchone()
        return row[0] if row else None

    # -- writes --------------------------------------------------------------------------------------------
    def write(self, fabric_id: int, t: float, ports: np.ndarray, values: Mapping[str, np.ndarray]) -> None:
        """Store one sweep (see :class:`~.store.TimeSeriesStore`); a sweep older than the compacted raw tier is
        dropped with a warning (its span was already packed)."""
        keys, values = checked_sweep(ports, values)
        fabric, raw = int(fabric_id), self.tiers[0]
        bucket = math.floor(t / raw.step)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                done = self._done(fabric)
                if bucket * raw.step < done.get(0, -math.inf):
                    log.warning("tsdb: fabric %s sweep at t=%s is older than its packed history (%s); dropped",
                                fabric, t, done[0])
                    self._db.execute("COMMIT")
                    return
                slots = self._slots(fabric, keys, assign=True)
                self._db.executemany(
                    "INSERT OR REPLACE INTO pending (fabric, tier, series, part, bucket, data) "
                    "VALUES (?, 0, ?, ?, ?, ?)",
                    self._pending_rows(fabric, slots, values, bucket))
                newest = max(self._newest(fabric) or -math.inf, float(t))
                self._db.execute("INSERT OR REPLACE INTO fabrics (fabric, newest) VALUES (?, ?)", (fabric, newest))
                if self._compact(fabric, newest):
                    self._expire(fabric, newest)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                self._ports.pop(fabric, None)  # slots it assigned were rolled back
                raise
            self._bound()

    def _pending_rows(self, fabric: int, slots: np.ndarray, values: Mapping[str, np.ndarray], bucket: int):
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

    def _compact(self, fabric: int, newest: float) -> bool:
        """Pack every tier's complete spans (raw: before the span of ``newest``); whether any was packed."""
        packed, upto = False, math.floor(newest / self.tiers[0].span) * self.tiers[0].span
        for k, tier in enumerate(self.tiers):
            while True:
                row = self._db.execute("SELECT MIN(bucket) FROM pending WHERE fabric = ? AND tier = ?",
                                       (fabric, k)).fetchone()
                if row[0] is None:
                    break
                start = row[0] * tier.step // tier.span * tier.span
                if start + tier.span > upto:
                    break
                self._pack_span(fabric, k, start)
                packed = True
            upto = self._done(fabric).get(k, -math.inf)  # tier k+1 holds what tier k packed
        return packed

    def _pack_span(self, fabric: int, k: int, start: int) -> None:
        """Tier ``k``'s pending rows of the span at ``start`` become packed rows per block, and the next tier's
        pending rows (reduced by each series' aggregation); one part (:data:`PART` slots) at a time."""
        tier, nxt = self.tiers[k], self.tiers[k + 1] if k + 1 < len(self.tiers) else None
        nb, b0 = tier.span // tier.step, start // tier.step
        pairs = self._db.execute(
            "SELECT DISTINCT series, part FROM pending WHERE fabric = ? AND tier = ? AND bucket >= ? AND bucket < ?",
            (fabric, k, b0, b0 + nb)).fetchall()
        for name, part in pairs:
            rows = self._db.execute(
                "SELECT bucket, data FROM pending WHERE fabric = ? AND tier = ? AND series = ? AND part = ? "
                "AND bucket >= ? AND bucket < ?", (fabric, k, name, part, b0, b0 + nb)).fetchall()
            got = [decode_block(r[1], (-1,), "lz4") for r in rows]  # a part grows with its fabric
            mat = np.full((nb, PART), np.nan, dtype=np.float32)
            for (bucket, _), values in zip(rows, got, strict=True):
                mat[bucket - b0, :len(values)] = values
            keep = np.flatnonzero(~np.isnan(mat).all(axis=0).reshape(PART // BLOCK, BLOCK).all(axis=1))
            blocks = np.ascontiguousarray(mat.reshape(nb, PART // BLOCK, BLOCK)[:, keep].transpose(1, 2, 0))
            numbers = (part * (PART // BLOCK) + keep).tolist()
            self._db.executemany(
                "INSERT OR REPLACE INTO packed (fabric, tier, series, block, start, data) VALUES (?, ?, ?, ?, ?, ?)",
                zip([fabric] * len(keep), [k] * len(keep), [name] * len(keep), numbers, [start] * len(keep),
                    encode_rows(blocks), strict=True))
            if nxt is not None:
                ratio = nxt.step // tier.step
                coarse = reduce_groups(mat, ratio, series_of(name).agg, axis=0)
                js = np.flatnonzero(~np.isnan(coarse).all(axis=1))
                self._db.executemany(
                    "INSERT OR REPLACE INTO pending (fabric, tier, series, part, bucket, data) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    zip([fabric] * len(js), [k + 1] * len(js), [name] * len(js), [part] * len(js),
                        (start // nxt.step + js).tolist(), encode_rows(coarse[js], "lz4"), strict=True))
        self._db.execute("DELETE FROM pending WHERE fabric = ? AND tier = ? AND bucket >= ? AND bucket < ?",
                         (fabric, k, b0, b0 + nb))
        self._db.execute("INSERT OR REPLACE INTO marks (fabric, tier, done) VALUES (?, ?, ?)",
                         (fabric, k, max(start + tier.span, self._done(fabric).get(k, 0))))

    def _expire(self, fabric: int, newest: float) -> None:
        for k, tier in enumerate(self.tiers):
            self._db.execute("DELETE FROM packed WHERE fabric = ? AND tier = ? AND start + ? <= ?",
                             (fabric, k, tier.span, newest - tier.keep))
            self._db.execute("DELETE FROM pending WHERE fabric = ? AND tier = ? AND bucket < ?",
                             (fabric, k, math.floor((newest - tier.keep) / tier.step)))

    def used_bytes(self) -> int:
        """Bytes of the file in use (pages minus free pages)."""
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
        return (pages - free) * self._db.execute("PRAGMA page_size").fetchone()[0]

    def _bound(self) -> None:
        """Drop the oldest packed spans, finest tier first, while the file uses more than ``max_bytes``."""
        with self._lock:
            dropped = False
            while self.used_bytes() > self.max_bytes:
                row = self._db.execute(
                    "SELECT tier, MIN(start) FROM packed GROUP BY tier ORDER BY tier LIMIT 1").fetchone()
                if row is None:
                    break
                self._db.execute("DELETE FROM packed WHERE tier = ? AND start = ?", row)
                log.warning("tsdb: %s over its bound of %s bytes; dropped tier %s's span at %s", self.path,
                            self.max_bytes, *row)
                dropped = True
            if dropped:
                self._db.execute("PRAGMA incremental_vacuum")

    # -- reads ---------------------------------------------------------------------------------------------
    def _grid(self, fabric: int, k: int, name: str, blocks: tuple[int, int], g0: int, g1: int,
              done: dict[int, int], pick: np.ndarray | None = None) -> np.ndarray:
        """Tier ``k``'s buckets ``[g0, g1)`` of the slots of blocks ``[lo, hi)`` (only those at offsets ``pick`` from
        the first, when given), float32 ``[slots, g1-g0]``. Rows are decompressed whole, but only the picked slots'
        bytes are put back together."""
        tier, (lo, hi) = self.tiers[k], blocks
        s0, s1 = lo * BLOCK, hi * BLOCK
        pick = np.arange(s1 - s0) if pick is None else np.asarray(pick, dtype=np.int64)
        out = np.full((len(pick), g1 - g0), np.nan, dtype=np.float32)
        nb = tier.span // tier.step
        in_block = pick // BLOCK + lo
        for block, start, data in self._db.execute(
                "SELECT block, start, data FROM packed WHERE fabric = ? AND tier = ? AND series = ? AND block >= ? "
                "AND block < ? AND start > ? AND start < ?",
                (fabric, k, name, lo, hi, g0 * tier.step - tier.span, g1 * tier.step)):
            mine = np.flatnonzero(in_block == block)
            if not len(mine):
                continue
            first = start // tier.step
            a, b = max(g0, first), min(g1, first + nb)
            planes = byte_planes(data).reshape(4, BLOCK, nb)
            values = from_planes(planes if len(mine) == BLOCK else planes[:, pick[mine] % BLOCK])
            out[mine, a - g0:b - g0] = values[:, a - first:b - first]
        rows = self._db.execute(
            "SELECT part, bucket, data FROM pending WHERE fabric = ? AND tier = ? AND series = ? AND part >= ? "
            "AND part <= ? AND bucket >= ? AND bucket < ?",
            (fabric, k, name, s0 // PART, (s1 - 1) // PART, g0, g1)).fetchall()
        slot, whole = s0 + pick, len(pick) == s1 - s0  # whole: every slot, in order
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
            # what tier k-1 has not packed yet is read from it and reduced here
            fine = self.tiers[k - 1]
            d0 = g0 if (k - 1) not in done else max(g0, math.ceil(done[k - 1] / tier.step))
            if d0 < g1:
                ratio = tier.step // fine.step
                part = self._grid(fabric, k - 1, name, blocks, d0 * ratio, g1 * ratio, done, pick)
                out[:, d0 - g0:] = reduce_groups(part, ratio, series_of(name).agg, axis=1)
        return out

    def _tier_for(self, fabric: int, start: float, width: float) -> int:
        newest = self._newest(fabric)
        covering = [k for k, tier in enumerate(self.tiers) if newest is None or start >= newest - tier.keep]
        covering = covering or [len(self.tiers) - 1]
        fine = [k for k in covering if self.tiers[k].step <= width]
        return max(fine) if fine else min(covering)

    def _binned(self, fabric: int, name: str, slots: np.ndarray, start: float, end: float,
                points: int) -> tuple[np.ndarray, np.ndarray]:
        """``slots``' series in chart bins: bin starts ``[points]`` and values float64 ``[len(slots), points]``."""
        edges, width = bin_edges(start, end, points)
        k = self._tier_for(fabric, start, width)
        tier, agg = self.tiers[k], series_of(name).agg
        g0, g1 = math.floor(start / tier.step), math.ceil(end / tier.step)
        out = np.full((len(slots), points), np.nan)
        done = self._done(fabric)
        for block in np.unique(slots // BLOCK).tolist():
            mine = np.flatnonzero(slots // BLOCK == block)
            grid = self._grid(fabric, k, name, (block, block + 1), g0, g1, done, slots[mine] % BLOCK)
            if tier.step <= width:
                which = np.clip(((np.arange(g0, g1) * tier.step - start) // width).astype(np.int64), 0, points - 1)
                firsts = np.searchsorted(which, np.arange(points))
                out[mine] = reduce_bins(grid, np.minimum(firsts, grid.shape[1] - 1), agg)
                out[mine[:, None], np.flatnonzero(firsts >= grid.shape[1])[None, :]] = np.nan
            else:  # buckets wider than bins: each bin shows the bucket it falls in
                out[mine] = grid[:, (np.floor(edges / tier.step) - g0).astype(np.int64)]
        return edges, out

    def range(self, fabric_id: int, port: tuple[int, int], series: str, start: float, end: float,
              points: int) -> Range:
        """Port ``(guid, port)``'s ``series`` in ``points`` bins (all NaN for a port never written)."""
        series_of(series)
        key = np.array([(int(port[0]), int(port[1]))], dtype=PORT_ID)
        with self._lock:
            slot = self._slots(int(fabric_id), key, assign=False)
            if slot[0] < 0:
                edges, _ = bin_edges(start, end, points)
                return Range(edges, np.full(points, np.nan))
            edges, values = self._binned(int(fabric_id), series, slot, start, end, points)
        return Range(edges, values[0])

    def ports_of_switch(self, fabric_id: int, guid: int, series: str, start: float, end: float,
                        points: int) -> SwitchRange:
        """Every port of node ``guid`` ever written, side by side."""
        series_of(series)
        with self._lock:
            ports = self._current_ports(int(fabric_id))
            mine = ports.keys["guid"] == np.uint64(guid)
            slots, numbers = ports.slots[mine], ports.keys["port"][mine]
            if not len(slots):
                edges, _ = bin_edges(start, end, points)
                return SwitchRange(numbers, edges, np.empty((0, points)))
            edges, values = self._binned(int(fabric_id), series, slots, start, end, points)
        return SwitchRange(numbers, edges, values)

    def _fold(self, fabric: int, k: int, name: str, g0: int, g1: int, done: dict[int, int], acc: _Fold) -> None:
        """Fold tier ``k``'s buckets ``[g0, g1)`` of every slot into ``acc``, each region from the
        finest tier that holds it (no grid: one decoded row at a time)."""
        tier = self.tiers[k]
        nb = tier.span // tier.step
        for block, start, data in self._db.execute(
                "SELECT block, start, data FROM packed WHERE fabric = ? AND tier = ? AND series = ? AND start > ? "
                "AND start < ?", (fabric, k, name, g0 * tier.step - tier.span, g1 * tier.step)):
            first = start // tier.step
            a, b = max(g0, first), min(g1, first + nb)
            values = from_planes(byte_planes(data).reshape(4, BLOCK, nb)[:, :, a - first:b - first])
            acc.add(block, values, tier.step)
        for part, _, data in self._db.execute(
                "SELECT part, bucket, data FROM pending WHERE fabric = ? AND tier = ? AND series = ? AND bucket >= ? "
                "AND bucket < ?", (fabric, k, name, g0, g1)):
            acc.add_slots(part * PART, from_planes(byte_planes(data, "lz4")), tier.step)
        if k:
            fine = self.tiers[k - 1]
            d0 = g0 if (k - 1) not in done else max(g0, math.ceil(done[k - 1] / tier.step))
            if d0 < g1:
                ratio = tier.step // fine.step
                self._fold(fabric, k - 1, name, d0 * ratio, g1 * ratio, done, acc)

    def top(self, fabric_ids: int | Sequence[int], series: str, start: float, end: float, n: int) -> np.ndarray:
        """The ``n`` highest (``min`` series: lowest) ports over ``[start, end)``: each port's series reduced over
        the window (a mean weighted by bucket length), from the coarsest tier with :data:`TOP_BINS` buckets in it
        and the finer tiers for what it has not packed yet."""
        agg, _ = series_of(series).agg, bin_edges(start, end, 1)
        found = []
        with self._lock:
            for fabric in fabric_list(fabric_ids):
                ports = self._current_ports(fabric)
                if not ports.count:
                    continue
                k = self._tier_for(fabric, start, (end - start) / TOP_BINS)
                tier, done = self.tiers[k], self._done(fabric)
                g0, g1 = math.floor(start / tier.step), math.ceil(end / tier.step)
                size = (int(ports.slots.max()) // BLOCK + 1) * BLOCK
                acc = _Fold(size, agg)
                self._fold(fabric, k, series, g0, g1, done, acc)
                rows = np.empty(ports.count, dtype=TOP)
                rows["fabric"], rows["guid"], rows["port"] = fabric, ports.keys["guid"], ports.keys["port"]
                rows["value"] = acc.result()[ports.slots]
                found.append(top_order(rows, n, agg == "min"))
        return top_order(np.concatenate(found) if found else np.empty(0, TOP), n, agg == "min")

    def close(self) -> None:
        with self._lock:
            self._db.close()
