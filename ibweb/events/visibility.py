"""Which events a user sees, and how: the tenant rules of the live feed, applied to stored events.

Decided from :func:`ibweb.access.view_of` (nothing else decides):

* ``ALL``: every event of the fabric, as stored.
* ``TENANTS``: the events of the user's tenants (their jobs), and the fabric-wide
  events (no tenant, no job) with the names of hosts outside the user's tenants'
  partitions replaced by ``host-<index>``, as the feed names them
  (:func:`ibweb.access.redaction`), and of nodes gone from the fabric by ``hidden node`` (but a host the
  event recorded with its tenants when it left, ``[-1, name, guid, [slugs]]``, for those tenants' users).
* ``FABRIC``: fabric-wide events only, every host name replaced.
* ``NONE``: nothing.

An event is rendered from the objects the recorder stored with it (:mod:`ibweb.events.objects`):
every host it names (``hosts``, by name and GUID) and the jobs it lists (``jobs``, each view
reads those of its tenants after the message). An event recorded without the fabric's topology
(``resolved`` false: before its objects were stored, or with no topology yet) is read below
``ALL`` with every host of the fabric the view may not see relabelled, or not at all when no
topology is known (fail-closed).

Comments are operators' notes, free text whose objects are not known (a host, a job or a
tenant named in passing): no mapping can be sure to hide them, so only ``ALL`` reads them
(fail-closed); other views see the event's state (acknowledged, by whom, when), not the notes.

Outside ``ALL`` the raw alert (``details``) is not shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.db.models import QuerySet

from ibweb.access import HIDDEN_NODE, Redaction, View, hidden_host_names, host_label, redaction
from ibweb.relabel import names_pattern, relabel

from .facts import JOBS_SUFFIX
from .models import Event

__all__ = ["visible_events", "host_filter", "redact", "HostFilter", "comments_shown", "WITHHELD"]

#: What a view below ``ALL`` reads of an event's message it cannot render (recorded without a topology, none known).
WITHHELD = "details hidden: recorded before the fabric's topology was known"


def visible_events(view: View, fabric) -> QuerySet[Event]:
    """The events of ``fabric`` that ``view`` may see (before redaction), newest first."""
    return Event.objects.filter(fabric=fabric).order_by("-last_seen", "-pk").restrict(view)


_UNSET = object()


class HostFilter:
    """How one view renders a fabric's events: ``hidden(entry)`` tells whether a host of an event's ``hosts``
    (``[index, name, guid]``) must not be named, :meth:`shows_job` whether a job of a tenant is shown.

    One per request: it also holds the compiled patterns of the hidden names (:meth:`pattern`),
    so a page of events about the same hosts compiles one pattern, not one per event, and the
    fabric-wide relabelling (:meth:`fabric_labels`), computed once when needed.
    """

    def __init__(self, shown: frozenset[int] | None, shown_redaction: Redaction | None = None,
                 view: View | None = None, fabric=None) -> None:
        self._shown = shown
        self._redaction = shown_redaction
        self.view, self.fabric = view, fabric
        self._patterns: dict[frozenset[str], re.Pattern] = {}
        self._labels = _UNSET

    def __call__(self, entry) -> bool:
        if self._shown is None:
            return False
        if entry[0] < 0:  # gone from the fabric: named to the views of its tenants then, if it recorded them
            return not (len(entry) >= 4 and self._redaction is not None and any(
                isinstance(t, str) and self._redaction.tenants is not None and t in self._redaction.tenants
                for t in entry[3]))
        return len(entry) < 3 or int(entry[2], 16) not in self._shown

    @property
    def shows_all(self) -> bool:
        """Whether this view names every host and job (``ALL``)."""
        return self._shown is None and (self._redaction is None or self._redaction.shows_all)

    def shows_job(self, tenant: str | None) -> bool:
        """Whether a job of ``tenant`` (slug or name; ``None``: unknown) is shown."""
        return self._redaction is None or self._redaction.shows_job(tenant)

    def fabric_labels(self) -> dict[str, str] | None:
        """``{name: host-<i>}`` of every host of the fabric this view may not name (``None``: no topology known)."""
        if self._shown is None:
            return {}
        if self._labels is _UNSET:
            self._labels = None if self.view is None else hidden_host_names(self.view, self.fabric)
        return self._labels

    def pattern(self, names) -> re.Pattern:
        """The pattern matching any of ``names`` as a whole word (longest first), compiled once per set."""
        key = frozenset(names)
        found = self._patterns.get(key)
        if found is None:
            found = self._patterns[key] = names_pattern(key)
        return found


def host_filter(view: View, fabric) -> HostFilter:
    """The :class:`HostFilter` of ``view`` on ``fabric``.

    The hosts a view may name are those of :func:`ibweb.access.redaction` (the feed's rule); an
    entry without a GUID (``[-1, name]``: a node not in the fabric) is hidden below ``ALL``.
    """
    shown = redaction(view, fabric)
    return HostFilter(shown.host_guids, shown, view, fabric)


def _shows_all(hidden) -> bool:
    return hidden.shows_all if isinstance(hidden, HostFilter) else False


def _shows_job(hidden, tenant: str | None) -> bool:
    return hidden.shows_job(tenant) if isinstance(hidden, HostFilter) else True


def _fabric_labels(hidden) -> dict[str, str] | None:
    return hidden.fabric_labels() if isinstance(hidden, HostFilter) else None


def comments_shown(event: Event, hidden: HostFilter) -> bool:
    """Whether the view of ``hidden`` reads the comments on ``event``: ``ALL`` only (see the module docstring)."""
    return _shows_all(hidden)


def redact(event: Event, hidden: Callable[[list], bool], texts: tuple[str, ...] = ()) -> dict:
    """The user-facing text fields of ``event`` as a view renders them: ``message`` (with the jobs it may see),
    ``object_id``, ``node``, and ``texts`` (for :func:`comments_shown` views only) as ``"texts"``.

    ``hidden``: a :class:`HostFilter` (or any predicate of a host entry: then every job is shown).
    """
    names: dict[str, str] = {}
    for entry in event.hosts or []:
        if hidden(entry):
            label = host_label(entry[0]) if len(entry) >= 3 and entry[0] >= 0 else HIDDEN_NODE
            names[entry[1]] = label
            if len(entry) >= 3 and entry[2]:
                names[entry[2]] = label  # the GUID, as a twin's key writes it
    pattern = None
    if names:
        pattern = hidden.pattern(names) if isinstance(hidden, HostFilter) else names_pattern(names)
    message = relabel(event.message, names, pattern)
    jobs = [str(job) for job, tenant in event.jobs or [] if _shows_job(hidden, tenant)]
    if jobs:
        message += JOBS_SUFFIX + ", ".join(jobs[:5])
    object_id, node = relabel(event.object_id, names, pattern), names.get(event.node, event.node)
    if not event.resolved and not _shows_all(hidden):
        labels = _fabric_labels(hidden)  # its hosts were not resolved: every host this view may not see
        if labels is None:
            message, object_id, node = f"{event.kind.replace('_', ' ')}: {WITHHELD}", "", ""
        else:
            message, object_id, node = relabel(message, labels), relabel(object_id, labels), relabel(node, labels)
    texts = [relabel(t, names, pattern) for t in texts] if comments_shown(event, hidden) else []
    return {"message": message, "object_id": object_id, "node": node, "texts": texts}
