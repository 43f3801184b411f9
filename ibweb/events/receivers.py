"""The events app listens to the fabric runner: every raised and cleared alert is recorded, and each frame
gives the recorder the chance to retry what failed and to close what is no longer raised."""

from __future__ import annotations

from django.dispatch import receiver

from ibweb.live.signals import fabric_alerts, frame_published
from ibweb.runtime import record

from .recorder import recorder_for


@receiver(fabric_alerts, dispatch_uid="ibweb.events.record")
def record_alerts(sender, fabric_id: int, seq: int, t: float, raised: list, cleared: list, first: bool = False,
                  **kwargs) -> None:
    """Store the alerts of one runner signal (in the runner's worker thread), with the names its record gives.

    The recorder waits out a locked database, writes each event apart when a batch fails, and keeps what
    still failed to retry on the next frames (:class:`~ibweb.events.recorder.EventRecorder`).
    """
    h = record.head(fabric_id)
    fabric = record.fabric(fabric_id, h) if h is not None else None
    jobs = (record.jobs(fabric_id, h) or []) if h is not None else []
    recorder_for(fabric_id).apply(raised, cleared, seq, t, first=first, fabric=fabric, jobs=jobs)


@receiver(frame_published, dispatch_uid="ibweb.events.frame")
def frame_checks(sender, fabric_id: int, frame: dict, **kwargs) -> None:
    """Each published frame: retries of failed event writes and the periodic check of the open events."""
    recorder_for(fabric_id).on_frame(frame)
