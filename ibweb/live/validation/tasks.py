"""The periodic validation of every fabric, as a Celery task: :func:`validate_due` computes again each fabric's
report older than ``IBWEB_VALIDATION_INTERVAL_S`` (or of a record version no longer in use), one fabric at a time;
:func:`validate_fabric` one fabric now. Idempotent: a beat may run it as often as it likes, a report younger than
the interval is kept (:func:`ibweb.live.validation.store.current`)."""

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
    """Compute again the reports that are due (see the module docstring); how many were computed."""
    done = 0
    for row in Fabric.objects.all().order_by("pk"):  # one fabric at a time
        h = record.head_of(row)
        if h is None:
            continue
        kept = (store.read(row.pk) or {}).get("t")
        try:
            now = store.current(row, record.fabric_version(h), wait_s=0.0)
            done += now is not None and now["t"] != kept
        except Exception:  # one fabric's failure leaves the others to their turn
            log.exception("validation of fabric %s failed", row.slug)
    return done
