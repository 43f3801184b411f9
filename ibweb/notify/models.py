"""Where notifications go and what was sent: channels, rules, silences, deliveries and their attempts.

A :class:`Delivery` is one message (one notice, or several grouped: many ports of one switch) for one channel;
the queued rows are the queue (:mod:`ibweb.notify.queue`), sent per channel in their order, each attempt kept
(:class:`Attempt`). Events are the events app's rows: deliveries name them by primary key
(:class:`DeliveryEvent`), so a pruned event never deletes what was sent about it.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from ibweb.access.querysets import RestrictedQuerySet, Scope
from ibweb.http.json_input import JSONModelField

__all__ = ["Channel", "Rule", "Silence", "Delivery", "DeliveryEvent", "Attempt", "SEVERITIES", "RULE_SENDS"]

#: Severities, least first (the events app's, ranked).
SEVERITIES = ("info", "warning", "critical")
#: What a rule sends its channels: the events as they happen, the daily digest, or both.
RULE_SENDS = ("events", "digest", "both")


class Channel(models.Model):
    """A receiver of notifications of one kind; owned by the operators (no tenant) or by one tenant."""

    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, help_text="alertmanager, webhook, email or syslog (ibweb.notify.senders).")
    config = JSONModelField(kind=dict, default=dict, blank=True, help_text="Checked per kind (ibweb.notify.config).")
    secrets = JSONModelField(kind=dict, default=dict, blank=True,
                             help_text="The kind's secret fields (a password, an HMAC key): written, never shown.")
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, null=True, blank=True,
                               related_name="notify_channels",
                               help_text="Owner: this tenant (it receives what its users may see); none: operators.")
    enabled = models.BooleanField(default=True)
    rate_limit_per_min = models.PositiveIntegerField(default=60, help_text="Messages a minute at most; 0: no limit.")
    repeat_interval_s = models.PositiveIntegerField(default=14400,
                                                    help_text="Repeat a notice while its events are active and "
                                                              "unacknowledged; 0: never.")
    failing_after_s = models.PositiveIntegerField(default=600, help_text="Failing this long raises a condition.")
    failing_since = models.DateTimeField(null=True, blank=True, help_text="The first failed attempt of a streak.")
    refreshed_at = models.DateTimeField(null=True, blank=True, help_text="Last re-post of the active alerts.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope(tenant=("tenant_id",))

    class Meta:
        ordering = ["name", "pk"]
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="notify_channel_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class Matchers(models.Model):
    """What an event must be to match (a rule or a silence): every list empty matches anything."""

    kinds = JSONModelField(kind=list, default=list, blank=True, help_text='Event kinds, e.g. ["link_down"].')
    fabrics = JSONModelField(kind=list, default=list, blank=True, help_text="Fabric slugs.")
    clusters = JSONModelField(kind=list, default=list, blank=True, help_text="Cluster slugs.")
    tenants = JSONModelField(kind=list, default=list, blank=True, help_text="Tenant slugs of the event.")
    switches = JSONModelField(kind=list, default=list, blank=True, help_text='Switch name globs ("leaf0*").')
    ports = JSONModelField(kind=list, default=list, blank=True, help_text='Port globs ("leaf01 port 1*").')
    hosts = JSONModelField(kind=list, default=list, blank=True, help_text='Host name globs ("gpu00*").')

    class Meta:
        abstract = True


class Rule(Matchers):
    """Which events go to which channels."""

    name = models.CharField(max_length=100)
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, null=True, blank=True,
                               related_name="notify_rules", help_text="Owner (its channels are this tenant's).")
    enabled = models.BooleanField(default=True)
    min_severity = models.CharField(max_length=8, default="warning", choices=[(s, s) for s in SEVERITIES])
    channels = models.ManyToManyField(Channel, related_name="rules")
    sends = models.CharField(max_length=8, default="events", choices=[(s, s) for s in RULE_SENDS],
                             help_text="events: each event as it starts and clears; digest: the daily digest of "
                                       "what changed (ibweb.notify.digest); both.")

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope(tenant=("tenant_id",))

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name


class Silence(Matchers):
    """No notification of matching events from ``starts_at`` to ``ends_at`` (a maintenance window when it starts
    later); they are still recorded, as silenced deliveries."""

    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                               related_name="+")
    author_name = models.CharField(max_length=150, blank=True)
    reason = models.TextField(max_length=2000)
    created_at = models.DateTimeField(auto_now_add=True)
    pushed = JSONModelField(kind=dict, default=dict, blank=True,
                            help_text='{"<channel id>": Alertmanager silence ID, or "error: ..."} (ibweb.notify.'
                                      "am_silences).")

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope()  # names any host or switch: ALL only

    class Meta:
        ordering = ["-starts_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.starts_at:%Y-%m-%d %H:%M} - {self.ends_at:%Y-%m-%d %H:%M}: {self.reason[:60]}"


class Delivery(models.Model):
    """One message for one channel: queued until sent (or refused for good); silenced ones are only recorded."""

    class State(models.TextChoices):
        QUEUED = "queued"
        SENT = "sent"
        FAILED = "failed"  # refused for good by the receiver (a bad configuration)
        SILENCED = "silenced"  # matched a silence: recorded, never sent

    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="deliveries")
    key = models.CharField(max_length=64, unique=True, help_text="Idempotency key, sent with the message.")
    state = models.CharField(max_length=8, choices=State.choices, default=State.QUEUED, db_index=True)
    status = models.CharField(max_length=8, help_text="firing or resolved")
    reason = models.CharField(max_length=8, help_text="start, clear, repeat, test or digest")
    group = models.CharField(max_length=255, help_text="What its notices have in common (fabric, kind, switch).")
    fabric = models.ForeignKey("fabrics.Fabric", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    notices = JSONModelField(kind=list, default=list, help_text="The notices as rendered for the channel's view.")
    silence = models.ForeignKey(Silence, on_delete=models.SET_NULL, null=True, blank=True, related_name="deliveries")
    created_at = models.DateTimeField(auto_now_add=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    sent_at = models.DateTimeField(null=True, blank=True)
    detail = models.CharField(max_length=500, blank=True, help_text="The last attempt's result.")

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope(tenant=("channel__tenant_id",))

    class Meta:
        ordering = ["-pk"]
        indexes = [models.Index(fields=["channel", "state", "id"], name="notify_delivery_queue")]

    def __str__(self) -> str:
        return f"{self.channel_id}/{self.pk} {self.status} {self.state}"


class DeliveryEvent(models.Model):
    """An event a delivery is about (the event's primary key: events are pruned, deliveries kept)."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="event_links")
    event_id = models.BigIntegerField(db_index=True)

    def __str__(self) -> str:
        return f"{self.delivery_id} -> event {self.event_id}"


class Attempt(models.Model):
    """One try of sending a delivery (``refresh``: a re-post of an active alert, as Alertmanager expects)."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_rows")
    at = models.DateTimeField()
    ok = models.BooleanField()
    detail = models.CharField(max_length=500, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    refresh = models.BooleanField(default=False)

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.delivery_id} at {self.at:%Y-%m-%d %H:%M:%S}: {'ok' if self.ok else self.detail[:60]}"
