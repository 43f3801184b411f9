"""From stored events to queued deliveries: one message when events start, one when they clear.

:func:`dispatch` runs on :data:`ibweb.events.signals.events_changed` (the events recorder, after its write
commits): it is called when an event opens and when it closes, never per tick. Each enabled rule's matchers pick
the events for its channels; a channel gets only the events its view may see (the events' access scope), rendered
for that view (:mod:`.render`). The events of one call that share fabric, kind and switch (many ports of one
switch) or fabric and kind without a switch (one cause: a routing change, a job) make one message. A clear goes to
the channels the start went to. Events an active silence matches are recorded as ``silenced`` deliveries and never
sent (their clear too).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime

from django.db import transaction

from ibweb.events.models import Event

from .matching import EventFacts, facts_of, matches
from .models import Channel, Delivery, DeliveryEvent, Rule, Silence
from .render import Renderers, channel_view, notice_of
from .senders.base import Notice, notice_to_dict

__all__ = ["dispatch", "delivery_key", "group_of", "active_silence"]

#: Notices one message carries at most (a whole switch down is one message; beyond, more messages).
MAX_GROUP = 100


def delivery_key(channel_id: int, reason: str, notice_keys: Iterable[str], extra: str = "") -> str:
    """The idempotency key of a message: the same notices for the same channel and reason, the same key."""
    text = "|".join([str(channel_id), reason, extra, *sorted(notice_keys)])
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def group_of(event, facts: EventFacts) -> str:
    """What makes events one message: fabric, kind and switch (or, without a switch, fabric and kind)."""
    return f"{event.fabric_id}:{event.kind}:{facts.switch}"


def active_silence(silences: list[Silence], facts: EventFacts) -> Silence | None:
    """The first of ``silences`` (active now) that matches ``facts``."""
    return next((s for s in silences if matches(s, facts)), None)


def _facts(events: list[Event]) -> dict[int, EventFacts]:
    out = {}
    for e in events:
        cluster = e.fabric.cluster.slug if e.fabric.cluster_id else ""
        out[e.pk] = facts_of(e, e.fabric.slug, cluster, e.tenant.slug if e.tenant_id else "")
    return out


def _last_firing(channel_ids: set[int], event_ids: list[int]) -> dict[tuple[int, int], Delivery]:
    """``{(channel, event): the newest delivery about it}`` (to send a clear where its start went)."""
    out: dict[tuple[int, int], Delivery] = {}
    links = (DeliveryEvent.objects.filter(event_id__in=event_ids, delivery__channel_id__in=channel_ids)
             .select_related("delivery").order_by("delivery_id"))
    for link in links:
        out[(link.delivery.channel_id, link.event_id)] = link.delivery
    return out


def dispatch(fabric_id: int, opened: list[int], closed: list[int], now: datetime | None = None) -> list[int]:
    """Queue (or record as silenced) the messages of events ``opened`` and ``closed``; the channels to send now."""
    now = now or datetime.now(tz=UTC)
    rules = list(Rule.objects.filter(enabled=True).prefetch_related("channels"))
    if not rules or not (opened or closed):
        return []
    events = list(Event.objects.filter(pk__in=[*opened, *closed]).select_related("fabric", "fabric__cluster",
                                                                                "tenant"))
    closed_set = set(closed)
    status_of = {e.pk: ("resolved" if e.pk in closed_set and not e.active else "firing") for e in events
                 if e.pk not in closed_set or not e.active}
    events = [e for e in events if e.pk in status_of]
    facts = _facts(events)
    wanted: dict[int, set[int]] = defaultdict(set)  # channel -> events its rules match
    channels: dict[int, Channel] = {}
    for rule in rules:
        for ch in rule.channels.all():
            if not ch.enabled or (rule.tenant_id and ch.tenant_id != rule.tenant_id):
                continue
            for e in events:
                if matches(rule, facts[e.pk], rule.min_severity):
                    wanted[ch.pk].add(e.pk)
                    channels[ch.pk] = ch
    if not wanted:
        return []
    silences = list(Silence.objects.filter(starts_at__lte=now, ends_at__gt=now).order_by("pk"))
    before = _last_firing(set(wanted), [e.pk for e in events if status_of[e.pk] == "resolved"])
    by_pk = {e.pk: e for e in events}
    renderers = Renderers()
    kick: set[int] = set()
    with transaction.atomic():
        for ch_id, pks in sorted(wanted.items()):
            ch = channels[ch_id]
            view = channel_view(ch)
            seen = set(Event.objects.filter(pk__in=pks).restrict(view).values_list("pk", flat=True))
            groups: dict[tuple, list[tuple[Event, Silence | None]]] = defaultdict(list)
            for pk in sorted(seen):
                e = by_pk[pk]
                if e.kind == "notify_channel_failing" and (e.details or {}).get("channel") == ch_id:
                    continue  # a channel is not told that it fails
                status = status_of[pk]
                if status == "resolved":
                    start = before.get((ch_id, pk))
                    if start is None or start.status != "firing":
                        continue  # its start never went to this channel
                    silence = start.silence if start.state == Delivery.State.SILENCED else None
                else:
                    silence = active_silence(silences, facts[pk])
                groups[(status, group_of(e, facts[pk]), silence.pk if silence else 0)].append((e, silence))
            for (status, _group, _), members in sorted(groups.items(), key=lambda kv: kv[0]):
                for i in range(0, len(members), MAX_GROUP):
                    part = members[i:i + MAX_GROUP]
                    renderer = None
                    notices: list[Notice] = []
                    for e, _s in part:
                        renderer = renderers.of(view, e.fabric)
                        notices.append(notice_of(e, status, facts[e.pk], view, renderer, now))
                    silence = part[0][1]
                    reason = "clear" if status == "resolved" else "start"
                    # as the channel's view reads it: a name recorded without topology may be a hidden host
                    shown_group = f"{part[0][0].fabric_id}:{part[0][0].kind}:{notices[0].labels.get('switch', '')}"
                    key = delivery_key(ch_id, reason, [n.key for n in notices])
                    delivery, made = Delivery.objects.get_or_create(key=key, defaults=dict(
                        channel=ch, status=status, reason=reason, group=shown_group[:255], fabric_id=fabric_id,
                        notices=[notice_to_dict(n) for n in notices],
                        state=Delivery.State.SILENCED if silence else Delivery.State.QUEUED, silence=silence,
                        detail=f"silenced: {silence.reason[:200]}" if silence else ""))
                    if made:
                        DeliveryEvent.objects.bulk_create([DeliveryEvent(delivery=delivery, event_id=e.pk)
                                                           for e, _s in part])
                        if not silence:
                            kick.add(ch_id)
    return sorted(kick)
