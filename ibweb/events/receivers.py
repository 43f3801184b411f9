"""The events app listens to the fabric runner: every raised and cleared alert is recorded."""

from __future__ import annotations

from django.dispatch import receiver

from ibweb.db_retry import retry_locked
from ibweb.live.signals import fabric_alerts
from ibweb.runtime import record

from .recorder import recorder_for


@receiver(fabric_alerts, dispatch_uid="ibweb.events.record")
def record_alerts(sender, fabric_id: int, seq: int, t: float, raised: list, cleared: list, first: bool = False,
                  **kwargs) -> None:
    """Store the alerts of one runner signal (in the runner's worker thread), with the names its record gives."""
    h = record.head(fabric_id)
    fabric = record.fabric(fabric_id, h) if h is not None else None
    jobs = (record.jobs(fabric_id, h) or []) if h is not None else []
    retry_locked(recorder_for(fabric_id).apply, raised, cleared, seq, t, first=first, fabric=fabric, jobs=jobs,
                 what=f"events of fabric {fabric_id}")
