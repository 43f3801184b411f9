"""Stored history: one-minute rollups of per-link utilization and rate."""

from __future__ import annotations

from django.db import models

from ibweb.fabrics.models import Fabric

__all__ = ["LinkRollup", "FABRIC_WIDE"]

#: ``LinkRollup.link`` of the fabric-wide row of a minute (every link together).
FABRIC_WIDE = -1


class LinkRollup(models.Model):
    """One directed link during one minute: mean and peak utilization, mean rate.

    ``link`` is the directed-link index (``0..2L-1``) of the fabric's engine, or
    :data:`FABRIC_WIDE` for the minute's fabric-wide row (mean utilization over
    all links, peak over all links, rate summed over all directed links), which
    also marks the minute as rolled up. Links idle for the whole minute have no
    row: their values are zero. ``samples`` is the number of ticks averaged.
    """

    fabric = models.ForeignKey(Fabric, on_delete=models.CASCADE, related_name="rollups")
    minute = models.DateTimeField(help_text="Start of the minute (UTC).")
    link = models.IntegerField(help_text="Directed link index; -1 for the fabric-wide row.")
    mean_util = models.FloatField()
    max_util = models.FloatField()
    mean_rate_gbps = models.FloatField()
    samples = models.PositiveIntegerField()

    class Meta:
        ordering = ["minute", "link"]
        constraints = [models.UniqueConstraint(fields=["fabric", "minute", "link"], name="live_rollup_unique")]
        indexes = [models.Index(fields=["fabric", "link", "minute"], name="live_rollup_series")]

    def __str__(self) -> str:
        return f"{self.fabric_id}:{self.link}@{self.minute:%Y-%m-%d %H:%M}"
