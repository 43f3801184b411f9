"""The SQL rollups ibweb wrote before issue 40, kept only as the benches' baseline (``bench_tsdb.py`` measures them
side by side with the time-series store; ``bench_rollup.py`` the ring and them).

One row per busy directed link per minute (mean and peak utilization, mean rate, coverage and down seconds) and a
fabric-wide row, computed from the history ring's ticks as the removed ``ibweb.live.tasks.rollup_minute`` did, and
the table, indexes and constraints Django created for the removed ``LinkRollup`` model (:data:`TABLE_SQL`, SQLite).
ibweb itself no longer writes or reads these: the rollup endpoints read the time-series store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from django.db import models

from ibweb.live.history import reads

__all__ = ["FIELDS", "FABRIC_WIDE", "NO_LINK", "Row", "TABLE_SQL", "rollup_minute"]

FABRIC_WIDE = -1
NO_LINK = -2


class Row(models.Model):
    """One rollup row: the removed ``LinkRollup`` model's fields, a bench-only unmanaged model (built as the removed
    task built its rows, so the baseline's cost is the one ibweb paid)."""

    fabric = models.ForeignKey("fabrics.Fabric", on_delete=models.DO_NOTHING, related_name="+", db_constraint=False)
    minute = models.DateTimeField()
    link = models.IntegerField()
    tx_guid = models.BigIntegerField(null=True)
    tx_port = models.PositiveSmallIntegerField(null=True)
    rx_guid = models.BigIntegerField(null=True)
    rx_port = models.PositiveSmallIntegerField(null=True)
    mean_util = models.FloatField(null=True)
    max_util = models.FloatField(null=True)
    mean_rate_gbps = models.FloatField(null=True)
    samples = models.PositiveIntegerField()
    coverage_s = models.FloatField(default=0.0)
    down_s = models.FloatField(default=0.0)

    class Meta:
        app_label = "live"
        managed = False
        db_table = "live_linkrollup"

    def __str__(self) -> str:
        return f"{self.fabric_id}:{self.link}@{self.minute:%Y-%m-%d %H:%M}"


FIELDS = tuple(f.attname for f in Row._meta.concrete_fields)

#: The removed model's table as Django created it on SQLite.
TABLE_SQL = [
    'CREATE TABLE "live_linkrollup" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "fabric_id" bigint NOT NULL, '
    '"minute" datetime NOT NULL, "link" integer NOT NULL, "tx_guid" bigint NULL, "tx_port" smallint unsigned NULL '
    'CHECK ("tx_port" >= 0), "rx_guid" bigint NULL, "rx_port" smallint unsigned NULL CHECK ("rx_port" >= 0), '
    '"mean_util" real NULL, "max_util" real NULL, "mean_rate_gbps" real NULL, "samples" integer unsigned NOT NULL '
    'CHECK ("samples" >= 0), "coverage_s" real NOT NULL, "down_s" real NOT NULL)',
    'CREATE UNIQUE INDEX "live_rollup_unique" ON "live_linkrollup" ("fabric_id", "minute", "link") '
    'WHERE "tx_guid" IS NULL',
    'CREATE UNIQUE INDEX "live_rollup_identity_unique" ON "live_linkrollup" ("fabric_id", "minute", "tx_guid", '
    '"tx_port", "rx_guid", "rx_port") WHERE "tx_guid" IS NOT NULL',
    'CREATE INDEX "live_linkrollup_fabric_id_cb9f7f35" ON "live_linkrollup" ("fabric_id")',
    'CREATE INDEX "live_rollup_series" ON "live_linkrollup" ("fabric_id", "link", "minute")',
    'CREATE INDEX "live_rollup_port" ON "live_linkrollup" ("fabric_id", "tx_guid", "tx_port", "minute")',
]


@dataclass(frozen=True)
class _Links:
    """Per-link sums of one minute, over the union of the keys of its parts and the extra known keys:
    ``keys`` (unique), ``newest`` directed-link index (-1: in no part), ``present`` ticks the link's
    topology had it (``measured``: of those, ticks that measured some link), ``covered`` ticks with a
    value, summed ``util`` and ``rate`` over those, ``peak`` util."""

    keys: np.ndarray
    newest: np.ndarray
    present: np.ndarray
    measured: np.ndarray
    covered: np.ndarray
    util: np.ndarray
    rate: np.ndarray
    peak: np.ndarray


def _unique(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)``, for :data:`IDENTITY` keys by a lexsort of their fields (numpy's
    sort of a structured array is ten times slower)."""
    if keys.dtype.names is None:
        return np.unique(keys, return_inverse=True)
    order = np.lexsort([keys[name] for name in reversed(keys.dtype.names)])
    ordered = keys[order]
    starts = np.ones(len(keys), dtype=bool)
    if len(keys):
        starts[1:] = np.logical_or.reduce([ordered[name][1:] != ordered[name][:-1] for name in keys.dtype.names])
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


def db_guid(guid: np.ndarray) -> np.ndarray:
    """Unsigned 64-bit GUIDs as the signed integers the table stored (two's complement)."""
    return np.asarray(guid, dtype=np.uint64).view(np.int64)


def _per_link(parts: list[reads.Ticks], keys: list[np.ndarray], extra: np.ndarray | None = None) -> _Links:
    """Group the parts' links by key (one key array per part, ``[2L_k]``), plus ``extra`` keys in no part's
    topology maybe (a link known to the fabric: where no part has it, it is down all minute)."""
    every = np.concatenate(keys + ([extra] if extra is not None and len(extra) else []))
    uniq, inverse = _unique(every)
    m = len(uniq)
    util, rate, peak = np.zeros(m), np.zeros(m), np.zeros(m)
    present, measured, covered = (np.zeros(m, dtype=np.int64) for _ in range(3))
    newest = np.full(m, -1, dtype=np.int64)
    lo = 0
    for part in parts:  # loop over the minute's topologies, vectorized over links
        s, n = part.series, part.series.rate.shape[1]
        at = inverse[lo:lo + n]
        valid = ~np.isnan(s.util)
        np.add.at(util, at, np.nansum(s.util, axis=0, dtype=np.float64))
        np.add.at(rate, at, np.nansum(s.rate, axis=0, dtype=np.float64))
        np.add.at(present, at, len(s.t))
        np.add.at(measured, at, int(valid.any(axis=1).sum()))
        np.add.at(covered, at, valid.sum(axis=0))
        np.maximum.at(peak, at, np.nan_to_num(np.fmax.reduce(s.util, axis=0), nan=0.0))
        newest[at] = np.arange(n)  # a later part overwrites: its index is the newest
        lo += n
    return _Links(uniq, newest, present, measured, covered, util, rate, peak)


def _means(total: np.ndarray, count: np.ndarray) -> list[float | None]:
    """``total / count``, None where ``count`` is 0 (no covered tick: no value, never 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (total / count).astype(object)
    out[count == 0] = None
    return out.tolist()


def rollup_minute(fabric_id: int, minute: int, parts: list[reads.Ticks], tick_s: float = 1.0,
                  known: np.ndarray | None = None) -> list[Row]:
    """The rollup rows of one minute from its ticks, one ``reads.Ticks`` per topology (>= 1 tick).

    ``minute`` counts minutes since the epoch; each tick stands for ``tick_s`` seconds. ``known``: identities
    (:data:`~ibweb.live.history.link_identity.IDENTITY`) the fabric had before this minute's end besides the parts' own
    (older topologies of the ring, links down in the minute before). A link's row carries its identity and:

    * ``coverage_s``: seconds with a measurement of it; ``samples`` those ticks;
    * ``down_s``: seconds of ticks whose topology lacked it (a cable cut, or re-cabled elsewhere);
    * ``mean_util``, ``max_util``, ``mean_rate_gbps``: over the covered seconds only (None when there are none).

    Seconds without a tick (engine stopped) are neither: ``60 - coverage_s - down_s`` is unknown. Ticks
    recorded without a topology give rows by directed-link index, without identity, never down. A link
    gets a row when it carried traffic, was down, or lacked data in a tick that measured others; an idle,
    fully covered link gets none (its values are zero over the fabric-wide row's coverage). The
    fabric-wide row is always there: ``coverage_s`` the seconds of ticks that measured some link
    (``samples`` those ticks; a tick measuring none, every link stale, is no data), ``down_s`` those
    in which some link was down, means over every covered link-tick (``mean_rate_gbps``: rate summed over
    the directed links, per covered tick).
    """
    when = datetime.fromtimestamp(minute * 60, tz=UTC)
    cells = sum(int(np.count_nonzero(~np.isnan(p.series.util))) for p in parts)
    util_total = sum(float(np.nansum(p.series.util, dtype=np.float64)) for p in parts)
    rate_total = sum(float(np.nansum(p.series.rate, dtype=np.float64)) for p in parts)
    peak = max((float(np.nan_to_num(np.nanmax(p.series.util, initial=0.0))) for p in parts), default=0.0)
    per_s = float(tick_s)
    rows: list[Row] = []
    down_ticks = 0
    for named in (True, False):
        mine = [p for p in parts if (p.identities is not None) == named]
        if not mine:
            continue
        keys = [p.identities.keys if named else np.arange(p.series.rate.shape[1]) for p in mine]
        per = _per_link(mine, keys, _absent(known, mine) if named else None)
        total = sum(len(p.series.t) for p in mine)
        down = total - per.present if named else np.zeros(len(per.keys), dtype=np.int64)
        if named:  # a part lacking some link of the union: its ticks had a link down
            size = [len(k) for k in keys]
            down_ticks += sum(len(p.series.t) for p, k in zip(mine, size, strict=True) if k < len(per.keys))
        busy = np.flatnonzero((per.peak > 0) | (per.rate > 0) | (down > 0) | (per.covered < per.measured))
        ident = per.keys[busy]
        none = [None] * len(busy)
        tx_guid = db_guid(ident["tx_guid"]).tolist() if named else none
        rx_guid = db_guid(ident["rx_guid"]).tolist() if named else none
        tx_port = ident["tx_port"].tolist() if named else none
        rx_port = ident["rx_port"].tolist() if named else none
        covered = per.covered[busy]
        peaks = np.where(covered > 0, per.peak[busy], np.nan).astype(object)
        peaks[covered == 0] = None
        rows += _rows(len(busy), fabric_id=fabric_id, minute=when,
                      link=np.where(per.newest[busy] < 0, NO_LINK, per.newest[busy]).tolist(), tx_guid=tx_guid,
                      tx_port=tx_port, rx_guid=rx_guid, rx_port=rx_port, mean_util=_means(per.util[busy], covered),
                      max_util=peaks.tolist(), mean_rate_gbps=_means(per.rate[busy], covered), samples=covered.tolist(),
                      coverage_s=np.minimum(covered * per_s, 60.0).tolist(),
                      down_s=np.minimum(down[busy] * per_s, 60.0).tolist())
    covered_ticks = sum(int(np.any(~np.isnan(p.series.util), axis=1).sum()) for p in parts)
    wide = Row(fabric_id=fabric_id, minute=when, link=FABRIC_WIDE, mean_util=util_total / cells if cells else None,
               max_util=peak if cells else None, samples=covered_ticks,
               mean_rate_gbps=rate_total / covered_ticks if covered_ticks else None,
               coverage_s=min(covered_ticks * per_s, 60.0), down_s=min(down_ticks * per_s, 60.0))
    return [wide, *rows]


def _rows(k: int, **columns) -> list[Row]:
    """``k`` unsaved rows from ``columns`` (field name: a list of ``k`` values, or one value for every row), built
    positionally, as the removed task built its Django rows (keyword construction cost three times as much)."""
    unknown = set(columns) - set(FIELDS)
    if unknown:
        raise TypeError(f"a rollup row has no field {sorted(unknown)}")
    cols = [columns.get(n) if isinstance(columns.get(n), list) else [columns.get(n)] * k for n in FIELDS]
    return [Row(*values) for values in zip(*cols, strict=True)]


def _absent(known: np.ndarray | None, parts: list[reads.Ticks]) -> np.ndarray | None:
    """The ``known`` identities whose transmitting port no part's topology has: down, not re-cabled elsewhere."""
    if known is None or not len(known):
        return None
    gone = np.ones(len(known), dtype=bool)
    for p in parts:  # loop over the minute's topologies
        gone &= p.identities.find_ports(known) < 0
    return known[gone]
