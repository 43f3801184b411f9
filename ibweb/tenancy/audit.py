"""The audit log of tenancy data: :func:`record` one entry per change, with before and after."""

from __future__ import annotations

from django.db import models
from django.forms.models import model_to_dict

from .models import AuditEntry, Partition

__all__ = ["snapshot", "entry", "record"]


def _plain(value):
    if isinstance(value, models.Model):
        return value.pk
    if isinstance(value, list | tuple | set):
        return sorted(_plain(v) for v in value)
    return value


def snapshot(obj: models.Model, members: dict[str, str] | None = None) -> dict:
    """JSON-ready field values of ``obj``; a partition includes its members as ``{guid: membership}``.

    ``members``: the partition's members when the caller already holds them (no query); else they are read,
    from a ``prefetch_related("members")`` when there is one.
    """
    data = {k: _plain(v) for k, v in model_to_dict(obj).items()}
    if isinstance(obj, Partition) and obj.pk:
        data["pkey"] = obj.pkey_hex
        if members is None:
            prefetched = getattr(obj, "_prefetched_objects_cache", {}).get("members")
            pairs = ((m.guid, m.membership) for m in prefetched) if prefetched is not None else \
                obj.members.values_list("guid", "membership")
            members = dict(pairs)
        data["members"] = dict(sorted(members.items()))
    return data


def _fabric_id(obj: models.Model) -> int | None:
    for attr in ("fabric_id",):
        if getattr(obj, attr, None):
            return getattr(obj, attr)
    partition = getattr(obj, "partition", None)
    return partition.fabric_id if partition is not None else None


def entry(user, action: str, obj: models.Model, before: dict | None = None, after: dict | None = None,
          via: str = "", fabric_id: int | None = None) -> AuditEntry:
    """The unsaved audit entry of a change (see :func:`record`), for callers that store many at once."""
    authenticated = bool(user and user.is_authenticated)
    return AuditEntry(
        user=user if authenticated else None,
        username=user.get_username() if authenticated else "",
        action=action, via=via, fabric_id=fabric_id or _fabric_id(obj),
        object_type=obj._meta.label, object_id=str(obj.pk or ""), object_repr=str(obj)[:200],
        before=before, after=after if after is not None or action == "delete" else snapshot(obj),
    )


def record(user, action: str, obj: models.Model, before: dict | None = None, after: dict | None = None,
           via: str = "", fabric_id: int | None = None) -> AuditEntry:
    """Store who changed ``obj`` how; ``before``/``after`` default to nothing and the current snapshot."""
    row = entry(user, action, obj, before, after, via, fabric_id)
    row.save()
    return row
