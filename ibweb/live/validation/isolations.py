"""Isolated ports, kept in the database (issue 38): one :class:`PortIsolation` per time a port was seen
administratively disabled (physical state ``Disabled``: an operator's ``ibportstate <lid> <port> disable`` or an
isolation plugin), open until the port is seen enabled again (``enabled_at``), so an isolation outlives the device
readings' day in the cache and a restart. Written by :func:`ibweb.runtime.device_readings.record_isolations` (the
collector's ``iblinkinfo`` on its validation interval, hosts' ``ibstat``/``ibv_devinfo`` pushes; by model name: the
runtime imports no app), read by the validation report: every row is the isolation advice's history (a port isolated
once and failing again is advised for replacement), the open ones are listed with the report. ibweb runs no
``ibportstate`` itself: its isolation advice is never executed, so there is no isolation of its own to record.

GUIDs are stored as signed 64-bit integers (:mod:`ibweb.db.guids`).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from ibweb.db.guids import unsigned

__all__ = ["PortIsolation", "history", "open_isolations", "MAX_ROWS"]

#: Rows read at most per fabric (the newest): the advice's history and the listed ports.
MAX_ROWS = 10_000


class PortIsolation(models.Model):
    """One isolation of one port: from when it was first seen disabled to when it was seen enabled again (open
    while ``enabled_at`` is None)."""

    fabric = models.ForeignKey("fabrics.Fabric", on_delete=models.CASCADE, related_name="port_isolations")
    guid = models.BigIntegerField(help_text="Node GUID of the port (signed 64-bit).")
    port = models.PositiveSmallIntegerField(help_text="Port number.")
    node = models.CharField(max_length=200, blank=True, help_text="The node's name as the reading named it.")
    isolated_at = models.DateTimeField(help_text="First seen disabled.")
    last_seen_at = models.DateTimeField(help_text="Last seen disabled.")
    enabled_at = models.DateTimeField(null=True, blank=True, help_text="Seen enabled again (None: still isolated).")
    source = models.CharField(max_length=300, blank=True, help_text="What showed it disabled (file:line or command).")

    class Meta:
        app_label = "live"
        ordering = ["isolated_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["fabric", "guid", "port"], condition=Q(enabled_at__isnull=True),
                                               name="live_isolation_open_unique")]
        indexes = [models.Index(fields=["fabric", "guid", "port"], name="live_isolation_port")]

    def __str__(self) -> str:
        state = "isolated" if self.enabled_at is None else f"enabled {self.enabled_at:%Y-%m-%d %H:%M}"
        return f"{self.fabric_id}:{unsigned(self.guid):016x}/{self.port} {state}"


def history(fabric_id: int) -> list[dict]:
    """Every isolation of the fabric (the newest :data:`MAX_ROWS`) as the advice takes its history:
    ``[{"guid", "port", "t"}]`` (``t``: when it was first seen disabled)."""
    rows = (PortIsolation.objects.filter(fabric_id=fabric_id).order_by("-isolated_at", "-pk")
            .values_list("guid", "port", "isolated_at")[:MAX_ROWS])
    return [{"guid": unsigned(g), "port": p, "t": at.timestamp()} for g, p, at in rows]


def open_isolations(fabric_id: int) -> list[dict]:
    """The fabric's ports isolated now (not seen enabled since), the longest isolated first: ``[{"node", "guid",
    "port", "isolated_at", "last_seen_at", "source"}]`` (times in epoch seconds, GUIDs unsigned)."""
    rows = (PortIsolation.objects.filter(fabric_id=fabric_id, enabled_at__isnull=True).order_by("isolated_at", "pk")
            .values_list("node", "guid", "port", "isolated_at", "last_seen_at", "source")[:MAX_ROWS])
    return [{"node": n, "guid": unsigned(g), "port": p, "isolated_at": at.timestamp(),
             "last_seen_at": seen.timestamp(), "source": src} for n, g, p, at, seen, src in rows]
