"""The periodic validation of every fabric, as a Celery task (beat: every minute): :func:`validate_due` computes
again each fabric's report that is due (:func:`ibweb.live.validation.store.due`: older than
``IBWEB_VALIDATION_INTERVAL_S``, of a record version no longer in use, or new device readings once the debounce has
passed), one fabric at a time; :func:`validate_fabric` one fabric now. Web requests only read the kept report."""

from __future__ import annotations

import logging

from celery import shared_task

from ibweb.fabrics.models import Fabric
from ibweb.runtime import record

from . import store

__all__ = ["validate_due", "validate_fabric"]

log = logging.getLogger("ibweb.live")


@shared_task(name="ibweb.live.validation.tasks.validate_fabric")
def validate_fabric(fabric_id: int) -> bool:
    """Compute fabric ``fabric_id``'s report now; False when it has no published fabric (or no row)."""
    row = Fabric.objects.filter(pk=fabric_id).first()
    return row is not None and store.refresh(row) is not None


@shared_task(name="ibweb.live.validation.tasks.validate_due")
def validate_due() -> int:
    """Compute again the reports that are due (:func:`ibweb.live.validation.store.due`); how many were computed."""
    done = 0
    for row in Fabric.objects.all().order_by("pk"):  # one fabric at a time
        h = record.head_of(row)
        if h is None or not store.due(store.read(row.pk), record.fabric_version(h), row.pk):
            continue
        try:
            done += store.refresh_once(row) is not None  # None: another process computes it
        except Exception:  # one fabric's failure leaves the others to their turn
            log.exception("validation of fabric %s failed", row.slug)
    return done
