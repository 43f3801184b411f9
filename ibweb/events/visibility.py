"""Which events a user sees, and how: the tenant rules of the live feed, applied to stored events.

Decided from :func:`ibweb.access.view_of` (nothing else decides):

* ``ALL``: every event of the fabric, as stored.
* ``TENANTS``: the events of the user's tenants (their jobs), and the fabric-wide
  events (no tenant, no job) with the hosts outside the user's tenants' partitions hidden.
* ``FABRIC``: fabric-wide events only, every host hidden.
* ``NONE``: nothing.

An event is rendered by the feed's renderer (:class:`ibweb.access.alert_render.AlertRenderer`, made by
:func:`ibweb.access.alert_renderer`) from the parts the recorder stored with it: the hosts it names
(``hosts``), its template (``parts``) and the jobs it lists (``jobs``, each view reads those of its
tenants after the message).

Comments are operators' notes, free text whose objects are not known (a host, a job or a
tenant named in passing): no mapping can be sure to hide them, so only ``ALL`` reads them
(fail-closed); other views see the event's state (acknowledged, by whom, when), not the notes.

Outside ``ALL`` the raw alert (``details``) is not shown.
"""

from __future__ import annotations

from django.db.models import QuerySet

from ibweb.access import AlertRenderer, View

from .models import Event

__all__ = ["visible_events", "redact", "comments_shown"]


def visible_events(view: View, fabric) -> QuerySet[Event]:
    """The events of ``fabric`` that ``view`` may see (before redaction), newest first."""
    return Event.objects.filter(fabric=fabric).order_by("-last_seen", "-pk").restrict(view)


def comments_shown(event: Event, renderer: AlertRenderer) -> bool:
    """Whether the view of ``renderer`` reads the comments on ``event``: ``ALL`` only (see the module docstring)."""
    return renderer.shows_all


def redact(event: Event, renderer: AlertRenderer, texts: tuple[str, ...] = ()) -> dict:
    """The user-facing text fields of ``event`` as the view of ``renderer`` reads them: ``message`` (with the jobs
    it may see), ``object_id``, ``node``, and ``texts`` (the comments, for :func:`comments_shown` views only)."""
    message, (object_id, node) = renderer.stored(event.kind, event.message, event.hosts or [], event.parts,
                                                 event.jobs or [], event.resolved, (event.object_id, event.node))
    return {"message": message, "object_id": object_id, "node": node,
            "texts": list(texts) if comments_shown(event, renderer) else []}
