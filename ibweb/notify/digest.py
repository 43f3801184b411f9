"""The daily digest (issue 38): what changed in the fabrics' health in a day, sent once a day through the channels of
the rules that ask for it (``Rule.sends`` ``digest`` or ``both``).

A digest covers the 24 hours up to the day's digest hour (``IBWEB_NOTIFY_DIGEST_HOUR``, UTC, default 7): per fabric,
the events (conditions and alerts: link health, validation, topology) opened and closed in that window and those
still open at its end, counted by kind, the most severe listed. Each channel's digest is made for its recipient: the
events its view may see (:meth:`~ibweb.access.querysets.RestrictedQuerySet.restrict`, a tenant's channel only its
tenant's and the fabric-wide ones), each message rendered by the one alert renderer for that view, as the channel's
live notices are; the rule's matchers and least severity pick the events. Alertmanager channels get no digest (it
is no alert).

Each fabric's section also lists the validation findings new and resolved since the last day's digest was sent
(:func:`ibweb.live.validation.store.since_sent`; the first time, since the report's daily baseline), as the
recipient's view reads them (hosts it may not see relabelled, P_Keys of partitions it does not see hidden:
:func:`ibweb.live.validation.answer.shown_changes`); a rule's matchers read a finding as kind ``validation``, its
severity ``error`` as ``critical``. Once the day's digests are queued the newest reports become the next baseline
(a digest sent now from the API moves nothing).

:func:`send_due` sends the day's digests once (its idempotency key is the window's: Celery beat's
``notify-digest`` entry, or the periodic pass of the embedded default, may call it any number of times);
:func:`send_digest` with ``manual`` sends one now (the API's ``rules/<id>/digest/``), over the last 24 hours.
"""

from __future__ import annotations

import os
from collections import Counter
from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.db.models import Q

from ibweb.access import visible_fabrics
from ibweb.db.retry import retry_locked
from ibweb.events.models import Event
from ibweb.fabrics.models import Fabric
from ibweb.live.validation import store as validation_store
from ibweb.live.validation.answer import shown_changes

from . import clock
from .dispatcher import delivery_key
from .matching import EventFacts, facts_of, matches
from .models import Channel, Delivery, Rule
from .render import Renderers, channel_view
from .senders.base import Notice, notice_to_dict

__all__ = ["digest_hour", "window", "digest_notice", "send_digest", "send_due", "validation_changes",
           "NO_DIGEST_KINDS", "VALIDATION_KIND"]

#: Channel kinds that get no digest.
NO_DIGEST_KINDS = ("alertmanager",)
#: Events listed per section of a fabric (the counts cover them all).
LISTED = 20
#: The kind a rule's matchers read for a validation finding (a rule naming kinds gets findings if it names this one).
VALIDATION_KIND = "validation"
#: A validation finding's severity as an event's.
_FINDING_SEVERITY = {"error": "critical", "warning": "warning", "info": "info"}


def digest_hour() -> int:
    """The UTC hour at which a day's digest is due (``IBWEB_NOTIFY_DIGEST_HOUR``, 0-23, default 7)."""
    text = os.environ.get("IBWEB_NOTIFY_DIGEST_HOUR", "7")
    try:
        hour = int(text)
    except ValueError:
        hour = -1
    if not 0 <= hour <= 23:
        raise ValueError(f"IBWEB_NOTIFY_DIGEST_HOUR={text!r}: an hour of the day, 0 to 23 (UTC)")
    return hour


def window(now: datetime) -> tuple[datetime, datetime]:
    """``(start, end)``: the 24 hours up to the newest digest hour at or before ``now``."""
    end = now.replace(hour=digest_hour(), minute=0, second=0, microsecond=0)
    if end > now:
        end -= timedelta(days=1)
    return end - timedelta(days=1), end


def _opened_at(e: Event) -> datetime:
    return e.raised_at or e.first_seen


def _open_at(e: Event, end: datetime) -> bool:
    """Whether ``e`` was open at ``end``: opened before it and not cleared by then (cleared since, or still open: an
    event open through the window and cleared after its end counts; one (re)opened after the end does not)."""
    return _opened_at(e) < end and (e.cleared_at is None or e.cleared_at >= end)


def _line(e: Event, renderer, when: datetime, verb: str) -> str:
    message, _ = renderer.stored(e.kind, e.message, e.hosts or [], e.parts, e.jobs or [], e.resolved, ())
    first = message.splitlines()[0] if message else e.kind
    return f"  {e.severity:<8} {e.kind}: {first} ({verb} {when:%Y-%m-%d %H:%M})"


def _section(title: str, rows: list[str]) -> list[str]:
    if not rows:
        return []
    more = [f"  ... and {len(rows) - LISTED} more"] if len(rows) > LISTED else []
    return [f" {title}:", *rows[:LISTED], *more]


def validation_changes(fabric_ids) -> dict[int, tuple[dict, dict]]:
    """Per fabric of ``fabric_ids``, what its validation report changed since the last digest was sent
    (:func:`ibweb.live.validation.store.since_sent`: ``(changes, newest report)``); fabrics without are left out."""
    out = {}
    for fid in fabric_ids:  # one cache read or two per fabric
        got = validation_store.since_sent(fid)
        if got is not None:
            out[fid] = got
    return out


def _finding_facts(f: dict, fabric) -> EventFacts:
    """What a rule's matchers read of a validation finding: fabric-wide (no tenant), kind :data:`VALIDATION_KIND`."""
    return EventFacts(fabric=fabric.slug, cluster=fabric.cluster.slug if fabric.cluster_id else "",
                      kind=VALIDATION_KIND, severity=_FINDING_SEVERITY.get(f.get("severity"), "warning"),
                      tenant="", switch="", port="", hosts=tuple(f.get("hosts") or ()))


def _validation_lines(view, fabric, rule: Rule, changes: dict) -> list[str]:
    """The fabric's validation section for ``view``: the findings new and resolved since the last digest that
    ``rule`` matches, rendered through the access layer (:func:`ibweb.live.validation.answer.shown_changes`)."""
    keep = {k: [i for i, f in enumerate(changes.get(k, ()))  # the day's few changed findings
                if matches(rule, _finding_facts(f, fabric), rule.min_severity)] for k in ("new", "resolved")}
    if not keep["new"] and not keep["resolved"]:
        return []
    shown = shown_changes(view, fabric, changes)
    if shown is None:  # no published fabric to relabel against: nothing named
        return []

    def row(f: dict, verb: str) -> str:
        first = (f.get("message") or "").splitlines()[0] if f.get("message") else ""
        return f"  {verb:<8} {f.get('severity', ''):<8} {f.get('check', '')}: {f.get('subject', '')}: {first}"

    new = [row(shown["new"][i], "new") for i in keep["new"]]
    resolved = [row(shown["resolved"][i], "resolved") for i in keep["resolved"]]
    since = datetime.fromtimestamp(changes["since"], tz=UTC)
    return [f" validation since {since:%Y-%m-%d %H:%M} UTC: {len(new)} new, {len(resolved)} resolved",
            *_section("validation findings new", new), *_section("validation findings resolved", resolved)]


def digest_notice(channel: Channel, rule: Rule, start: datetime, end: datetime, renderers: Renderers,
                  key: str, validation: dict[int, tuple[dict, dict]] | None = None) -> Notice:
    """The digest of ``start`` to ``end`` for ``channel``'s recipient, the events ``rule`` matches, and per fabric the
    validation findings new and resolved since the last digest (``validation``: :func:`validation_changes`; None:
    read now), rendered for the recipient's view as the events are."""
    view = channel_view(channel)
    fabrics = {f.pk: f for f in visible_fabrics(view).select_related("cluster")}
    events = (Event.objects.filter(fabric_id__in=list(fabrics))
              .filter(Q(raised_at__gte=start, raised_at__lt=end) | Q(raised_at__isnull=True, first_seen__gte=start,
                                                                   first_seen__lt=end)
                      | Q(cleared_at__gte=start, cleared_at__lt=end)
                      | Q(Q(cleared_at__isnull=True) | Q(cleared_at__gte=end), first_seen__lt=end))
              .restrict(view).select_related("tenant").order_by("fabric_id", "-rank", "first_seen", "pk"))
    per_fabric: dict[int, dict[str, list]] = {}
    for e in events:
        fabric = fabrics[e.fabric_id]
        e.fabric = fabric
        facts = facts_of(e, fabric.slug, fabric.cluster.slug if fabric.cluster_id else "",
                         e.tenant.slug if e.tenant_id else "")
        if not matches(rule, facts, rule.min_severity):
            continue
        parts = per_fabric.setdefault(e.fabric_id, {"opened": [], "closed": [], "open": []})
        if start <= _opened_at(e) < end:
            parts["opened"].append(e)
        if e.cleared_at is not None and start <= e.cleared_at < end:
            parts["closed"].append(e)
        if _open_at(e, end):
            parts["open"].append(e)
    if validation is None:
        validation = validation_changes(list(fabrics))
    checked = {fid: _validation_lines(view, fabrics[fid], rule, validation[fid][0])
               for fid in validation if fid in fabrics}
    checked = {fid: rows for fid, rows in checked.items() if rows}
    lines = [f"ibweb daily digest, {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC"]
    totals = Counter()
    for fid in sorted({*per_fabric, *checked}, key=lambda f: fabrics[f].name):
        parts, fabric = per_fabric.get(fid, {"opened": [], "closed": [], "open": []}), fabrics[fid]
        renderer = renderers.of(view, fabric)
        counts = {k: len(v) for k, v in parts.items()}
        totals.update(counts)
        lines += ["", f"{fabric.name} ({fabric.slug}): {counts['opened']} opened, {counts['closed']} closed, "
                      f"{counts['open']} open at the end"]
        kinds = Counter((e.kind, "opened") for e in parts["opened"]) + Counter((e.kind, "closed")
                                                                            for e in parts["closed"])
        by_kind = sorted({k for k, _ in kinds})
        if by_kind:
            lines.append(" by kind: " + "; ".join(f"{k} {kinds[(k, 'opened')]} opened / {kinds[(k, 'closed')]} "
                                                  f"closed" for k in by_kind))
        lines += _section("still open", [_line(e, renderer, e.first_seen, "since") for e in parts["open"]])
        lines += _section("opened", [_line(e, renderer, _opened_at(e), "at") for e in parts["opened"]])
        lines += _section("closed", [_line(e, renderer, e.cleared_at, "at") for e in parts["closed"]])
        lines += checked.get(fid, [])
    if not per_fabric and not checked:
        lines += ["", "Nothing changed: no event opened or closed, none open, no validation finding new or resolved."]
    summary = (f"ibweb daily digest {end:%Y-%m-%d}: {totals['opened']} opened, {totals['closed']} closed, "
               f"{totals['open']} open")
    return Notice(key=key, state="firing", kind="digest", severity="info", summary=summary, body="\n".join(lines),
                  labels={"kind": "digest", "severity": "info"}, starts_at=end, annotations={"window_start":
                                                                                              start.isoformat()})


def _pairs(rules) -> list[tuple[Rule, Channel]]:
    out = []
    for rule in rules:
        for ch in rule.channels.all():
            mine = not rule.tenant_id or ch.tenant_id == rule.tenant_id
            if ch.enabled and ch.kind not in NO_DIGEST_KINDS and mine:
                out.append((rule, ch))
    return out


def _queue(key: str, ch: Channel, rule: Rule, notice: Notice) -> tuple[Delivery, bool]:
    with transaction.atomic():
        return Delivery.objects.get_or_create(key=key, defaults=dict(
            channel=ch, status="firing", reason="digest", group=f"digest:{rule.pk}",
            notices=[notice_to_dict(notice)], state=Delivery.State.QUEUED))


def send_digest(now: datetime | None = None, rules=None, manual: bool = False) -> list[Delivery]:
    """Queue the digest of every digest rule's channels (or ``rules``'), and have them sent; the deliveries made.

    ``manual``: over the 24 hours up to ``now``, a new message each call; otherwise the window of :func:`window`,
    once (a delivery with its key exists: not again).
    """
    from .queue import kick

    now = now or clock.now()
    start, end = (now - timedelta(days=1), now) if manual else window(now)
    if rules is None:
        rules = Rule.objects.filter(enabled=True, sends__in=["digest", "both"])
    renderers = Renderers()
    made: list[Delivery] = []
    validation: dict[int, tuple[dict, dict]] | None = None
    for rule, ch in _pairs(rules.prefetch_related("channels") if hasattr(rules, "prefetch_related") else rules):
        stamp = f"{end:%Y%m%d%H%M%S}" + (f".{now.timestamp():.6f}" if manual else "")
        notice_key = f"ibweb-digest-{ch.pk}-{rule.pk}-{stamp}"
        key = delivery_key(ch.pk, "digest", [notice_key])
        if Delivery.objects.filter(key=key).exists():
            continue
        if validation is None:  # every fabric's changes read once for all the digests
            validation = validation_changes(Fabric.objects.values_list("pk", flat=True))
        notice = digest_notice(ch, rule, start, end, renderers, notice_key, validation)
        delivery, created = retry_locked(_queue, key, ch, rule, notice, what=f"digest of channel {ch.pk}")
        if created:
            made.append(delivery)
    if made and not manual and validation:  # the day's digests are out: the next compares with what they covered
        for fid, (_, newest) in validation.items():
            validation_store.mark_sent(fid, newest)
    kick({d.channel_id for d in made})
    return made


def send_due(now: datetime | None = None) -> list[Delivery]:
    """The day's digests, once: those of the newest window not sent yet (Celery beat, the periodic pass)."""
    return send_digest(now)
