"""Bump the fabric's policy version on every change of tenancy data (see ``engine_policy``).

Saves and deletes of rows bump it here; writes that send no signal (``bulk_create``,
``bulk_update``) go through :mod:`ibweb.tenancy.services`, which calls :func:`policy_changed`.
"""

from __future__ import annotations

from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver

from .engine_policy import bump_policy_version
from .models import CongestionControlPolicy, Partition, PartitionMember, QosPolicy, ServiceClass, Tenant


def policy_changed(fabric_id: int) -> None:
    """Bump the version in the transaction of the change: both commit, or neither.

    The handlers run after the row is written, so even outside a transaction (autocommit) the
    version never moves before the rows it stands for.
    """
    bump_policy_version(fabric_id)


def _fabric_ids(instance) -> list[int]:
    if isinstance(instance, Partition | QosPolicy | CongestionControlPolicy):
        return [instance.fabric_id]
    if isinstance(instance, PartitionMember):
        return list(Partition.objects.filter(pk=instance.partition_id).values_list("fabric_id", flat=True))
    if isinstance(instance, Tenant):
        return list(instance.partitions.values_list("fabric_id", flat=True).distinct())
    if isinstance(instance, ServiceClass):
        ids = set(instance.partitions.values_list("fabric_id", flat=True))
        ids |= set(Partition.objects.filter(tenant__service_class=instance).values_list("fabric_id", flat=True))
        return sorted(ids)
    return []


@receiver([post_save, post_delete])
def _changed(sender, instance, **kwargs) -> None:
    if sender in (Partition, PartitionMember, QosPolicy, CongestionControlPolicy, ServiceClass, Tenant):
        for fid in _fabric_ids(instance):
            policy_changed(fid)


@receiver(m2m_changed, sender=Tenant.users.through)
def _users_changed(sender, instance, **kwargs) -> None:
    if isinstance(instance, Tenant):
        for fid in _fabric_ids(instance):
            policy_changed(fid)
