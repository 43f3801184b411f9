"""The delivery queue: the queued :class:`~ibweb.notify.models.Delivery` rows, sent per channel in their order.

:func:`deliver_channel` sends a channel's due messages oldest first; a failure that may pass (the receiver down, a
5xx, a timeout) keeps the message queued and stops the channel's queue (nothing overtakes it) until its next
attempt, backing off exponentially (:func:`backoff`: 5 s doubling to 10 min); a refusal for good (a 4xx: a bad
configuration) marks it failed and the queue goes on. Every attempt is kept (:class:`~ibweb.notify.models.Attempt`).
A channel's ``rate_limit_per_min`` holds messages beyond it for the next minute. Since the rows are the queue, a
restart loses nothing: :func:`pump` (Celery beat, or the embedded engine's frames) finds what is due. Each row is
claimed before it is sent (:func:`_claim`: a conditional UPDATE, its next attempt set to a lease of ``_LOCK_S``) and
written back only with what the attempt changed, while the claim is still this runner's: a runner outliving the
channel's lock never makes another send a row twice, nor overwrites what another wrote meanwhile.

With Celery workers (``REDIS_URL``) :func:`kick` sends the channels' task to them; in the embedded default
(Celery eager) it runs them on one background thread of this process, never on the engine's or a request's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Max, Q

from ibweb.db.background import BackgroundLane
from ibweb.events.models import Event
from ibweb.runtime.cache_lock import held

from . import clock
from .conditions import check_failing, clear_failing
from .models import Attempt, Channel, Delivery, DeliveryEvent
from .senders import UnknownKind, sender
from .senders.base import SendResult, notice_from_dict

__all__ = ["deliver_channel", "send_now", "backoff", "kick", "pump", "wait_idle", "in_background", "BACKOFF_BASE_S",
           "BACKOFF_MAX_S"]

log = logging.getLogger("ibweb.notify")
BACKOFF_BASE_S = 5.0
BACKOFF_MAX_S = 600.0
_LOCK_S = 300
_BATCH = 50


def backoff(attempts: int) -> float:
    """Seconds before the next attempt after ``attempts`` failed ones: 5, 10, 20, ... up to 600."""
    return min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** max(0, attempts - 1))


def send_now(channel: Channel, notices, key: str) -> tuple[SendResult, int]:
    start = time.monotonic()
    try:
        result = sender(channel.kind).send(notices, {**channel.config, **channel.secrets, "delivery_key": key})
    except UnknownKind as exc:
        result = SendResult(False, str(exc), retry=True)
    except Exception as exc:  # a sender's bug must not stop the queue: kept as the attempt's result
        log.exception("channel %s: sender %s raised", channel.pk, channel.kind)
        result = SendResult(False, f"sender error: {exc!r}"[:480], retry=True)
    return result, int((time.monotonic() - start) * 1000)


def deliver_channel(channel_id: int, now: datetime | None = None) -> int:
    """Send the due queued messages of a channel, in order; returns how many were sent."""
    with held(cache, f"notify:channel:{channel_id}", _LOCK_S) as mine:
        return _deliver(channel_id, now) if mine else 0  # not mine: another worker sends this channel's queue now


def _claim(d: Delivery, lease_until: datetime) -> bool:
    """Take ``d`` for sending: one conditional UPDATE of the row as it was read (still queued, the same attempts and
    next attempt) setting its next attempt to ``lease_until``, so that no other runner sends it meanwhile (a runner
    outliving the channel's lock, a worker's retry). Whether this runner got it."""
    return Delivery.objects.filter(pk=d.pk, state=Delivery.State.QUEUED, attempts=d.attempts,
                                   next_attempt_at=d.next_attempt_at).update(next_attempt_at=lease_until) == 1


def _deliver(channel_id: int, now: datetime | None) -> int:
    channel = Channel.objects.filter(pk=channel_id, enabled=True).first()
    if channel is None:
        return 0
    sent = 0
    batch: list[Delivery] = []
    while True:
        at = now or clock.now()
        if not batch:  # the next messages in order, read a batch at a time (what is queued meanwhile: next batch)
            batch = list(channel.deliveries.filter(state=Delivery.State.QUEUED).order_by("pk")[:_BATCH])
            batch.reverse()  # popped oldest first
        if not batch:
            return sent
        d = batch.pop()
        if d.next_attempt_at is not None and d.next_attempt_at > at:
            return sent
        if channel.rate_limit_per_min:
            window = at - timedelta(seconds=60)
            recent = list(Attempt.objects.filter(delivery__channel=channel, ok=True, refresh=False, at__gt=window)
                          .order_by("at").values_list("at", flat=True))
            if len(recent) >= channel.rate_limit_per_min:
                Delivery.objects.filter(pk=d.pk, state=Delivery.State.QUEUED, next_attempt_at=d.next_attempt_at
                                        ).update(next_attempt_at=recent[0] + timedelta(seconds=60))
                return sent
        lease = at + timedelta(seconds=_LOCK_S)
        if not _claim(d, lease):  # sent or taken by another runner since read: read the queue again
            batch = []
            continue
        result, ms = send_now(channel, [notice_from_dict(n) for n in d.notices], d.key)
        attempts = d.attempts + 1
        changed: dict = {"attempts": attempts, "detail": result.detail[:500]}
        if result.ok:
            changed.update(state=Delivery.State.SENT, sent_at=at, next_attempt_at=None)
        elif not result.retry:
            changed.update(state=Delivery.State.FAILED, next_attempt_at=None)
        else:
            changed.update(next_attempt_at=at + timedelta(seconds=backoff(attempts)))
        with transaction.atomic():
            Attempt.objects.create(delivery=d, at=at, ok=result.ok, detail=result.detail[:500], duration_ms=ms)
            # only what this attempt changed, and only while the claim is still this runner's
            mine = Delivery.objects.filter(pk=d.pk, state=Delivery.State.QUEUED, attempts=d.attempts,
                                           next_attempt_at=lease).update(**changed)
            if not mine:
                log.warning("channel %s: delivery %s was taken by another runner while sent (the lease of %d s "
                            "passed): its row is left as that runner wrote it", channel.pk, d.pk, _LOCK_S)
            for name, value in changed.items():
                setattr(d, name, value)
            if result.ok:
                if channel.failing_since is not None:
                    channel.failing_since = None
                    channel.save(update_fields=["failing_since"])
                    clear_failing(channel, at)
            elif channel.failing_since is None:
                channel.failing_since = at
                channel.save(update_fields=["failing_since"])
        if result.ok:
            sent += 1
        elif result.retry:
            log.warning("channel %s (%s): delivery %s failed, attempt %d, next in %.0f s: %s", channel.pk,
                        channel.kind, d.pk, d.attempts, backoff(d.attempts), result.detail)
            return sent
        else:
            log.error("channel %s (%s): delivery %s refused: %s", channel.pk, channel.kind, d.pk, result.detail)


# ------------------------------------------------------------------ repeats and re-posts
def _active_groups(channel: Channel) -> dict[str, Delivery]:
    """``{group: its newest firing delivery}`` of the channel's groups whose events are all still open."""
    # the newest of each group, read by the database (one row a group, never the channel's whole history)
    newest = (channel.deliveries.filter(state__in=[Delivery.State.SENT, Delivery.State.QUEUED]).values("group")
              .annotate(newest=Max("pk")).values_list("newest", flat=True))
    firing = {d.group: d for d in Delivery.objects.filter(pk__in=list(newest), status="firing")
              .exclude(reason__in=["test", "digest"]).order_by("pk")}
    if not firing:
        return {}
    links = DeliveryEvent.objects.filter(delivery__in=list(firing.values())).values_list("delivery_id", "event_id")
    events_of: dict[int, list[int]] = {}
    for did, eid in links:
        events_of.setdefault(did, []).append(eid)
    open_ids = set(Event.objects.filter(pk__in=[e for ids in events_of.values() for e in ids], active=True)
                   .values_list("pk", flat=True))
    return {g: d for g, d in firing.items() if events_of.get(d.pk) and set(events_of[d.pk]) <= open_ids}


def _repeat(channel: Channel, now: datetime) -> int:
    """Queue again the firing messages of a channel whose events are open and unacknowledged after its
    ``repeat_interval_s``."""
    if not channel.repeat_interval_s or getattr(sender(channel.kind), "resend_s", None):
        return 0
    made = 0
    for group, d in _active_groups(channel).items():
        if d.state != Delivery.State.SENT or now - (d.sent_at or d.created_at) < timedelta(
                seconds=channel.repeat_interval_s):
            continue
        ids = list(d.event_links.values_list("event_id", flat=True))
        if Event.objects.filter(pk__in=ids, acknowledged_at__isnull=False).exists():
            continue
        n = channel.deliveries.filter(group=group, reason="repeat").count() + 1
        from .dispatcher import delivery_key

        key = delivery_key(channel.pk, "repeat", [x["key"] for x in d.notices], extra=f"{d.pk}:{n}")
        repeat, created = Delivery.objects.get_or_create(key=key, defaults=dict(
            channel=channel, status="firing", reason="repeat", group=group, fabric_id=d.fabric_id, notices=d.notices))
        if created:
            DeliveryEvent.objects.bulk_create([DeliveryEvent(delivery=repeat, event_id=i) for i in ids])
            made += 1
    return made


def _refresh(channel: Channel, now: datetime) -> int:
    """Re-post the firing notices of a channel whose receiver expires alerts not re-sent (Alertmanager)."""
    chosen = sender(channel.kind)
    resend = float(channel.config.get("resend_s") or getattr(chosen, "resend_s", 0) or 0)
    if not resend or (channel.refreshed_at and now - channel.refreshed_at < timedelta(seconds=resend)):
        return 0
    if channel.deliveries.filter(state=Delivery.State.QUEUED).exists():
        return 0  # what waits is sent first, in order: a re-post never overtakes a clear
    active = [d for d in _active_groups(channel).values() if d.state == Delivery.State.SENT]
    channel.refreshed_at = now
    channel.save(update_fields=["refreshed_at"])
    if not active:
        return 0
    notices = [notice_from_dict(n) for d in active for n in d.notices]
    result, ms = send_now(channel, notices, active[-1].key)
    Attempt.objects.bulk_create([Attempt(delivery=d, at=now, ok=result.ok, detail=result.detail[:500],
                                         duration_ms=ms, refresh=True) for d in active])
    return len(notices)


# ------------------------------------------------------------------ running the queue
#: The embedded default's notify thread (Celery eager): dispatch, queues and the pump, one at a time.
_LANE = BackgroundLane("ibweb-notify", log)


def in_background(fn, *args) -> None:
    """Run ``fn(*args)`` on this process's notify thread (after what it already has to do)."""
    _LANE.submit(fn, *args)


def kick(channel_ids: Iterable[int]) -> None:
    """Have the channels' queues sent: by the Celery workers, or (embedded) on this process's notify thread."""
    ids = sorted(set(channel_ids))
    if not ids:
        return
    if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        for cid in ids:
            in_background(deliver_channel, cid)
        return
    from .tasks import deliver

    for cid in ids:
        deliver.delay(cid)


def wait_idle(timeout_s: float = 30.0) -> bool:
    """Wait until the embedded notify thread has nothing left to run (tests, shutdown); whether it got there."""
    return _LANE.wait_idle(timeout_s)


def pump(now: datetime | None = None, run=None) -> dict[str, int]:
    """One pass: repeats and re-posts made, failing channels' conditions raised, the day's digests queued once
    (:mod:`.digest`), each channel with a due message sent (``run``: how a channel's queue is run, default
    :func:`kick`). Returns what it did."""
    now = now or clock.now()
    out = {"repeats": 0, "refreshed": 0, "conditions": 0, "digests": 0, "channels": 0}
    for channel in Channel.objects.filter(enabled=True):
        try:
            out["repeats"] += _repeat(channel, now)
            out["refreshed"] += _refresh(channel, now)
        except UnknownKind as exc:
            log.warning("channel %s: %s", channel.pk, exc)
    out["conditions"] = len(check_failing(now))
    from .digest import send_due

    try:
        out["digests"] = len(send_due(now))
    except ValueError as exc:  # IBWEB_NOTIFY_DIGEST_HOUR unreadable: said, the rest of the pass goes on
        log.error("notifications: daily digest: %s", exc)
    due = set(Delivery.objects.filter(state=Delivery.State.QUEUED, channel__enabled=True)
              .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
              .values_list("channel_id", flat=True).distinct())
    out["channels"] = len(due)
    (run or kick)(due)
    return out
