"""Notifications listen to the events store: each change is dispatched once committed; in the embedded default the
engine's frames also run the periodic pass (no Celery beat there), at most every :data:`PUMP_S` seconds."""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.dispatch import receiver

from ibweb.events.signals import events_changed
from ibweb.live.signals import frame_published

from . import queue
from .dispatcher import dispatch
from .models import Rule

log = logging.getLogger("ibweb.notify")
#: Seconds between two periodic passes run from the frames (embedded default).
PUMP_S = 5.0
_last_pump = [0.0]
_pump_lock = threading.Lock()


@receiver(events_changed, dispatch_uid="ibweb.notify.dispatch")
def on_events_changed(sender, fabric_id: int, opened: list, closed: list, **kwargs) -> None:
    """Have the messages of events that opened or closed queued and their channels sent, never here: this runs on
    the events recorder's thread of the engine's process (``tests/bench/bench_notify.py`` measured the dispatch
    there: it held the recording of 10,000 changes a minute back, and slowed the engine's tick).

    With Celery workers: one :func:`ibweb.notify.tasks.dispatch_events` task for the lot (the ids only), dispatched
    and sent by the workers. Embedded default: on the notify thread (one, so the dispatches run in the order the
    events were written).
    """
    if not (opened or closed) or not Rule.objects.filter(enabled=True).exclude(sends="digest").exists():
        return  # nothing would be sent: no task or thread asked to find that out
    if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        queue.in_background(_dispatch_and_kick, fabric_id, list(opened), list(closed))
    else:
        from .tasks import dispatch_events

        dispatch_events.delay(fabric_id, list(opened), list(closed))


def _dispatch_and_kick(fabric_id: int, opened: list, closed: list) -> None:
    queue.kick(dispatch(fabric_id, opened, closed))


@receiver(frame_published, dispatch_uid="ibweb.notify.pump")
def on_frame(sender, fabric_id: int, **kwargs) -> None:
    """Embedded default: run :func:`ibweb.notify.queue.pump` on the notify thread every :data:`PUMP_S`."""
    if not getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        return  # Celery beat runs it
    with _pump_lock:
        now = time.monotonic()
        if now - _last_pump[0] < PUMP_S:
            return
        _last_pump[0] = now
    queue.in_background(queue.pump)
