"""Stored history: one-minute rollups of per-link utilization and rate, by link identity."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from ibweb.fabrics.models import Fabric

__all__ = ["LinkRollup", "FABRIC_WIDE", "NO_LINK"]

#: ``LinkRollup.link`` of the fabric-wide row of a minute (every link together).
FABRIC_WIDE = -1
#: ``LinkRollup.link`` of a link no topology of the minute has (down all minute).
NO_LINK = -2


class LinkRollup(models.Model):
    """One directed link during one minute: mean and peak utilization, mean rate.

    A link's row is found by its **identity** (``tx_guid``, ``tx_port``, ``rx_guid``, ``rx_port``:
    :mod:`ibweb.live.history.link_identity`), which survives cabling changes; GUIDs are stored as signed
    64-bit integers (two's complement of the unsigned GUID: :func:`~ibweb.live.history.link_identity.db_guid`).
    ``link`` is its directed-link index in the newest topology of the minute holding it (informative
    only: indices change meaning with the cabling; :data:`NO_LINK` when no topology of the minute has
    it), or :data:`FABRIC_WIDE` for the minute's fabric-wide
    row (mean utilization over all links, peak over all links, rate summed over all directed links),
    which also marks the minute as rolled up. Links idle and measured for the whole minute have no
    row: their values are zero over the fabric-wide row's coverage.

    What the minute knows (issue 35): ``coverage_s`` is the seconds of it with a measurement of the
    link (``samples`` ticks), ``down_s`` the seconds its cable was down (the ticks' topology lacked it);
    the means and peak are over the covered seconds only, None when there are none. The rest of the
    minute had no tick (engine or server stopped): unknown. A minute with no tick at all has no rows.

    Rows without an identity are the fabric-wide rows, ticks recorded without a topology, and rows
    stored before identities existed (migration 0002 leaves those; the retention removes them).
    """

    fabric = models.ForeignKey(Fabric, on_delete=models.CASCADE, related_name="rollups")
    minute = models.DateTimeField(help_text="Start of the minute (UTC).")
    link = models.IntegerField(help_text="Directed link index; -1 for the fabric-wide row.")
    tx_guid = models.BigIntegerField(null=True, blank=True, help_text="Transmitting node GUID (signed 64-bit).")
    tx_port = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Transmitting port number.")
    rx_guid = models.BigIntegerField(null=True, blank=True, help_text="Receiving node GUID (signed 64-bit).")
    rx_port = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Receiving port number.")
    mean_util = models.FloatField(null=True, help_text="Mean utilization over the covered seconds.")
    max_util = models.FloatField(null=True, help_text="Peak utilization over the covered seconds.")
    mean_rate_gbps = models.FloatField(null=True, help_text="Mean rate (Gb/s) over the covered seconds.")
    samples = models.PositiveIntegerField(help_text="Ticks with a measurement.")
    coverage_s = models.FloatField(default=0.0, help_text="Seconds of the minute with a measurement.")
    down_s = models.FloatField(default=0.0, help_text="Seconds of the minute the link was down.")

    class Meta:
        ordering = ["minute", "link"]
        constraints = [
            models.UniqueConstraint(fields=["fabric", "minute", "link"], condition=Q(tx_guid__isnull=True),
                                    name="live_rollup_unique"),
            models.UniqueConstraint(fields=["fabric", "minute", "tx_guid", "tx_port", "rx_guid", "rx_port"],
                                    condition=Q(tx_guid__isnull=False), name="live_rollup_identity_unique"),
        ]
        indexes = [models.Index(fields=["fabric", "link", "minute"], name="live_rollup_series"),
                   models.Index(fields=["fabric", "tx_guid", "tx_port", "minute"], name="live_rollup_port")]

    def __str__(self) -> str:
        if self.tx_guid is None:
            return f"{self.fabric_id}:{self.link}@{self.minute:%Y-%m-%d %H:%M}"
        return (f"{self.fabric_id}:{self.tx_guid & 2**64 - 1:016x}/{self.tx_port}->{self.rx_guid & 2**64 - 1:016x}/"
                f"{self.rx_port}@{self.minute:%Y-%m-%d %H:%M}")
