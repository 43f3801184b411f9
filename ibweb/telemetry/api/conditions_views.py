"""``/api/telemetry/fabrics/<slug>/conditions/``: the fabric's active conditions, as each view may see them.

A condition (cabling: ``link_down``, ``node_missing``, ``width_degraded``, ``speed_degraded``;
counters: ``error_rate``, ``port_flapping``, ``symbol_errors_rising``) is an open event whose
alert carries ``"condition": true``. The list goes through the events API's access rules
(:mod:`ibweb.events.visibility`): the events a view may see, rendered by the one alert renderer
(:func:`ibweb.access.alert_renderer`) as there; only
views of every tenant get the ends (ports, nodes) by name, the others the redacted subject.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from ibweb.access import Level, alert_renderer
from ibweb.events.api import EventsView
from ibweb.events.visibility import redact

__all__ = ["ConditionListView", "condition_payload"]

#: Fields of a condition alert that name its ends, in order.
_ENDS = ("a", "b", "port", "node")


def condition_payload(event, view, hidden) -> dict:
    """One open condition event as ``view`` may see it: kind, severity, since, count, ends, message, evidence.

    ``evidence``: the figures of the sweep that opened it and the rule they were judged by (counter names and
    numbers only, no host: every view reads it); the live figures are in the feed's condition alerts.
    """
    shown = redact(event, hidden)
    details = event.details if isinstance(event.details, dict) else {}
    if view.level == Level.ALL:
        ends = [str(details[k]) for k in _ENDS if isinstance(details.get(k), str) and details[k]]
    else:
        ends = [shown["object_id"]] if shown["object_id"] else []
    return {"id": event.pk, "kind": event.kind, "severity": event.severity,
            "since": round(event.first_seen.timestamp(), 3), "first_seen": event.first_seen.isoformat(),
            "count": event.occurrence, "ends": ends, "message": shown["message"],
            "evidence": _numbers(details.get("evidence"))}


def _numbers(evidence) -> dict:
    """The ``evidence`` of a condition, its names and numbers only (``{}`` when there is none)."""
    if not isinstance(evidence, dict):
        return {}
    return {str(k): v for k, v in evidence.items()
            if isinstance(v, int | float | bool) or (isinstance(v, str) and v.isidentifier())}


@extend_schema(responses=OpenApiTypes.OBJECT)
class ConditionListView(EventsView):
    """``{"conditions": [...]}``: the active conditions of the fabric, oldest first (``count``: the occurrence)."""

    def get(self, request, slug: str):
        view, fabric, qs = self.scope(request, slug)
        hidden = alert_renderer(view, fabric)
        rows = qs.filter(active=True, details__condition=True).order_by("first_seen", "pk")[:1000]
        return Response({"conditions": [condition_payload(e, view, hidden) for e in rows]})
