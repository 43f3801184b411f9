"""Saving a job source, a plan, the fabric (its congestion model: the model of the expected values) or its
congestion control settings tells the fabric's engine to re-read them (:func:`.report_cache.bump_config`)."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from ibweb.fabrics.models import Fabric
from ibweb.tenancy.models import CongestionControlPolicy

from .models import CablingPlan, JobSource
from .report_cache import bump_config


@receiver([post_save, post_delete], sender=JobSource)
@receiver([post_save, post_delete], sender=CablingPlan)
def config_changed(sender, instance, **kwargs) -> None:
    bump_config(instance.fabric_id)


@receiver(post_save, sender=Fabric)
def fabric_changed(sender, instance, **kwargs) -> None:
    bump_config(instance.pk)


@receiver([post_save, post_delete], sender=CongestionControlPolicy)
def congestion_control_changed(sender, instance, **kwargs) -> None:
    bump_config(instance.fabric_id)
