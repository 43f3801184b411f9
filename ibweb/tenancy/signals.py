"""Bump the fabric's policy version on every change of tenancy data (see ``engine_policy``).

Saves and deletes of rows bump it here; writes that send no signal (``bulk_create``,
``bulk_update``) go through :mod:`ibweb.tenancy.services`, which calls :func:`policy_changed`.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver

from .engine_policy import bump_policy_version
from .models import Partition, PartitionMember, QosPolicy, ServiceClass, Tenant


def policy_changed(fabric_id: int) -> None:
    """Bump the version now and again once the transaction commits.

    The engine may read the policy between the two: the second bump makes it read the
    committed rows, so a change is never applied half or missed.
    """
    bump_policy_version(fabric_id)
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: bump_policy_version(fabric_id))


def _fabric_ids(instance) -> list[int]:
    if isinstance(instance, Partition | QosPolicy):
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
    if sender in (Partition, PartitionMember, QosPolicy, ServiceClass, Tenant):
        for fid in _fabric_ids(instance):
            policy_changed(fid)


@receiver(m2m_changed, sender=Tenant.users.through)
def _users_changed(sender, instance, **kwargs) -> None:
    if isinstance(instance, Tenant):
        for fid in _fabric_ids(instance):
            policy_changed(fid)
