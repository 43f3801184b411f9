"""Celery tasks of notifications: a channel's queue (:func:`deliver`), and the periodic pass (:func:`pump`, beat)."""

from celery import shared_task

from . import queue

__all__ = ["deliver", "pump"]


@shared_task
def deliver(channel_id: int) -> int:
    """Send a channel's due messages in order; how many were sent."""
    return queue.deliver_channel(channel_id)


@shared_task
def pump() -> dict:
    """Repeats, re-posts, failing channels, and each channel with a due message handed to :func:`deliver`."""
    return queue.pump()
