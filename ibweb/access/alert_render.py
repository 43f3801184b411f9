"""The one renderer of alerts, events and progress messages for a view: what the hosts they name read as.

Every text that names hosts (a feed alert, a stored event, a telemetry condition, a notification sent
later) is rendered here, from its structured parts: the hosts it names (:mod:`.alert_objects`: each once,
with the ways it is written), its template if it has one (``text`` with ``{0}``..., and the objects of its
slots) and the jobs it lists, for one view's :class:`~.redaction.Redaction`:

* ``ALL`` reads everything as raised;
* below, a host outside the view's tenants' partitions reads ``host-<index>`` (its GUID ``hidden``, a port key
  ``host-<index>/<port>``), a host gone from the fabric ``hidden node`` unless it was one of the view's
  tenants' when it left (in its template and in the fields that name it), a node the fabric does not hold
  ``hidden node`` (fail-closed); switches are
  fabric-wide, always named; a template is rendered slot by slot (never parsed back from its message), its
  own words and any other text relabelled (:func:`ibweb.access.relabel.relabel`) by the objects it names; jobs
  listed are the view's tenants' only.

:func:`alert_renderer` makes the renderer of a view on a fabric (the event store, the telemetry API, a
notification per recipient); the live feed makes its own from its filter
(:class:`ibweb.live.feed.view.FeedView`), so both render an alert alike. :func:`progress_message` is what a
view reads of the feed's progress messages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from ibweb.access.relabel import names_pattern, relabel

from .alert_objects import (
    GUID_FIELDS,
    LINK_ARROW,
    NAMED_FIELDS,
    PORT_KEY,
    FabricNames,
    gone_written,
    objects,
    slots,
    text_objects,
)
from .redaction import HIDDEN, HIDDEN_NODE, Redaction, hidden_host_names, host_label, redaction
from .view import View

__all__ = ["AlertRenderer", "alert_renderer", "progress_message", "JOBS_SUFFIX", "WITHHELD"]

#: How a message lists the jobs an alert names (the twin's deviations): stored apart, rendered per view.
JOBS_SUFFIX = "; jobs "
#: What a view below ``ALL`` reads of a text it cannot render (recorded without a topology, none known now).
WITHHELD = "details hidden: recorded before the fabric's topology was known"
_UNSET = object()
#: Live alerts one renderer keeps rendered (then starts again).
_ALERT_MEMO = 512


def _label(obj: Sequence, text: str) -> str:
    """What a hidden host ``obj`` reads as where it is written ``text``: a GUID ``hidden``, a port key
    ``host-<i>/<port>``, a name ``host-<i>`` (a host of the fabric) or ``hidden node`` (any other)."""
    present = obj[0] >= 0 and len(obj) >= 3
    key = PORT_KEY.fullmatch(text)
    if key is not None:
        return (host_label(obj[0]) if present else HIDDEN) + key.group(1) if key.group(1) else HIDDEN
    return host_label(obj[0]) if present else HIDDEN_NODE


class AlertRenderer:
    """How one view renders what alerts name.

    ``shown``: the view's :class:`~.redaction.Redaction`; ``names``: the fabric the live alerts are about
    (:meth:`alert`, :meth:`text`; none: every node unknown); ``fallback``: ``{name: label}`` of every host of the
    fabric the view may not name, for texts whose hosts were not resolved (``None``: none known), read once.
    One per request or feed view: it keeps the compiled patterns of the names it relabels and the live alerts
    it rendered.
    """

    def __init__(self, shown: Redaction, names: FabricNames | None = None,
                 fallback: Callable[[], dict[str, str] | None] | None = None) -> None:
        self.shown = shown
        self.names = names if names is not None else FabricNames(None)
        self._fallback, self._fallback_labels = fallback, _UNSET
        self._patterns: dict[frozenset[str], re.Pattern] = {}
        self._alerts: dict[str, dict] = {}

    @property
    def shows_all(self) -> bool:
        """Whether this view names every host and job (``ALL``)."""
        return self.shown.shows_all

    @property
    def hides_hosts(self) -> bool:
        """Whether this view may not name some hosts (below ``ALL``)."""
        return self.shown.host_guids is not None

    def shows_job(self, tenant: str | None) -> bool:
        """Whether a job of ``tenant`` (slug or name; ``None``: unknown) is shown."""
        return self.shown.shows_job(tenant)

    # ------------------------------------------------------------ objects
    def hides(self, obj: Sequence) -> bool:
        """Whether this view may not name host object ``obj`` (:mod:`.alert_objects`)."""
        guids = self.shown.host_guids
        if guids is None:
            return False
        if obj[0] < 0:  # gone from the fabric: named to the views of its tenants then, if it recorded them
            tenants = self.shown.tenants
            return not (len(obj) >= 4 and tenants is not None and isinstance(obj[3], list)
                        and any(isinstance(t, str) and t in tenants for t in obj[3]))
        return len(obj) < 3 or not obj[2] or int(obj[2], 16) not in guids

    def labels(self, objs: Iterable[Sequence]) -> dict[str, str]:
        """``{as written: label}`` of the objects this view may not name (names, GUIDs, port keys)."""
        out: dict[str, str] = {}
        for obj in objs:
            if not self.hides(obj):
                continue
            written = [obj[1], *([obj[2]] if len(obj) >= 3 and obj[2] else []), *(obj[4] if len(obj) >= 5 else [])]
            out.update((w, _label(obj, w)) for w in written if isinstance(w, str) and w)
        return out

    def _relabel(self, text: str, labels: dict[str, str]) -> str:
        if not labels or not text:
            return text
        key = frozenset(labels)
        pattern = self._patterns.get(key)
        if pattern is None:
            if len(self._patterns) >= 256:
                self._patterns.clear()
            pattern = self._patterns[key] = names_pattern(key)
        return relabel(text, labels, pattern)

    def _slot(self, slot) -> str:
        if isinstance(slot, str):  # a switch: fabric-wide
            return slot
        return _label(slot, slot[1]) if self.hides(slot) else slot[1]

    def template(self, text: str, slot_objects: Sequence, objs: Iterable[Sequence]) -> str | None:
        """Template ``text`` (``{0}``...) with each slot as this view reads its object, its own words relabelled by
        ``objs``; ``None`` when it is not a template of these slots."""
        try:
            return self._relabel(text, self.labels(objs)).format(*(self._slot(s) for s in slot_objects))
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):
            return None

    # ------------------------------------------------------------ live alerts (the fabric at hand)
    def text(self, text: str) -> str:
        """A free text (no parts known: a routing warning, a failure) relabelled by every host it names."""
        if not self.hides_hosts or not isinstance(text, str):
            return text
        return self._relabel(text, self.labels(text_objects(text, self.names)))

    def _written(self, text: str, gone: dict[str, list] | None = None) -> str:
        """A GUID or port key field as this view reads it (unknown, or not a GUID: ``hidden``); ``gone``: the hosts
        the alert's template names that the fabric no longer holds (:func:`~.alert_objects.gone_written`)."""
        if not PORT_KEY.fullmatch(text):
            return HIDDEN
        obj = self.names.by_guid(text)
        if obj is not None and obj[0] < 0 and gone:
            obj = gone.get(text.lower(), obj)
        return text if obj is None or not self.hides(obj) else _label(obj, text)

    def _end(self, end: str, gone: dict[str, list] | None = None) -> str:
        """One end of a node or port field (``"name"``, ``"name port 3"``) with its node as this view reads it."""
        if PORT_KEY.fullmatch(end):
            return self._written(end, gone)
        name, sep, port = end.rpartition(" port ") if " port " in end else (end, "", "")
        if not name:
            return end
        obj = self.names.by_name(name)
        if obj is not None and obj[0] < 0 and gone:
            obj = gone.get(name, obj)
        return f"{name if obj is None or not self.hides(obj) else _label(obj, name)}{sep}{port}"

    def _sees_gone(self, g) -> bool:
        """Whether this view names ``g``, a node of a template gone from the fabric (a switch, or a host of one of
        its tenants when it left)."""
        if not isinstance(g, dict):
            return False
        tenants = g.get("tenants") if isinstance(g.get("tenants"), list) else []
        return g.get("switch") is True or any(isinstance(t, str) and t in (self.shown.tenants or ()) for t in tenants)

    def alert(self, alert: dict) -> dict:
        """A live ``alert`` (about the fabric of :attr:`names`) as this view reads it: its node and port fields end
        by end, its GUIDs, the objects of its template (``gone``) this view may name, its message rendered from
        its template (else relabelled) and its other texts relabelled."""
        if not self.hides_hosts:
            return alert
        key = repr(alert)  # the same alerts come every tick: rendered once while they last
        done = self._alerts.get(key)
        if done is None:
            if len(self._alerts) >= _ALERT_MEMO:
                self._alerts.clear()
            done = self._alerts[key] = self._render(alert)
        return dict(done)

    def _render(self, alert: dict) -> dict:
        template = slots(alert, self.names)
        objs = objects(alert, self.names, template)
        gone = gone_written(template)
        out = {}
        for k, v in alert.items():
            if k in NAMED_FIELDS and isinstance(v, str):
                out[k] = LINK_ARROW.join(self._end(end, gone) for end in v.split(LINK_ARROW))
            elif k in ("guid", "key") and isinstance(v, str):
                out[k] = self._written(v, gone)
            elif k in ("hosts", "guids") and isinstance(v, list):
                out[k] = [self._written(g, gone) if isinstance(g, str) else HIDDEN for g in v]
            elif k == "gone":
                out[k] = [g for g in v if self._sees_gone(g)] if isinstance(v, list) else []
            else:
                out[k] = v
        labels = self.labels(objs)
        rendered = self.template(alert["text"], template, objs) if template is not None else None
        for k, v in out.items():
            if k in NAMED_FIELDS or k in GUID_FIELDS or k == "text" or not isinstance(v, str):
                continue
            if k == "message":
                out[k] = rendered if rendered is not None else self._relabel(v, labels)
            else:
                out[k] = self._relabel(v, {**labels, **self.labels(text_objects(v, self.names))})
        return out

    # ------------------------------------------------------------ stored alerts (their objects recorded)
    def _fallback_of(self) -> dict[str, str] | None:
        if self._fallback_labels is _UNSET:
            self._fallback_labels = self._fallback() if self._fallback is not None else None
        return self._fallback_labels

    def stored(self, kind: str, message: str, objs: Sequence, parts: Mapping | None = None,
               jobs: Sequence = (), resolved: bool = True, fields: Sequence[str] = ()) -> tuple[str, list[str]]:
        """A stored alert's message and subject ``fields`` (an object id, a node) as this view reads them.

        ``objs``: the host objects recorded with it; ``parts``: its template as recorded (``{"text", "slots"}``;
        empty for rows stored before parts were: their message was resolved against their template when
        recorded, so it is relabelled by ``objs`` like a free text); ``jobs``: ``[[id, tenant], ...]`` it lists,
        those of the view's tenants appended. ``resolved`` false (recorded without the fabric's topology): below
        ``ALL``, every host of the fabric the view may not name is relabelled, or the text withheld when no
        topology is known.
        """
        labels = self.labels(objs)
        text = None
        if parts and self.hides_hosts and isinstance(parts.get("text"), str) and isinstance(parts.get("slots"), list):
            text = self.template(parts["text"], parts["slots"], objs)
        message = text if text is not None else self._relabel(message, labels)
        shown = [str(job) for job, tenant in jobs or [] if self.shows_job(tenant)]
        if shown:
            message += JOBS_SUFFIX + ", ".join(shown[:5])
        fields = [labels.get(f, self._relabel(f, labels)) for f in fields]
        if not resolved and not self.shows_all:
            fallback = self._fallback_of()
            if fallback is None:
                return f"{kind.replace('_', ' ')}: {WITHHELD}", ["" for _ in fields]
            message, fields = relabel(message, fallback), [relabel(f, fallback) for f in fields]
        return message, fields


def alert_renderer(view: View, fabric, topology=None) -> AlertRenderer:
    """The :class:`AlertRenderer` of ``view`` on ``fabric`` (a row): the hosts it names are those of
    :func:`~.redaction.redaction` (the feed's rule); ``topology``: the engine fabric live alerts are about."""
    return AlertRenderer(redaction(view, fabric, topology), FabricNames(topology),
                         lambda: hidden_host_names(view, fabric, topology))


def progress_message(view: View, payload: dict) -> dict:
    """A feed ``progress`` payload as ``view`` sees it.

    Below ``ALL`` an analysis that ended says only its status: a what-if's summary names jobs
    (the worst one) and a failure's message may name hosts; those views read the result from
    the API, redacted. Running steps, an eBB's result and the engine's progress are fabric-wide.
    """
    if view.sees_all or payload.get("task") != "analysis" or payload.get("status") == "running":
        return payload
    if payload.get("kind") == "ebb" and payload.get("status") == "done":
        return payload
    return {**payload, "message": f"analysis {payload.get('status')}"}
