"""Celery tasks of the live app: one-minute rollups of the history ring by link identity, and their retention.

A minute's row says how much of it is known (issue 35): ``coverage_s`` seconds measured, ``down_s`` seconds
the link was down; its means are over the covered seconds. A minute the ring has no tick of gets no row.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
from celery import shared_task
from django.conf import settings
from django.db import transaction

from ibweb.live.history import reads, ring
from ibweb.live.history.link_identity import IDENTITY, db_guid, guid_from_db
from ibweb.live.models import FABRIC_WIDE, NO_LINK, LinkRollup

__all__ = ["rollup_history", "rollup_minute", "RETENTION_H"]

#: Hours of rollups kept (older rows are deleted by every rollup run).
RETENTION_H = float(getattr(settings, "IBWEB_ROLLUP_RETENTION_H", 24))


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
                  known: np.ndarray | None = None) -> list[LinkRollup]:
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
    rows: list[LinkRollup] = []
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
    wide = LinkRollup(fabric_id=fabric_id, minute=when, link=FABRIC_WIDE,
                      mean_util=util_total / cells if cells else None, max_util=peak if cells else None,
                      mean_rate_gbps=rate_total / covered_ticks if covered_ticks else None, samples=covered_ticks,
                      coverage_s=min(covered_ticks * per_s, 60.0), down_s=min(down_ticks * per_s, 60.0))
    return [wide, *rows]


def _rows(k: int, **columns) -> list[LinkRollup]:
    """``k`` unsaved rows from ``columns`` (field name: a list of ``k`` values, or one value for every row), built
    positionally: Django's keyword construction costs three times as much, and a minute may have 200k rows."""
    names = [f.attname for f in LinkRollup._meta.concrete_fields]
    unknown = set(columns) - set(names)
    if unknown:
        raise TypeError(f"LinkRollup has no field {sorted(unknown)}")
    cols = [columns.get(n) if isinstance(columns.get(n), list) else [columns.get(n)] * k for n in names]
    return [LinkRollup(*values) for values in zip(*cols, strict=True)]


def _absent(known: np.ndarray | None, parts: list[reads.Ticks]) -> np.ndarray | None:
    """The ``known`` identities whose transmitting port no part's topology has: down, not re-cabled elsewhere."""
    if known is None or not len(known):
        return None
    gone = np.ones(len(known), dtype=bool)
    for p in parts:  # loop over the minute's topologies
        gone &= p.identities.find_ports(known) < 0
    return known[gone]


def _carried(fabric_id: int, minute: datetime) -> np.ndarray:
    """Identities down in the newest rolled-up minute before ``minute``: known links, down wherever no topology
    of ``minute`` has them (unless their port is cabled elsewhere: :func:`_absent`)."""
    before = (LinkRollup.objects.filter(fabric_id=fabric_id, link=FABRIC_WIDE, tx_guid__isnull=True, minute__lt=minute)
              .order_by("-minute").values_list("minute", flat=True).first())
    rows = [] if before is None else list(
        LinkRollup.objects.filter(fabric_id=fabric_id, minute=before, tx_guid__isnull=False, down_s__gt=0)
        .values_list("tx_guid", "tx_port", "rx_guid", "rx_port"))
    out = np.empty(len(rows), dtype=IDENTITY)
    if rows:
        cols = np.array(rows, dtype=np.int64)
        out["tx_guid"], out["tx_port"] = guid_from_db(cols[:, 0]), cols[:, 1]
        out["rx_guid"], out["rx_port"] = guid_from_db(cols[:, 2]), cols[:, 3]
    return out


def _known(fabric_id: int, minute: int, when: datetime) -> np.ndarray:
    """The identities the fabric had before the end of ``minute`` besides that minute's topologies: the ring's
    topologies that started before, and the links down in the rolled-up minute before."""
    tables = [ids.keys for ids in reads.known_before(fabric_id, (minute + 1) * 60.0)]
    return _unique(np.concatenate([*tables, _carried(fabric_id, when)]))[0]


@shared_task
def rollup_history(fabric_id: int) -> int:
    """Roll up every finished minute of the fabric's history ring not stored yet, then prune old rollups.

    A minute is finished once the ring holds a tick of a later minute. Runs are
    idempotent (a stored minute is skipped), so the engine may start one per
    minute and a Celery beat may run it too. Returns the number of minutes stored.
    """
    idx = ring.index(fabric_id)
    stored = 0
    if idx and idx["t"]:
        newest = int(idx["t"][-1] // 60)
        minutes = sorted({int(t // 60) for t in idx["t"]} - {newest})
        whens = [datetime.fromtimestamp(m * 60, tz=UTC) for m in minutes]
        done = set(LinkRollup.objects.filter(fabric_id=fabric_id, link=FABRIC_WIDE, minute__in=whens)
                   .values_list("minute", flat=True))
        for m, when in zip(minutes, whens, strict=True):  # loop over a few minutes
            if when in done:
                continue
            parts = reads.ticks(fabric_id, m * 60.0, (m + 1) * 60.0)
            if not parts:
                continue
            rows = rollup_minute(fabric_id, m, parts, reads.tick_seconds(idx), _known(fabric_id, m, when))
            with transaction.atomic():
                LinkRollup.objects.bulk_create(rows, batch_size=2000, ignore_conflicts=True)
            stored += 1
    cutoff = datetime.now(tz=UTC) - timedelta(hours=RETENTION_H)
    LinkRollup.objects.filter(fabric_id=fabric_id, minute__lt=cutoff).delete()
    return stored
