"""The live feed forwards what other apps announce to the clients of a fabric."""

from asgiref.sync import async_to_sync
from django.dispatch import receiver

from ibweb.fabrics.signals import analysis_progress

from .groups import broadcast_progress


@receiver(analysis_progress, dispatch_uid="ibweb.live.analysis_progress")
def forward_analysis_progress(sender, fabric_id: int, payload: dict, **kwargs) -> None:
    """Send an analysis's progress to the fabric's feed group."""
    async_to_sync(broadcast_progress)(fabric_id, payload)
