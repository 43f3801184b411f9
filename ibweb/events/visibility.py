"""Which events a user sees, and how: the tenant rules of the live feed, applied to stored events.

Decided from :func:`ibweb.access.view_of` (nothing else decides):

* ``ALL``: every event of the fabric, as stored.
* ``TENANTS``: the events of the user's tenants (their jobs), and the fabric-wide
  events (no tenant, no job) with the names of hosts outside the user's tenants'
  partitions replaced by ``host-<index>``, as the feed names them
  (:func:`ibweb.access.redaction`), and of nodes gone from the fabric by ``hidden node``.
* ``FABRIC``: fabric-wide events only, every host name replaced.
* ``NONE``: nothing.

Outside ``ALL`` the raw alert (``details``) is not shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.db.models import Q, QuerySet

from ibweb.access import HIDDEN_NODE, Level, View, host_label, redaction

from .models import Event

__all__ = ["visible_events", "host_filter", "redact", "HostFilter"]


def visible_events(view: View, fabric) -> QuerySet[Event]:
    """The events of ``fabric`` that ``view`` may see (before redaction)."""
    qs = Event.objects.filter(fabric=fabric).order_by("-last_seen", "-pk")
    fabric_wide = Q(tenant__isnull=True, job="")
    if view.level == Level.ALL:
        return qs
    if view.level == Level.TENANTS:
        return qs.filter(fabric_wide | Q(tenant_id__in=view.tenant_ids))
    if view.level == Level.FABRIC:
        return qs.filter(fabric_wide)
    return qs.none()


class HostFilter:
    """``hidden(entry)``: whether a host of an event's ``hosts`` (``[index, name, guid]``) must not be named.

    One per request: it also holds the compiled patterns of the hidden names (:meth:`pattern`),
    so a page of events about the same hosts compiles one pattern, not one per event.
    """

    def __init__(self, shown: frozenset[int] | None) -> None:
        self._shown = shown
        self._patterns: dict[frozenset[str], re.Pattern] = {}

    def __call__(self, entry) -> bool:
        if self._shown is None:
            return False
        return len(entry) < 3 or int(entry[2], 16) not in self._shown

    def pattern(self, names) -> re.Pattern:
        """The pattern matching any of ``names`` as a whole word (longest first), compiled once per set."""
        key = frozenset(names)
        found = self._patterns.get(key)
        if found is None:
            found = self._patterns[key] = _compile(key)
        return found


def host_filter(view: View, fabric) -> HostFilter:
    """The :class:`HostFilter` of ``view`` on ``fabric``.

    The hosts a view may name are those of :func:`ibweb.access.redaction` (the feed's rule); an
    entry without a GUID (``[-1, name]``: a node not in the fabric) is hidden below ``ALL``.
    """
    return HostFilter(redaction(view, fabric).host_guids)


def _compile(names) -> re.Pattern:
    return re.compile("|".join(rf"(?<![\w-]){re.escape(n)}(?![\w-])" for n in sorted(names, key=len, reverse=True)))


def _swap(text: str, names: dict[str, str], pattern: re.Pattern | None) -> str:
    if not names or not text:
        return text
    return pattern.sub(lambda m: names[m.group(0)], text)


def redact(event: Event, hidden: Callable[[list], bool], texts: tuple[str, ...] = ()) -> dict:
    """The user-facing text fields of ``event`` with hidden hosts renamed: ``message``, ``object_id``, ``node``,
    and ``texts`` (its comments) as ``"texts"``. ``hidden``: a :class:`HostFilter` (or any such predicate)."""
    names = {entry[1]: host_label(entry[0]) if len(entry) >= 3 else HIDDEN_NODE
             for entry in (event.hosts or []) if hidden(entry)}
    pattern = None
    if names:
        pattern = hidden.pattern(names) if isinstance(hidden, HostFilter) else _compile(names)
    return {"message": _swap(event.message, names, pattern), "object_id": _swap(event.object_id, names, pattern),
            "node": names.get(event.node, event.node), "texts": [_swap(t, names, pattern) for t in texts]}
