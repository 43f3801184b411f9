"""Events and alerts of a fabric, kept over time: one row per occurrence, not per tick.

An alert the engine raises tick after tick is one :class:`Event`, open (``active``) from
the tick that raised it until the tick that no longer does (``cleared_at``); ``count``
adds up the ticks it was raised, from wall time (``raised_at``, the tick's clock, never a sequence
number: those start again with a new process); raised again within :data:`ibweb.events.recorder.REOPEN_S`
it reopens, later it is a new event, numbered (``occurrence``) so a recurring condition says
how often it came back. Operators acknowledge events and comment on them
(:class:`EventComment`).
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q

from ibweb.access.querysets import RestrictedQuerySet, Scope
from ibweb.http.json_input import JSONModelField

from .choices import SEVERITY_RANK, ObjectType, Severity

__all__ = ["Event", "EventComment"]


class Event(models.Model):
    """One occurrence of an alert or topology event of a fabric."""

    fabric = models.ForeignKey("fabrics.Fabric", on_delete=models.CASCADE, related_name="events")
    key = models.CharField(max_length=255, help_text="What makes two alerts the same event (kind and subject).")
    kind = models.CharField(max_length=32, db_index=True, help_text="e.g. errors, isolation, link_down, routing.")
    severity = models.CharField(max_length=8, choices=Severity.choices, default=Severity.WARNING)
    rank = models.PositiveSmallIntegerField(default=1, help_text="0 info, 1 warning, 2 critical (for sorting).")
    object_type = models.CharField(max_length=8, choices=ObjectType.choices, default=ObjectType.FABRIC)
    object_id = models.CharField(max_length=200, blank=True, help_text="Link index, node or port name, or job id.")
    link = models.IntegerField(null=True, blank=True, help_text="Directed link index the map focuses on.")
    node = models.CharField(max_length=100, blank=True, help_text="Node the map focuses on.")
    job = models.CharField(max_length=100, blank=True)
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.SET_NULL, null=True, blank=True,
                               related_name="events", help_text="The tenant whose job it concerns; none: fabric-wide.")
    hosts = JSONModelField(kind=list, default=list, blank=True,
                             help_text='[[node index, name, "0x<node GUID>"], ...]: the hosts the alert names '
                                       "(hidden from users who may not see them; ibweb.access.alert_objects).")
    parts = JSONModelField(kind=dict, default=dict, blank=True,
                           help_text='{"text": template, "slots": [object or switch name per {k}]}: the message as '
                                     "parts, rendered per view; empty: a free text, or stored before parts were.")
    jobs = JSONModelField(kind=list, default=list, blank=True,
                            help_text='[[job id, tenant], ...]: the jobs the alert lists (each view is shown those '
                                      "of its tenants, after the message).")
    resolved = models.BooleanField(default=False,
                                   help_text="Recorded on the fabric's topology: hosts lists every host the message "
                                             "names. If not, views below ALL read it with every host they may not "
                                             "see relabelled, or not at all.")
    message = models.TextField()
    details = JSONModelField(kind=dict, default=dict, blank=True, help_text="The alert as the engine raised it.")
    first_seen = models.DateTimeField(db_index=True)
    last_seen = models.DateTimeField(db_index=True)
    count = models.PositiveIntegerField(default=0, help_text="Ticks it was raised, up to its last closing.")
    occurrence = models.PositiveIntegerField(default=1, help_text="How many times this alert (same key) has "
                                                                  "occurred on the fabric, this one included.")
    raised_at = models.DateTimeField(null=True, blank=True, help_text="Wall time of the tick that (re)opened it, "
                                                                      "while open.")
    active = models.BooleanField(default=True, db_index=True, help_text="Raised by the newest tick.")
    cleared_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                        related_name="+")
    acknowledged_at = models.DateTimeField(null=True, blank=True)

    objects = RestrictedQuerySet.as_manager()
    #: a tenant's events are its users'; fabric-wide ones (no tenant, no job) every view's, with hosts redacted
    access_scope = Scope(tenant=("tenant_id",), shared=Q(tenant__isnull=True, job=""))

    class Meta:
        ordering = ["-last_seen", "-pk"]
        indexes = [models.Index(fields=["fabric", "-last_seen"], name="events_fabric_recent"),
                   models.Index(fields=["fabric", "key", "active"], name="events_fabric_key")]

    def __str__(self) -> str:
        return f"{self.get_severity_display()} {self.kind}: {self.message[:80]}"

    def save(self, *args, **kwargs) -> None:
        self.rank = SEVERITY_RANK.get(self.severity, 1)
        super().save(*args, **kwargs)

    @property
    def acknowledged(self) -> bool:
        return self.acknowledged_at is not None

    def ticks(self, now: datetime, tick_s: float) -> int:
        """Ticks it has been raised: the closed stretches counted, plus, while open, the time since it opened."""
        if not self.active:
            return self.count
        opened = self.raised_at or self.last_seen
        return self.count + max(1, int(max(0.0, (now - opened).total_seconds()) / max(tick_s, 1e-3)) + 1)

    def duration_s(self, now: datetime) -> float:
        """Seconds from its first tick to the tick that cleared it (while open: to ``now``); never negative."""
        end = self.cleared_at if not self.active and self.cleared_at is not None else now
        return max(0.0, (end - self.first_seen).total_seconds())


class EventComment(models.Model):
    """A note an operator left on an event."""

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="comments")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                             related_name="+")
    username = models.CharField(max_length=150, blank=True)
    time = models.DateTimeField(auto_now_add=True)
    text = models.TextField(max_length=4000)

    class Meta:
        ordering = ["time", "pk"]

    def __str__(self) -> str:
        return f"{self.username or '-'}: {self.text[:60]}"
