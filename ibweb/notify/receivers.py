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

log = logging.getLogger("ibweb.notify")
#: Seconds between two periodic passes run from the frames (embedded default).
PUMP_S = 5.0
_last_pump = [0.0]
_pump_lock = threading.Lock()


@receiver(events_changed, dispatch_uid="ibweb.notify.dispatch")
def on_events_changed(sender, fabric_id: int, opened: list, closed: list, **kwargs) -> None:
    """Queue the messages of events that opened or closed, and have their channels sent."""
    queue.kick(dispatch(fabric_id, list(opened), list(closed)))


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
