"""Celery tasks of the events app: retention (beat runs it hourly; the recorder also prunes hourly)."""

from celery import shared_task

from .recorder import prune


@shared_task
def prune_events() -> int:
    """Delete cleared events past retention; returns how many."""
    return prune()
