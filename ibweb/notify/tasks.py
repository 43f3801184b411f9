"""Celery tasks of notifications: a channel's queue (:func:`deliver`), the periodic pass (:func:`pump`, beat) and the
daily digest (:func:`daily_digest`, beat's ``notify-digest`` entry in ``ibweb/celery.py``)."""

from celery import shared_task

from . import queue

__all__ = ["deliver", "pump", "daily_digest"]


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
