"""Filters of the events list, shared by the page and the API: ``severity``, ``kind``, ``tenant``, time, state, text.

Query parameters (all optional)::

    severity=critical,warning     one or more severities
    kind=errors,link_down         one or more kinds
    tenant=acme | tenant=none     a tenant's events, or the fabric-wide ones
    since=2026-05-01T10:00Z | since=1h / 30m / 7d      last seen at or after
    until=2026-05-02T00:00Z       first seen before
    state=active | cleared | unacknowledged | all       (default: all)
    q=text                        in the message as the user sees it
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet
from django.utils.dateparse import parse_datetime

from ibweb.access import Level, View

from .choices import Severity
from .models import Event
from .visibility import redact

__all__ = ["EventFilters", "parse_filters", "apply_filters", "STATES", "MAX_TEXT_SCAN"]

STATES = ("all", "active", "cleared", "unacknowledged")
#: Newest events searched by text for users who see redacted messages (the search runs on what they see).
MAX_TEXT_SCAN = 5000
_RELATIVE = re.compile(r"^(\d{1,5})\s*([mhd])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}


@dataclass(frozen=True)
class EventFilters:
    severity: tuple[str, ...] = ()
    kind: tuple[str, ...] = ()
    tenant: str = ""
    since: datetime | None = None
    until: datetime | None = None
    state: str = "all"
    q: str = ""

    def as_params(self) -> dict:
        """The filters as query parameters (for links that keep them)."""
        out = {"severity": ",".join(self.severity), "kind": ",".join(self.kind), "tenant": self.tenant,
               "state": "" if self.state == "all" else self.state, "q": self.q}
        return {k: v for k, v in out.items() if v}


def _when(raw: str, name: str, now: datetime) -> datetime | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    relative = _RELATIVE.match(raw)
    if relative:
        return now - timedelta(**{_UNITS[relative.group(2)]: int(relative.group(1))})
    try:
        value = parse_datetime(raw.replace(" ", "T"))
    except ValueError:
        value = None
    if value is None:
        raise ValidationError({name: f"{raw!r} is neither a date-time (2026-05-01T10:00Z) nor an age (30m, 2h, 7d)"})
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _listing(raw: str, name: str, allowed=None, limit: int = 20) -> tuple[str, ...]:
    values = tuple(dict.fromkeys(v.strip() for v in (raw or "").split(",") if v.strip()))
    if len(values) > limit:
        raise ValidationError({name: f"at most {limit} values"})
    if allowed is not None:
        bad = [v for v in values if v not in allowed]
        if bad:
            raise ValidationError({name: f"{bad[0]!r} is not one of {', '.join(allowed)}"})
    return values


def _joined(params, name: str) -> str:
    """A parameter given once as ``a,b`` or repeated (``name=a&name=b``, as checkboxes send it)."""
    if hasattr(params, "getlist"):
        return ",".join(params.getlist(name))
    return params.get(name, "")


def parse_filters(params, now: datetime | None = None) -> EventFilters:
    """:class:`EventFilters` from query parameters; :class:`ValidationError` names the bad parameter."""
    now = now or datetime.now(tz=UTC)
    state = (params.get("state") or "all").strip()
    if state not in STATES:
        raise ValidationError({"state": f"{state!r} is not one of {', '.join(STATES)}"})
    kind = _listing(_joined(params, "kind"), "kind")
    if any(len(k) > 32 for k in kind):
        raise ValidationError({"kind": "kinds are at most 32 characters"})
    return EventFilters(severity=_listing(_joined(params, "severity"), "severity", Severity.values), kind=kind,
                        tenant=(params.get("tenant") or "").strip()[:100],
                        since=_when(params.get("since", ""), "since", now),
                        until=_when(params.get("until", ""), "until", now), state=state,
                        q=(params.get("q") or "").strip()[:200])


def apply_filters(qs: QuerySet[Event], f: EventFilters, view: View, hidden=None) -> QuerySet[Event] | list[Event]:
    """``qs`` narrowed by ``f``; a text search of redacted messages returns a list (newest first).

    ``hidden``: the view's :class:`~ibweb.access.alert_render.AlertRenderer`, which the text search reads by.
    """
    if f.severity:
        qs = qs.filter(severity__in=f.severity)
    if f.kind:
        qs = qs.filter(kind__in=f.kind)
    if f.tenant == "none":
        qs = qs.filter(tenant__isnull=True)
    elif f.tenant:
        qs = qs.filter(tenant__slug=f.tenant)
    if f.since is not None:
        qs = qs.filter(last_seen__gte=f.since)
    if f.until is not None:
        qs = qs.filter(first_seen__lt=f.until)
    if f.state == "active":
        qs = qs.filter(active=True)
    elif f.state == "cleared":
        qs = qs.filter(active=False)
    elif f.state == "unacknowledged":
        qs = qs.filter(acknowledged_at__isnull=True)
    if not f.q:
        return qs
    if view.level == Level.ALL or hidden is None:
        return qs.filter(Q(message__icontains=f.q) | Q(job__icontains=f.q))
    needle = f.q.lower()
    return [e for e in qs[:MAX_TEXT_SCAN] if needle in redact(e, hidden)["message"].lower() or needle in e.job.lower()]
