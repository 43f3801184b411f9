"""A channel failing longer than its ``failing_after_s`` is itself a condition: an event ``notify_channel_failing``.

Stored as an :class:`~ibweb.events.models.Event` of the fabric its oldest waiting message is about (any fabric when
none), owned by the channel's tenant (its users and ``ALL`` see it), and told to the other channels through
:data:`ibweb.events.signals.events_changed`. Closed when a send succeeds again. The events recorder owns the
engine's alerts, not this one: a runner's first tick (or its periodic check) may close it, and the next pass of
:func:`check_failing` opens it again while the channel still fails.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction

from ibweb.events.models import Event
from ibweb.events.signals import events_changed
from ibweb.fabrics.models import Fabric

from . import clock
from .models import Channel, Delivery

__all__ = ["KIND", "check_failing", "clear_failing", "condition_key"]

KIND = "notify_channel_failing"


def condition_key(channel: Channel) -> str:
    """The event key of a channel's failing condition."""
    return f"{KIND}|channel={channel.pk}"


def _announce(fabric_id: int, opened: list[int], closed: list[int]) -> None:
    transaction.on_commit(lambda: events_changed.send_robust(Channel, fabric_id=fabric_id, opened=opened,
                                                             closed=closed))


def check_failing(now: datetime | None = None) -> list[int]:
    """Open the condition of every channel failing for longer than its limit; the events opened."""
    now = now or clock.now()
    opened = []
    for ch in Channel.objects.filter(enabled=True, failing_since__isnull=False):
        if now - ch.failing_since < timedelta(seconds=ch.failing_after_s):
            continue
        key = condition_key(ch)
        if Event.objects.filter(key=key, active=True).exists():
            continue
        waiting = ch.deliveries.filter(state=Delivery.State.QUEUED, fabric__isnull=False).order_by("pk").first()
        fabric_id = waiting.fabric_id if waiting else Fabric.objects.order_by("pk").values_list("pk", flat=True).first()
        if fabric_id is None:
            continue
        minutes = int((now - ch.failing_since).total_seconds() // 60)
        with transaction.atomic():
            event = Event.objects.create(
                fabric_id=fabric_id, key=key, kind=KIND, severity="warning", object_type="fabric", object_id="",
                tenant_id=ch.tenant_id, message=f"notification channel {ch.name} ({ch.kind}) failing for "
                                                f"{minutes} min (its deliveries show each attempt)"[:1000],
                details={"channel": ch.pk, "since": ch.failing_since.isoformat()}, resolved=True,
                first_seen=now, last_seen=now, raised_at=now)
            _announce(fabric_id, [event.pk], [])
        opened.append(event.pk)
    return opened


def clear_failing(channel: Channel, now: datetime | None = None) -> None:
    """Close a channel's failing condition (a send went through)."""
    now = now or clock.now()
    for event in Event.objects.filter(key=condition_key(channel), active=True):
        with transaction.atomic():
            event.active, event.cleared_at, event.last_seen = False, now, now
            event.save(update_fields=["active", "cleared_at", "last_seen"])
            _announce(event.fabric_id, [], [event.pk])
