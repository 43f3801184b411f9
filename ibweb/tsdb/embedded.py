"""The embedded backend: per-port series in one SQLite file, in downsampling tiers, bounded in size.

The store itself: the file and its connection, port slots, and the write and read entry points. How history is
laid out (tiers, blocks, parts, tables) is :mod:`.layout`; how sweeps become packed rows and coarser tiers,
:mod:`.packing`; how it stays bounded (each tier's ``keep``, ``max_bytes``), :mod:`.retention`; how it is read
(grids, chart bins, top-N folds), :mod:`.reads`; how values are kept, :mod:`.codec`. Measured
(``tests/bench/bench_tsdb.py``, the leader's 30 series of the loaded rail fabrics): 0.29 byte per raw sample, 128 kB
per port per day at 10 s; writing costs 1.3% of a core at 16,384 GPUs (98,304 ports) and 3.6% at 32,768 (196,608
ports), one sweep per 10 s, packing included.

Ports get a slot per fabric the first time they are written (``ports``: slot -> node GUID, port number; a
re-cabled port keeps its slot, :class:`~.slots.PortSlots`). Times are the sweeps' own ``t``: the newest written
``t`` of a fabric is its "now" for retention. A tier holds what its finer tier has packed; reads derive the rest
from the finer tier, so the newest sweep is always readable. A sweep older than the packed raw history is dropped
with a warning.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from . import packing, reads, retention
from .layout import BLOCK, DAY, LEGACY_LAYOUT, PART, SCHEMA, TOP_BINS, Tier, check_tiers, default_tiers
from .series import PORT_ID, checked_sweep, port_ids, series_of
from .slots import PortSlots
from .store import TOP, FabricStats, Range, Ranges, Stats, SwitchRange, bin_edges, fabric_list, top_order

__all__ = ["BLOCK", "DAY", "PART", "EmbeddedStore", "Tier", "default_tiers"]

log = logging.getLogger(__name__)


class EmbeddedStore:
    """:class:`~.store.TimeSeriesStore` in the SQLite file ``path`` (created as needed)."""

    def __init__(self, path: str | Path, *, retention_days: int = 90, max_bytes: int = 20 << 30,
                 tiers: Sequence[Tier] | None = None, minute_step: int = 60) -> None:
        self.tiers = tuple(tiers or default_tiers(retention_days, minute_step=minute_step))
        check_tiers(self.tiers)
        self.max_bytes = int(max_bytes)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._lock = threading.RLock()
        self._db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only takes on a new file, before any table
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(SCHEMA)
        self.tiers = self._file_layout(self.tiers)
        self._ports: dict[int, PortSlots] = {}

    def _file_layout(self, wanted: tuple[Tier, ...]) -> tuple[Tier, ...]:
        """The tiers the file is laid out in, with ``wanted``'s keeps: recorded in the file when it is made (a file
        written before the layout was recorded is :data:`~.layout.LEGACY_LAYOUT`); a file keeps its layout whatever
        the settings say now (its rows mean its own steps), with a warning naming both."""
        rows = self._db.execute("SELECT step, span FROM layout ORDER BY tier").fetchall()
        if not rows and self._db.execute("SELECT 1 FROM packed UNION ALL SELECT 1 FROM pending LIMIT 1").fetchone():
            rows = list(LEGACY_LAYOUT)
        if not rows:
            self._db.executemany("INSERT INTO layout (tier, step, span) VALUES (?, ?, ?)",
                                 [(k, t.step, t.span) for k, t in enumerate(wanted)])
            return wanted
        if len(rows) != len(wanted):
            raise ValueError(f"time-series store {self.path}: laid out in {len(rows)} tiers, {len(wanted)} asked")
        tiers = tuple(Tier(step, span, t.keep) for (step, span), t in zip(rows, wanted, strict=True))
        check_tiers(tiers)
        if not self._db.execute("SELECT 1 FROM layout LIMIT 1").fetchone():
            self._db.executemany("INSERT INTO layout (tier, step, span) VALUES (?, ?, ?)",
                                 [(k, t.step, t.span) for k, t in enumerate(tiers)])
        if [t.step for t in tiers] != [t.step for t in wanted] or [t.span for t in tiers] != [t.span for t in wanted]:
            log.warning("time-series store %s keeps the steps it was made with (%s s), not %s s: a new file takes "
                        "IBWEB_TSDB_STEP_S", self.path, [t.step for t in tiers], [t.step for t in wanted])
        return tiers

    # -- ports ---------------------------------------------------------------------------------------------
    def _load_ports(self, fabric: int) -> PortSlots:
        rows = self._db.execute("SELECT slot, guid, port FROM ports WHERE fabric = ?", (fabric,)).fetchall()
        data = np.array(rows, dtype=np.int64).reshape(-1, 3)
        keys = np.empty(len(data), dtype=PORT_ID)
        keys["guid"], keys["port"] = data[:, 1].view(np.uint64), data[:, 2]
        self._ports[fabric] = PortSlots(keys, data[:, 0])
        return self._ports[fabric]

    def _current_ports(self, fabric: int) -> PortSlots:
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
            self._ports[fabric] = PortSlots(np.concatenate([ports.keys, new]), np.concatenate([ports.slots, fresh]))
        return slots

    # -- marks ---------------------------------------------------------------------------------------------
    def _done(self, fabric: int) -> dict[int, int]:
        return packing.done_marks(self._db, fabric)

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
                    "VALUES (?, 0, ?, ?, ?, ?)", packing.pending_rows(fabric, slots, values, bucket))
                newest = max(self._newest(fabric) or -math.inf, float(t))
                self._db.execute("INSERT OR REPLACE INTO fabrics (fabric, newest) VALUES (?, ?)", (fabric, newest))
                if packing.compact(self._db, self.tiers, fabric, newest):
                    retention.expire(self._db, self.tiers, fabric, newest)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                self._ports.pop(fabric, None)  # slots it assigned were rolled back
                raise
            retention.bound(self._db, self.max_bytes, self.path)

    def used_bytes(self) -> int:
        """Bytes of the file in use (pages minus free pages)."""
        with self._lock:
            return retention.used_bytes(self._db)

    # -- reads ---------------------------------------------------------------------------------------------
    def _binned(self, fabric: int, name: str, slots: np.ndarray, start: float, end: float,
                points: int) -> tuple[np.ndarray, np.ndarray]:
        return reads.binned(self._db, self.tiers, fabric, self._newest(fabric), self._done(fabric), name, slots,
                            start, end, points)

    def range(self, fabric_id: int, port: tuple[int, int], series: str, start: float, end: float,
              points: int) -> Range:
        """Port ``(guid, port)``'s ``series`` in ``points`` bins (all NaN for a port never written)."""
        key = np.array([(int(port[0]), int(port[1]))], dtype=PORT_ID)
        got = self.ranges(fabric_id, key, series, start, end, points)
        return Range(got.t, got.values[0])

    def ranges(self, fabric_id: int, ports: np.ndarray, series: str, start: float, end: float,
               points: int) -> Ranges:
        """Ports ``ports`` (:data:`~.series.PORT_ID`) side by side, in their order (all NaN: never written)."""
        series_of(series)
        keys = port_ids(ports)
        edges, _ = bin_edges(start, end, points)
        values = np.full((len(keys), points), np.nan)
        with self._lock:
            slots = self._slots(int(fabric_id), keys, assign=False)
            known = np.flatnonzero(slots >= 0)
            if len(known):
                edges, values[known] = self._binned(int(fabric_id), series, slots[known], start, end, points)
        return Ranges(keys, edges, values)

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

    def stats(self, fabric_id: int, ports: np.ndarray, series: str, start: float, end: float,
              points: int) -> Stats:
        """Ports ``ports`` side by side in ``points`` bins, each bin's bucket count, mean, peak and sum, from the tier
        :meth:`ranges` reads (``sample_s`` its step; a port never written: count 0)."""
        series_of(series)
        keys = port_ids(ports)
        edges, width = bin_edges(start, end, points)
        count = np.zeros((len(keys), points), dtype=np.int64)
        total, peak = np.full((len(keys), points), np.nan), np.full((len(keys), points), np.nan)
        fabric = int(fabric_id)
        with self._lock:
            newest = self._newest(fabric)
            step = float(self.tiers[reads.tier_for(self.tiers, newest, start, width)].step)
            slots = self._slots(fabric, keys, assign=False)
            known = np.flatnonzero(slots >= 0)
            if len(known):
                edges, count[known], total[known], peak[known], step = reads.binned_stats(
                    self._db, self.tiers, fabric, newest, self._done(fabric), series, slots[known], start, end,
                    points)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = total / count
        return Stats(keys, edges, count, mean, peak, total, step)

    def fabric_stats(self, fabric_id: int, series: str, start: float, end: float, points: int) -> FabricStats:
        """Every port of the fabric together in ``points`` bins, read a part (:data:`~.layout.PART` slots) at a
        time."""
        series_of(series)
        edges, width = bin_edges(start, end, points)
        count, sweeps = np.zeros(points, dtype=np.int64), np.zeros(points, dtype=np.int64)
        total, peak, short = np.zeros(points), np.full(points, -np.inf), np.zeros(points)
        fabric = int(fabric_id)
        with self._lock:
            ports, newest = self._current_ports(fabric), self._newest(fabric)
            step = float(self.tiers[reads.tier_for(self.tiers, newest, start, width)].step)
            slots = np.sort(ports.slots)
            for lo in range(0, len(slots), PART):  # a part of slots at a time, vectorized within
                edges, n, s, m, step = reads.binned_stats(self._db, self.tiers, fabric, newest, self._done(fabric),
                                                          series, slots[lo:lo + PART], start, end, points)
                count += n.sum(axis=0)
                sweeps = np.maximum(sweeps, n.max(axis=0))
                total += np.nansum(s, axis=0)
                peak = np.fmax(peak, np.nanmax(np.where(n > 0, m, -np.inf), axis=0))
                short = np.maximum(short, np.where(n > 0, n - np.nan_to_num(s), 0).max(axis=0))
        seen = count > 0
        return FabricStats(edges, count, sweeps, np.where(seen, total, np.nan), np.where(seen, peak, np.nan),
                           np.where(seen, short, np.nan), step)

    def top(self, fabric_ids: int | Sequence[int], series: str, start: float, end: float, n: int) -> np.ndarray:
        """The ``n`` highest (``min`` series: lowest) ports over ``[start, end)``: each port's series reduced over
        the window (a mean weighted by bucket length), from the coarsest tier with :data:`~.layout.TOP_BINS` buckets
        in it and the finer tiers for what it has not packed yet."""
        agg, _ = series_of(series).agg, bin_edges(start, end, 1)
        found = []
        with self._lock:
            for fabric in fabric_list(fabric_ids):
                ports = self._current_ports(fabric)
                if not ports.count:
                    continue
                k = reads.tier_for(self.tiers, self._newest(fabric), start, (end - start) / TOP_BINS)
                tier = self.tiers[k]
                g0, g1 = math.floor(start / tier.step), math.ceil(end / tier.step)
                acc = reads.Fold((int(ports.slots.max()) // BLOCK + 1) * BLOCK, agg)
                reads.fold(self._db, self.tiers, fabric, k, series, g0, g1, self._done(fabric), acc)
                rows = np.empty(ports.count, dtype=TOP)
                rows["fabric"], rows["guid"], rows["port"] = fabric, ports.keys["guid"], ports.keys["port"]
                rows["value"] = acc.result()[ports.slots]
                found.append(top_order(rows, n, agg == "min"))
        return top_order(np.concatenate(found) if found else np.empty(0, TOP), n, agg == "min")

    def close(self) -> None:
        with self._lock:
            self._db.close()
