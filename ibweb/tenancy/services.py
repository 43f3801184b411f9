"""Write operations on partition members and QoS, shared by the admin, the API and the importer.

Each one validates everything first (GUID syntax, inventory of the fabric,
memberships), then, in one transaction holding the partition's row lock (concurrent
writers of one partition queue, none loses the other's change), writes, leaves one
audit entry with the partition before and after, and bumps the fabric's policy
version (``bulk_create`` sends no signal), so the engine applies it within one tick.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from fabric_engine.formats.opensm_partitions import DEFAULT_PKEY

from . import audit
from .choices import AuditAction, Membership
from .inventory import check_guids, normalize_guid
from .models import Partition, PartitionMember
from .signals import policy_changed

__all__ = ["member_entries", "add_members", "remove_members", "replace_members", "update_partition"]


def member_entries(guids, membership: str | None = None, memberships=None,
                   default: str = Membership.FULL) -> list[tuple[str, str]]:
    """Validated ``(guid, membership)`` pairs from UFM-style input.

    ``membership`` applies to every GUID; ``memberships`` (same length as ``guids``)
    gives one each. Raises :class:`ValidationError` naming ``guids``, ``membership``
    or ``memberships``.
    """
    if not isinstance(guids, list | tuple) or not guids:
        raise ValidationError({"guids": "give a non-empty list of port GUIDs"})
    normalized = [normalize_guid(g, "guids") for g in guids]
    seen = set()
    for g in normalized:
        if g in seen:
            raise ValidationError({"guids": f"GUID {g} is listed twice"})
        seen.add(g)
    valid = set(Membership.values)
    if memberships is not None:
        if not isinstance(memberships, list | tuple) or len(memberships) != len(normalized):
            raise ValidationError({"memberships": "give one membership per GUID"})
        bad = [m for m in memberships if m not in valid]
        if bad:
            raise ValidationError({"memberships": f"{bad[0]!r} is not full, limited or both"})
        return list(zip(normalized, memberships, strict=True))
    m = membership or default
    if m not in valid:
        raise ValidationError({"membership": f"{m!r} is not full, limited or both"})
    return [(g, m) for g in normalized]


def _editable(partition: Partition) -> None:
    if partition.pkey == DEFAULT_PKEY:
        raise ValidationError({"pkey": "0x7fff is the default partition, managed by ibweb"})


def locked(partition: Partition) -> Partition:
    """``partition`` read again under a row lock (call inside a transaction): writers of one partition queue."""
    return Partition.objects.select_for_update().get(pk=partition.pk)


def _change(partition: Partition, user, via: str, apply) -> Partition:
    """Run ``apply(partition)`` on the locked row, audit before and after, and tell the engine (one tick)."""
    _editable(partition)
    with transaction.atomic():
        row = locked(partition)
        before = audit.snapshot(row)
        apply(row)
        audit.record(user, AuditAction.UPDATE, row, before=before, via=via)
        policy_changed(row.fabric_id)
    return row


def add_members(partition: Partition, entries: list[tuple[str, str]], user=None, via: str = "") -> Partition:
    """Add (or change the membership of) GUIDs; all must be ports of the partition's fabric."""
    check_guids(partition.fabric, [g for g, _ in entries])

    def apply(row: Partition):
        existing = {m.guid: m for m in row.members.filter(guid__in=[g for g, _ in entries])}
        new = [PartitionMember(partition=row, guid=g, membership=m) for g, m in entries if g not in existing]
        PartitionMember.objects.bulk_create(new)
        changed = [existing[g] for g, m in entries if g in existing and existing[g].membership != m]
        for row in changed:
            row.membership = dict(entries)[row.guid]
        PartitionMember.objects.bulk_update(changed, ["membership"])

    return _change(partition, user, via, apply)


def remove_members(partition: Partition, guids: list[str], user=None, via: str = "") -> Partition:
    """Remove GUIDs; a GUID that is not a member is an error (naming ``guids``)."""
    normalized = [normalize_guid(g, "guids") for g in guids]
    present = set(partition.members.filter(guid__in=normalized).values_list("guid", flat=True))
    missing = [g for g in normalized if g not in present]
    if missing:
        raise ValidationError({"guids": f"GUID {missing[0]} is not a member of {partition}"})
    def apply(row: Partition):
        present = set(row.members.filter(guid__in=normalized).values_list("guid", flat=True))
        missing = [g for g in normalized if g not in present]
        if missing:  # removed meanwhile by another writer
            raise ValidationError({"guids": f"GUID {missing[0]} is not a member of {row}"})
        row.members.filter(guid__in=normalized).delete()

    return _change(partition, user, via, apply)


def replace_members(partition: Partition, entries: list[tuple[str, str]], user=None, via: str = "") -> Partition:
    """Make the member set exactly ``entries`` (may be empty)."""
    if entries:
        check_guids(partition.fabric, [g for g, _ in entries])

    def apply(row: Partition):
        row.members.all().delete()
        PartitionMember.objects.bulk_create([PartitionMember(partition=row, guid=g, membership=m)
                                             for g, m in entries])

    return _change(partition, user, via, apply)


def update_partition(partition: Partition, changes: dict, user=None, via: str = "") -> Partition:
    """Set fields (e.g. ``sl``, ``mtu``, ``rate``) on the locked row after full model validation; returns it."""
    _editable(partition)
    with transaction.atomic():
        row = locked(partition)
        before = audit.snapshot(row)
        for field, value in changes.items():
            setattr(row, field, value)
        row.full_clean()
        row.save(update_fields=list(changes))
        audit.record(user, AuditAction.UPDATE, row, before=before, via=via)
    return row
