"""Celery tasks of notifications: the events that opened and closed in one write of the events recorder
(:func:`dispatch_events`, sent by the engine's process), a channel's queue (:func:`deliver`), the periodic pass
(:func:`pump`, beat) and the daily digest (:func:`daily_digest`, beat's ``notify-digest`` entry in
``ibweb/celery.py``)."""

from celery import shared_task

from . import queue
from .dispatcher import dispatch_in_turn

__all__ = ["dispatch_events", "deliver", "pump", "daily_digest"]


@shared_task(bind=True, max_retries=60, ignore_result=True)  # nobody waits for it: sent without a result
def dispatch_events(self, fabric_id: int, opened: list[int], closed: list[int]) -> int:
    """Queue the messages of a fabric's events ``opened`` and ``closed`` (:func:`ibweb.notify.dispatcher.dispatch`,
    one at a time per fabric) and have their channels sent; how many channels. Tried again a second later while
    another worker dispatches the fabric's events for longer than it waits."""
    kick = dispatch_in_turn(fabric_id, opened, closed)
    if kick is None:
        raise self.retry(countdown=1.0)
    queue.kick(kick)
    return len(kick)


@shared_task
def deliver(channel_id: int) -> int:
    """Send a channel's due messages in order; how many were sent."""
    return queue.deliver_channel(channel_id)


@shared_task
def pump() -> dict:
    """Repeats, re-posts, failing channels, and each channel with a due message handed to :func:`deliver`."""
    return queue.pump()


@shared_task
def daily_digest() -> int:
    """The day's digests, once (:func:`ibweb.notify.digest.send_due`); how many were queued."""
    from .digest import send_due

    return len(send_due())
