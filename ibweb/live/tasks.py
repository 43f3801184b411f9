"""Celery tasks of the live app: one-minute rollups of the history ring by link identity, and their retention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from celery import shared_task
from django.conf import settings
from django.db import transaction

from . import history
from .link_identity import db_guid
from .models import FABRIC_WIDE, LinkRollup

__all__ = ["rollup_history", "rollup_minute", "RETENTION_H"]

#: Hours of rollups kept (older rows are deleted by every rollup run).
RETENTION_H = float(getattr(settings, "IBWEB_ROLLUP_RETENTION_H", 24))


def _per_link(parts: list[history.Ticks], keys: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """Group the parts' links by key (one key array per part, ``[2L_k]``): the unique keys, each one's newest
    directed-link index, ticks, summed and peak utilization, summed rate (sums over its ticks)."""
    every = np.concatenate(keys)
    uniq, inverse = np.unique(every, return_inverse=True)
    m = len(uniq)
    util_sum, rate_sum, samples = np.zeros(m), np.zeros(m), np.zeros(m, dtype=np.int64)
    peak = np.zeros(m)
    newest = np.zeros(m, dtype=np.int64)
    lo = 0
    for part in parts:  # loop over the minute's topologies, vectorized over links
        s, n = part.series, part.series.rate.shape[1]
        at = inverse[lo:lo + n]
        np.add.at(util_sum, at, s.util.sum(axis=0, dtype=np.float64))
        np.add.at(rate_sum, at, s.rate.sum(axis=0, dtype=np.float64))
        np.add.at(samples, at, len(s.t))
        np.maximum.at(peak, at, s.util.max(axis=0))
        newest[at] = np.arange(n)  # a later part overwrites: its index is the newest
        lo += n
    return uniq, newest, samples, util_sum, peak, rate_sum


def rollup_minute(fabric_id: int, minute: int, parts: list[history.Ticks]) -> list[LinkRollup]:
    """The rollup rows of one minute from its ticks, one :class:`~ibweb.live.history.Ticks` per topology (>= 1 tick).

    ``minute`` counts minutes since the epoch. A link's row carries its identity and its values over the
    ticks it existed in (a cabling change inside the minute splits no link); ticks recorded without a
    topology give rows by directed-link index, without identity. Links with no traffic all minute get no
    row; the fabric-wide row is always there.
    """
    when = datetime.fromtimestamp(minute * 60, tz=UTC)
    ticks = sum(len(p.series.t) for p in parts)
    cells = sum(p.series.util.size for p in parts)
    util_total = sum(float(p.series.util.sum(dtype=np.float64)) for p in parts)
    rows = [LinkRollup(fabric_id=fabric_id, minute=when, link=FABRIC_WIDE, mean_util=util_total / max(cells, 1),
                       max_util=max((float(p.series.util.max(initial=0.0)) for p in parts), default=0.0),
                       mean_rate_gbps=sum(float(p.series.rate.sum(dtype=np.float64)) for p in parts) / ticks,
                       samples=ticks)]
    for named in (True, False):
        mine = [p for p in parts if (p.identities is not None) == named]
        if not mine:
            continue
        keys = [p.identities.keys if named else np.arange(p.series.rate.shape[1]) for p in mine]
        uniq, link, samples, util_sum, peak, rate_sum = _per_link(mine, keys)
        busy = np.flatnonzero((peak > 0) | (rate_sum > 0))
        ident = uniq[busy]
        tx_guid = db_guid(ident["tx_guid"]).tolist() if named else [None] * len(busy)
        rx_guid = db_guid(ident["rx_guid"]).tolist() if named else [None] * len(busy)
        tx_port = ident["tx_port"].tolist() if named else [None] * len(busy)
        rx_port = ident["rx_port"].tolist() if named else [None] * len(busy)
        mean_util = (util_sum[busy] / samples[busy]).tolist()
        mean_rate = (rate_sum[busy] / samples[busy]).tolist()
        rows += [LinkRollup(fabric_id=fabric_id, minute=when, link=d, tx_guid=tg, tx_port=tp, rx_guid=rg, rx_port=rp,
                            mean_util=a, max_util=m, mean_rate_gbps=r, samples=c)
                 for d, tg, tp, rg, rp, a, m, r, c in zip(link[busy].tolist(), tx_guid, tx_port, rx_guid, rx_port,
                                                          mean_util, peak[busy].tolist(), mean_rate,
                                                          samples[busy].tolist(), strict=True)]
    return rows


@shared_task
def rollup_history(fabric_id: int) -> int:
    """Roll up every finished minute of the fabric's history ring not stored yet, then prune old rollups.

    A minute is finished once the ring holds a tick of a later minute. Runs are
    idempotent (a stored minute is skipped), so the engine may start one per
    minute and a Celery beat may run it too. Returns the number of minutes stored.
    """
    idx = history.index(fabric_id)
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
            parts = history.ticks(fabric_id, m * 60.0, (m + 1) * 60.0)
            if not parts:
                continue
            with transaction.atomic():
                LinkRollup.objects.bulk_create(rollup_minute(fabric_id, m, parts), batch_size=2000,
                                               ignore_conflicts=True)
            stored += 1
    cutoff = datetime.now(tz=UTC) - timedelta(hours=RETENTION_H)
    LinkRollup.objects.filter(fabric_id=fabric_id, minute__lt=cutoff).delete()
    return stored
