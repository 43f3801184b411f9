"""The notifications page (``/notifications/``): channels (with "send a test"), rules, silences and maintenance
windows, deliveries with their newest attempts (``ATTEMPTS_SHOWN`` each; the API's ``deliveries/<id>/`` has them all),
failing channels first. Read here, per the user's view, in a number of queries that does not grow with the channels;
every change is a call of the notifications API (``/api/notify/``) made by the page's module
(``frontend/src/pages/notifications.js``), so the page and the API decide alike."""

from __future__ import annotations

import json
from datetime import timedelta

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Count, OuterRef, Prefetch, Subquery
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ibweb.access import view_of, visible_tenants

from . import clock
from .access import may_see_page, may_silence, may_write_channels
from .models import RULE_SENDS, SEVERITIES, Attempt, Channel, Delivery, Rule, Silence
from .senders import KINDS

__all__ = ["notifications_page", "target_of", "DELIVERIES_SHOWN", "ATTEMPTS_SHOWN"]

#: Deliveries listed, newest first.
DELIVERIES_SHOWN = 50
#: Attempts listed per delivery, the newest (the page says how many there are in all).
ATTEMPTS_SHOWN = 10
#: Silences that ended this long ago are still listed.
ENDED_SHOWN = timedelta(days=7)
#: What each kind's configuration looks like (the form's placeholder).
EXAMPLES = {
    "alertmanager": '{"url": "http://alertmanager:9093"}',
    "webhook": '{"template": "ibweb"}   secrets: {"url": "https://hooks.example/...", "secret": "16+ characters"}',
    "email": '{"recipients": ["noc@example.com"], "subject_prefix": "[ibweb]"}',
    "syslog": '{"host": "siem.example", "port": 514, "transport": "tcp"}',
}


def target_of(channel: Channel) -> str:
    """Where a channel sends, as its configuration shows it (never a secret: a webhook's URL is one)."""
    config = channel.config or {}
    if channel.kind == "syslog":
        return f"{config.get('host', '?')}:{config.get('port', 514)} ({config.get('transport', 'udp')})"
    if channel.kind == "email":
        recipients = config.get("recipients") or []
        return ", ".join(recipients) if isinstance(recipients, list) else str(recipients)
    if config.get("url"):
        return str(config["url"])
    return "URL set (secret)" if "url" in (channel.secrets or {}) else "no URL"


def _matchers(row) -> str:
    parts = [f"{field} {', '.join(getattr(row, field))}" for field in
             ("kinds", "fabrics", "clusters", "tenants", "switches", "ports", "hosts") if getattr(row, field)]
    return "; ".join(parts) or "everything"


@require_GET
def notifications_page(request):
    """The page, for users who see tenants (:func:`ibweb.notify.access.may_see_page`)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not may_see_page(request.user):
        raise PermissionDenied("notifications are their tenants' or the operators': tenant users and operators only")
    view = view_of(request.user)
    now = clock.now()
    newest = (Delivery.objects.filter(channel=OuterRef("pk")).exclude(state=Delivery.State.SILENCED)
              .order_by("-pk").values("pk")[:1])
    channels = list(Channel.objects.restrict(request.user).select_related("tenant")
                    .annotate(last_pk=Subquery(newest)).order_by("name", "pk"))
    lasts = Delivery.objects.only("pk", "state", "detail", "sent_at").in_bulk(
        [ch.last_pk for ch in channels if ch.last_pk])  # every channel's newest delivery: one query
    for ch in channels:
        ch.target = target_of(ch)
        ch.config_json = json.dumps(ch.config or {})
        ch.secret_names = sorted(ch.secrets or {})
        ch.last = lasts.get(ch.last_pk)
    rules = list(Rule.objects.restrict(request.user).select_related("tenant").prefetch_related("channels")
                 .order_by("name", "pk"))
    for rule in rules:
        rule.matched = _matchers(rule)
    silences = list(Silence.objects.restrict(request.user).filter(ends_at__gt=now - ENDED_SHOWN)
                    .order_by("-ends_at", "-pk")[:100])
    for s in silences:
        s.matched = _matchers(s)
        s.state = "upcoming" if s.starts_at > now else "active" if s.ends_at > now else "ended"
    recent = Attempt.objects.order_by("-at", "-pk")[:ATTEMPTS_SHOWN]  # per delivery (a window function)
    deliveries = (Delivery.objects.restrict(request.user).select_related("channel")
                  .annotate(attempt_count=Count("attempt_rows"))
                  .prefetch_related(Prefetch("attempt_rows", queryset=recent, to_attr="recent_attempts")))
    chosen = request.GET.get("channel", "")
    if chosen.isdigit():
        deliveries = deliveries.filter(channel_id=int(chosen))
    state = request.GET.get("state", "")
    if state in Delivery.State.values:
        deliveries = deliveries.filter(state=state)
    deliveries = list(deliveries.order_by("-pk")[:DELIVERIES_SHOWN])
    for d in deliveries:
        first = (d.notices or [{}])[0] if d.notices else {}
        d.summary = first.get("summary", "") if isinstance(first, dict) else ""
        d.more = max(0, len(d.notices or []) - 1)
        d.recent_attempts.reverse()  # oldest of the newest first
    may_write = may_write_channels(request.user)
    owners = list(visible_tenants(view).order_by("name")) if may_write else []
    context = {
        "nav": "notifications", "channels": channels, "rules": rules, "silences": silences,
        "deliveries": deliveries, "failing": [c for c in channels if c.failing_since and c.enabled],
        "kinds": list(KINDS), "examples": EXAMPLES, "severities": SEVERITIES, "rule_sends": RULE_SENDS,
        "owners": owners, "operators_own": view.sees_all, "may_write": may_write,
        "may_silence": may_silence(request.user), "may_test": request.user.has_perm("notify.change_channel"),
        "states": Delivery.State.values, "chosen_channel": chosen, "chosen_state": state,
        "queued": Delivery.objects.restrict(request.user).filter(state=Delivery.State.QUEUED).count(),
        "now": now, "sees_all": view.sees_all, "attempts_shown": ATTEMPTS_SHOWN,
    }
    return render(request, "notify/notifications.html", context)
