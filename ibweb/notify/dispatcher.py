"""From stored events to queued deliveries: one message when events start, one when they clear.

:func:`dispatch` runs on :data:`ibweb.events.signals.events_changed` (the events recorder, after its write
commits): it is called when an event opens and when it closes, never per tick. Each enabled rule's matchers pick
the events for its channels; a channel gets only the events its view may see (the events' access scope), rendered
for that view (:mod:`.render`). The events of one call that share fabric, kind and switch (many ports of one
switch) or fabric and kind without a switch (one cause: a routing change, a job) make one message. A clear goes to
the channels the start went to. Events an active silence matches are recorded as ``silenced`` deliveries and never
sent (their clear too).

A call reads the events as they are when it runs, not as its arguments were sent: an event given as opened that has
closed since is not started (nor cleared, its start never sent), one given as closed that is open again is not
cleared, and an occurrence whose start a channel was already given is not started again. So the calls of a fabric
may run late, twice or out of order (Celery workers): :func:`dispatch_in_turn` runs them one at a time.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.core.cache import cache
from django.db import IntegrityError, connection, transaction

from ibweb.db.retry import retry_locked
from ibweb.events.models import Event
from ibweb.fabrics.models import Fabric
from ibweb.runtime.cache_lock import held
from ibweb.tenancy.models import Tenant

from . import clock
from .matching import EventFacts, facts_of, matches
from .models import Channel, Delivery, DeliveryEvent, Rule, Silence
from .render import Renderers, channel_view, notice_key, notice_of
from .senders.base import Notice, notice_to_dict

__all__ = ["dispatch", "dispatch_in_turn", "delivery_key", "group_of", "active_silence"]

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


def _events(ids: list[int]) -> list[Event]:
    """The events ``ids``, each with its fabric (and cluster) and tenant read once for all, not once an event: a
    fabric's scenario spec is never read here."""
    events = list(Event.objects.filter(pk__in=ids))
    fabrics = Fabric.objects.select_related("cluster").defer("spec").in_bulk({e.fabric_id for e in events})
    tenants = Tenant.objects.in_bulk({e.tenant_id for e in events if e.tenant_id})
    for e in events:
        e.fabric = fabrics[e.fabric_id]
        if e.tenant_id:
            e.tenant = tenants[e.tenant_id]
    return events


def _facts(events: list[Event]) -> dict[int, EventFacts]:
    out = {}
    for e in events:
        cluster = e.fabric.cluster.slug if e.fabric.cluster_id else ""
        out[e.pk] = facts_of(e, e.fabric.slug, cluster, e.tenant.slug if e.tenant_id else "")
    return out


@dataclass(frozen=True)
class _Sent:
    """What a channel was last sent about an event (its start, to send the clear where the start went)."""

    status: str
    state: str
    silence_id: int | None
    delivery_id: int = 0


def _last_firing(channel_ids: set[int], event_ids: list[int]) -> dict[tuple[int, int], _Sent]:
    """``{(channel, event): the newest delivery about it}`` (to send a clear where its start went, and a start only
    once); the deliveries' fields only, never their notices (a grouped start is linked to each of its events)."""
    rows = (DeliveryEvent.objects.filter(event_id__in=event_ids, delivery__channel_id__in=channel_ids)
            .order_by("delivery_id")
            .values_list("delivery__channel_id", "event_id", "delivery__status", "delivery__state",
                         "delivery__silence_id", "delivery_id"))
    return {(ch, ev): _Sent(status, state, sid, did) for ch, ev, status, state, sid, did in rows}


def _started(before: dict[tuple[int, int], _Sent], events: list[Event], status_of: dict[int, str]) -> set[tuple]:
    """``{(channel, event)}`` whose current occurrence's start was already made (the newest delivery about it
    carries that start's notice): only those whose newest delivery is firing have their notices read."""
    firing = {e.pk: notice_key(e, "firing") for e in events if status_of[e.pk] == "firing"}
    maybe = {k: s.delivery_id for k, s in before.items() if k[1] in firing and s.status == "firing"}
    if not maybe:
        return set()
    keys = {pk: {n.get("key") for n in notices if isinstance(n, dict)}
            for pk, notices in Delivery.objects.filter(pk__in=set(maybe.values())).values_list("pk", "notices")}
    return {k for k, did in maybe.items() if firing[k[1]] in keys.get(did, ())}


def _create(rows: list[tuple[Delivery, list[int]]]) -> list[Delivery]:
    """Insert the deliveries of ``rows`` not made yet (their keys) in their order, each with its events; the new."""
    if not rows:
        return []
    made = set(Delivery.objects.filter(key__in=[d.key for d, _ in rows]).values_list("key", flat=True))
    new = [(d, ids) for d, ids in rows if d.key not in made]
    try:
        with transaction.atomic():
            created = Delivery.objects.bulk_create([d for d, _ in new])
    except IntegrityError:  # another dispatch made one of them meanwhile: one by one
        created = []
        for d, _ in new:
            values = {f.attname: getattr(d, f.attname) for f in Delivery._meta.concrete_fields if not f.primary_key}
            row, fresh = Delivery.objects.get_or_create(key=d.key, defaults=values)
            if fresh:
                created.append(row)
    events_of = {d.key: ids for d, ids in new}
    links = [(d.pk, e) for d in created for e in events_of[d.key]]
    if links:  # one statement for the lot (a model instance each costs more than the rest of the dispatch)
        table = connection.ops.quote_name(DeliveryEvent._meta.db_table)
        with connection.cursor() as cursor:
            cursor.executemany(f"INSERT INTO {table} (delivery_id, event_id) VALUES (%s, %s)", links)  # noqa: S608
    return created


def _create_atomic(rows: list[tuple[Delivery, list[int]]]) -> list[Delivery]:
    with transaction.atomic():
        return _create(rows)


def dispatch(fabric_id: int, opened: list[int], closed: list[int], now: datetime | None = None) -> list[int]:
    """Queue (or record as silenced) the messages of events ``opened`` and ``closed``; the channels to send now."""
    now = now or clock.now()
    rules = list(Rule.objects.filter(enabled=True).exclude(sends="digest").prefetch_related("channels"))
    if not rules or not (opened or closed):
        return []
    events = _events(sorted({*opened, *closed}))
    # as they are now (this call may run late): an open event is started, a closed one cleared (if started)
    status_of = {e.pk: ("firing" if e.active else "resolved") for e in events}
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
    before = _last_firing(set(wanted), [e.pk for e in events])
    started = _started(before, events, status_of)
    silenced_before = Silence.objects.in_bulk({s.silence_id for s in before.values() if s.silence_id})
    by_pk = {e.pk: e for e in events}
    renderers = Renderers()
    rendered: dict[tuple[str, int, str], Notice] = {}  # one rendering per (view, event, status), for any channel
    rows: list[tuple[Delivery, list[int]]] = []
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
                silence = silenced_before.get(start.silence_id) if start.state == Delivery.State.SILENCED else None
            elif (ch_id, pk) in started:
                continue  # this occurrence's start was made already (a call run twice or late)
            else:
                silence = active_silence(silences, facts[pk])
            groups[(status, group_of(e, facts[pk]), silence.pk if silence else 0)].append((e, silence))
        for (status, _group, _), members in sorted(groups.items(), key=lambda kv: kv[0]):
            for i in range(0, len(members), MAX_GROUP):
                part = members[i:i + MAX_GROUP]
                notices: list[Notice] = []
                for e, _s in part:
                    memo = (view.key, e.pk, status)
                    if memo not in rendered:
                        rendered[memo] = notice_of(e, status, facts[e.pk], view, renderers.of(view, e.fabric), now)
                    notices.append(rendered[memo])
                silence = part[0][1]
                reason = "clear" if status == "resolved" else "start"
                # as the channel's view reads it: a name recorded without topology may be a hidden host
                shown_group = f"{part[0][0].fabric_id}:{part[0][0].kind}:{notices[0].labels.get('switch', '')}"
                rows.append((Delivery(
                    key=delivery_key(ch_id, reason, [n.key for n in notices]), channel_id=ch.pk, status=status,
                    reason=reason, group=shown_group[:255], fabric_id=fabric_id,
                    notices=[notice_to_dict(n) for n in notices],
                    state=Delivery.State.SILENCED if silence else Delivery.State.QUEUED,
                    silence_id=silence.pk if silence else None,
                    detail=f"silenced: {silence.reason[:200]}" if silence else ""), [e.pk for e, _s in part]))
    kick = {d.channel_id for d in retry_locked(_create_atomic, rows, what=f"deliveries of fabric {fabric_id}")
            if d.state == Delivery.State.QUEUED}
    return sorted(kick)


#: Seconds a dispatch of a fabric waits for the one running before it.
TURN_WAIT_S = 10.0
#: Seconds a fabric's turn is held at most (a dispatcher that died lets the next one in after this).
_TURN_S = 300


def dispatch_in_turn(fabric_id: int, opened: list[int], closed: list[int], wait_s: float | None = None,
                     now: datetime | None = None) -> list[int] | None:
    """:func:`dispatch`, one at a time per fabric (in any process sharing the cache: Celery workers); the channels to
    send now, or ``None`` when the fabric's turn did not come within ``wait_s`` (default :data:`TURN_WAIT_S`;
    nothing done: try again)."""
    with held(cache, f"notify:dispatch:{fabric_id}", _TURN_S, TURN_WAIT_S if wait_s is None else wait_s) as turn:
        return dispatch(fabric_id, opened, closed, now) if turn else None
