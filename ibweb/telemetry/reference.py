"""The reference cabling of a telemetry-fed fabric: what its conditions are measured against.

Without a cabling plan, a fabric's reference is its last good discovery: the first discovery
becomes it, and a later one replaces it by itself only when nothing of the reference is
missing or degraded in it (:func:`fabric_engine.telemetry.is_good`: cables added, nothing
lost). A cable cut stays a condition until it is cabled again or an operator accepts the
current cabling (:func:`accept_current_cabling`, audited), which makes the newest discovery
the reference. The reference is stored on the :class:`~.models.CollectorConfig` row.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from fabric_engine.errors import FabricEngineError
from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from ibweb.db.retry import retry_locked
from ibweb.tenancy.choices import AuditAction
from ibweb.tenancy.models import AuditEntry

from . import store
from .models import CollectorConfig

__all__ = ["set_reference", "accept_current_cabling", "reference_summary"]


def set_reference(config_id: int, linkinfo: str, by: str = "") -> datetime:
    """Store ``linkinfo`` as the reference of a collector (``by``: who accepted it, '' when automatic); returns
    its new ``reference_at``."""
    at = timezone.now()
    retry_locked(CollectorConfig.objects.filter(pk=config_id).update, reference=linkinfo, reference_at=at,
                 reference_by=by[:150], what="the reference cabling")
    return at


_COUNTS: dict[tuple[int, datetime | None], tuple] = {}


def _counts(config: CollectorConfig) -> tuple[int | None, int | None, int | None]:
    """Switches, hosts and cables of a collector's reference, parsed once per version (None where it does not
    read); the reference text (megabytes on a large fabric, deferred by callers) is loaded only then."""
    key = (config.pk, config.reference_at)
    if key not in _COUNTS:
        try:
            f = fabric_from_linkinfo(parse_iblinkinfo(config.reference))
            _COUNTS[key] = (int(f.num_switches), int(f.num_hosts), int(f.num_links))
        except FabricEngineError:
            _COUNTS[key] = (None, None, None)
        while len(_COUNTS) > 64:
            _COUNTS.pop(next(iter(_COUNTS)))
    return _COUNTS[key]


def reference_summary(config: CollectorConfig) -> dict:
    """``{"at", "by", "switches", "hosts", "cables"}`` of a collector's reference (counts None if unreadable)."""
    counts = dict.fromkeys(("switches", "hosts", "cables"))
    if config.reference_at is not None:
        counts = dict(zip(counts, _counts(config), strict=True))
    return {"at": config.reference_at.isoformat() if config.reference_at else None,
            "by": config.reference_by or None, **counts}


def accept_current_cabling(config: CollectorConfig, user, via: str = "api") -> dict:
    """Make the newest discovery the reference (conditions against the old one clear); audited.

    Raises :class:`ValueError` when the fabric has no discovery yet.
    """
    _, newest = store.sweeps(config.fabric_id)
    if newest is None or not newest.get("linkinfo"):
        raise ValueError("no discovery of this fabric yet: nothing to accept")
    before = reference_summary(config)
    with transaction.atomic():
        config.reference, config.reference_at = newest["linkinfo"], timezone.now()
        config.reference_by = (getattr(user, "username", "") or "")[:150]
        config.save(update_fields=["reference", "reference_at", "reference_by"])
        after = reference_summary(config)
        AuditEntry.objects.create(
            user=user if getattr(user, "is_authenticated", False) else None, username=config.reference_by,
            action=AuditAction.UPDATE, via=via, fabric_id=config.fabric_id, object_type="reference cabling",
            object_id=str(config.pk), object_repr=f"reference cabling of {config.fabric}", before=before,
            after={**after, "sweep": newest.get("id")})
    return after
