"""A stored event as one channel's recipient reads it: a :class:`~ibweb.notify.senders.base.Notice` rendered by the
one alert renderer (:func:`ibweb.access.alert_renderer`) for the channel's view.

An operators' channel reads as ``ALL``; a tenant's channel as that tenant's users (``TENANTS`` with its one
tenant): hosts outside its partitions as ``host-<index>``, other tenants' jobs left out, no other tenant named.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from ibweb.access import EVERYTHING, View, alert_renderer
from ibweb.access.view import Level

from .matching import EventFacts
from .senders.base import Notice

__all__ = ["channel_view", "Renderers", "notice_of", "notice_key"]


def channel_view(channel) -> View:
    """The access view a channel's recipient has: its tenant's, or ``ALL`` for the operators' channels."""
    return View(Level.TENANTS, frozenset({channel.tenant_id})) if channel.tenant_id else EVERYTHING


class Renderers:
    """One :class:`~ibweb.access.alert_render.AlertRenderer` per (view, fabric), made when first asked for."""

    def __init__(self) -> None:
        self._made: dict[tuple[str, int], object] = {}

    def of(self, view: View, fabric):
        key = (view.key, fabric.pk)
        if key not in self._made:
            self._made[key] = alert_renderer(view, fabric)
        return self._made[key]


def _url(event) -> str:
    base = str(getattr(settings, "IBWEB_BASE_URL", "") or "").rstrip("/")
    return f"{base}/fabrics/{event.fabric.slug}/events/?event={event.pk}" if base else ""


def notice_key(event, status: str) -> str:
    """The key of ``event``'s notice of ``status`` (firing or resolved): one per occurrence (a reopened event's
    start is a new one)."""
    started = event.raised_at or event.first_seen
    return f"ibweb-{event.fabric_id}-{event.pk}-{int(started.timestamp())}-{status}"


def notice_of(event, status: str, facts: EventFacts, view: View, renderer, now: datetime) -> Notice:
    """The notice of ``event`` (``status`` firing or resolved) for ``view`` (its ``renderer`` on the event's
    fabric): message, subject, switch and port as the view reads them; the tenant label only if it sees it."""
    message, (object_id, switch, port) = renderer.stored(
        event.kind, event.message, event.hosts or [], event.parts, event.jobs or [], event.resolved,
        (event.object_id, facts.switch, facts.port))
    tenant = facts.tenant if facts.tenant and view.sees_tenant(event.tenant_id) else ""
    fabric = event.fabric
    labels = {"fabric": fabric.slug, "cluster": facts.cluster, "kind": event.kind, "severity": event.severity,
              "switch": switch, "port": port, "tenant": tenant, "event_id": str(event.pk)}
    started = event.raised_at or event.first_seen
    ends = (event.cleared_at or now) if status == "resolved" else None
    first_line = message.splitlines()[0] if message else event.kind
    return Notice(key=notice_key(event, status), state=status, kind=event.kind,
                  severity=event.severity, summary=f"{fabric.name}: {first_line}"[:200], body=message,
                  labels={k: v for k, v in labels.items() if v}, starts_at=started, ends_at=ends, url=_url(event),
                  annotations={"subject": object_id} if object_id else {})
