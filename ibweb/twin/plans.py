"""The cabling plan of a fabric: upload (checked before it is stored) and the live comparison with the discovery.

:func:`upload` reads the file completely (:func:`fabric_engine.twin.read_plan`) before
anything is stored, so a bad line is an error naming ``file:line`` and the previous plan
stays. :func:`check` compares the plan with a discovered fabric; the fabric's engine calls
it whenever the discovery or the plan changed, and a report that differs from the last one
is saved and returned as a change (an event).
"""

from __future__ import annotations

import hashlib
import json

from django.core.exceptions import ValidationError
from django.utils import timezone

from fabric_engine.errors import FormatError
from fabric_engine.topology import Fabric
from fabric_engine.twin import compare_plan, read_plan
from fabric_engine.twin.plan import MAX_PLAN_BYTES, Plan

from .models import CablingPlan

__all__ = ["upload", "check", "parsed", "summary", "MAX_PLAN_BYTES"]

_parsed: dict[tuple[int, str], Plan] = {}


def upload(fabric, filename: str, data: bytes | str, user=None) -> CablingPlan:
    """Store ``data`` as the cabling plan of ``fabric``; raises ``ValidationError`` naming file and line."""
    if len(data) > MAX_PLAN_BYTES:
        raise ValidationError(f"{filename}: {len(data)} bytes, more than the limit of {MAX_PLAN_BYTES}")
    try:
        plan = read_plan(data, filename)
    except FormatError as exc:
        raise ValidationError(str(exc)) from None
    text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    row, _ = CablingPlan.objects.update_or_create(
        fabric=fabric, defaults={"filename": filename[:255], "text": text, "cables": plan.num_cables,
                                 "uploaded_by": user if getattr(user, "is_authenticated", False) else None,
                                 "report": None, "report_digest": "", "checked": None})
    return row


def parsed(row: CablingPlan) -> Plan:
    """The parsed plan of a row (once per process and upload)."""
    key = (row.pk, row.uploaded.isoformat())
    plan = _parsed.get(key)
    if plan is None:
        _parsed.clear()  # one plan per fabric is read at a time in an engine process; keep memory flat
        plan = _parsed[key] = read_plan(row.text, row.filename)
    return plan


def summary(report: dict) -> str:
    """``"2 missing, 1 miswired"`` or ``"as planned"``."""
    parts = [f"{n} {kind.replace('_', ' ')}" for kind, n in report["counts"].items() if n]
    return ", ".join(parts) if parts else "as planned"


def check(row: CablingPlan, fabric: Fabric, *, save: bool = True) -> tuple[dict, bool]:
    """Compare the plan of ``row`` with ``fabric``; returns ``(report dict, changed since the last check)``.

    ``save=False`` (a page showing a report before the engine checked) stores nothing.
    """
    report = compare_plan(parsed(row), fabric)
    out = report.as_dict()
    out["link_status"] = report.link_status.astype(int).tolist()
    out["summary"] = summary(out)
    digest = hashlib.sha256(json.dumps(out["issues"], sort_keys=True).encode()).hexdigest()
    changed = digest != row.report_digest
    now = timezone.now()
    out["checked"] = now.isoformat()
    if changed and save:
        CablingPlan.objects.filter(pk=row.pk).update(report=out, report_digest=digest, checked=now)
        row.report, row.report_digest, row.checked = out, digest, now
    return out, changed
