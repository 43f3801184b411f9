"""Celery tasks of the live app: one-minute rollups of the history ring, and their retention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from celery import shared_task
from django.conf import settings
from django.db import transaction

from . import history
from .models import FABRIC_WIDE, LinkRollup

__all__ = ["rollup_history", "rollup_minute", "RETENTION_H"]

#: Hours of rollups kept (older rows are deleted by every rollup run).
RETENTION_H = float(getattr(settings, "IBWEB_ROLLUP_RETENTION_H", 24))


def rollup_minute(fabric_id: int, minute: int, rate: np.ndarray, util: np.ndarray) -> list[LinkRollup]:
    """The rollup rows of one minute from its ticks ``rate``, ``util`` float ``(T, 2L)``, T >= 1.

    ``minute`` counts minutes since the epoch. Links with no traffic all
    minute get no row; the fabric-wide row is always there.
    """
    when = datetime.fromtimestamp(minute * 60, tz=UTC)
    mean_util = util.mean(axis=0)
    max_util = util.max(axis=0)
    mean_rate = rate.mean(axis=0)
    busy = np.flatnonzero((max_util > 0) | (mean_rate > 0))
    samples = int(rate.shape[0])
    rows = [LinkRollup(fabric_id=fabric_id, minute=when, link=FABRIC_WIDE, mean_util=float(mean_util.mean()),
                       max_util=float(max_util.max(initial=0.0)), mean_rate_gbps=float(rate.sum(axis=1).mean()),
                       samples=samples)]
    rows += [LinkRollup(fabric_id=fabric_id, minute=when, link=int(d), mean_util=float(a), max_util=float(m),
                        mean_rate_gbps=float(r), samples=samples)
             for d, a, m, r in zip(busy, mean_util[busy], max_util[busy], mean_rate[busy], strict=True)]
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
            part = history.ticks(fabric_id, m * 60.0, (m + 1) * 60.0)
            if not len(part.t):
                continue
            with transaction.atomic():
                LinkRollup.objects.bulk_create(rollup_minute(fabric_id, m, part.rate, part.util), batch_size=2000,
                                               ignore_conflicts=True)
            stored += 1
    cutoff = datetime.now(tz=UTC) - timedelta(hours=RETENTION_H)
    LinkRollup.objects.filter(fabric_id=fabric_id, minute__lt=cutoff).delete()
    return stored

