"""The "Events and alerts" page of a fabric: filters, acknowledge and comment (forms), links to the map, and the
sections other apps add (:func:`page_sections`: the telemetry app's reference cabling)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.apps import apps
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.module_loading import import_string
from django.views.decorators.http import require_GET, require_POST

from ibweb.access import Level, alert_renderer, view_of, visible_tenants
from ibweb.fabrics.models import Fabric

from .api import acknowledge, add_comment, event_payload, summary
from .choices import Severity
from .durations import human_duration
from .health import write_failures
from .query import STATES, apply_filters, parse_filters
from .recorder import RETENTION_DAYS
from .visibility import visible_events

PAGE_SIZE = 50
#: The "time" choices of the filter bar: an age for ``since``.
WINDOWS = [("", "any time"), ("1h", "last hour"), ("24h", "last 24 hours"), ("7d", "last 7 days"),
           ("30d", "last 30 days")]


def page_sections(user, fabric) -> list[dict]:
    """What the apps above events add to a fabric's events page, in the order of ``INSTALLED_APPS``: each declares
    ``events_page_sections = ((template, dotted path of context(user, fabric) -> dict | None), ...)`` on its
    ``AppConfig``; a section whose context is None is not shown. The template reads its context as ``section``."""
    sections = []
    for config in apps.get_app_configs():  # a handful of apps
        for template, path in getattr(config, "events_page_sections", ()):
            context = import_string(path)(user, fabric)
            if context is not None:
                sections.append({**context, "template": template})
    return sections


def _scope(request, slug: str):
    view = view_of(request.user)
    if not view.may_view:
        return None
    fabric = get_object_or_404(Fabric.objects.restrict(request.user), slug=slug)
    return view, fabric


@require_GET
def events_page(request, slug: str):
    """Every event of the fabric the visitor may see, filtered and paginated."""
    scope = _scope(request, slug)
    if scope is None:
        return redirect_to_login(request.get_full_path())
    view, fabric = scope
    visible = visible_events(view, fabric)
    errors = {}
    try:
        filters = parse_filters(request.GET)
    except ValidationError as exc:
        errors = exc.message_dict
        filters = parse_filters({})
    hidden = alert_renderer(view, fabric)
    rows = apply_filters(visible.select_related("tenant", "acknowledged_by", "fabric")
                         .annotate(n_comments=Count("comments")).prefetch_related("comments"), filters, view, hidden)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    events = [{"event": e, "shown": (shown := event_payload(e, view, hidden, comments=True)),
               "lasted": human_duration(shown["duration_s"])} for e in page]
    tenants = visible_tenants(view)
    kinds = sorted(visible.order_by().values_list("kind", flat=True).distinct()[:200])
    keep = filters.as_params()
    if request.GET.get("since") and not errors.get("since"):
        keep["since"] = request.GET["since"]
    if request.GET.get("until") and not errors.get("until"):
        keep["until"] = request.GET["until"]
    context = {
        "fabric": fabric, "fabric_nav": fabric, "nav": "events", "page": page, "events": events,
        "summary": summary(visible), "filters": filters, "errors": errors, "severities": Severity.choices,
        "kinds": kinds, "tenants": tenants, "states": STATES, "windows": WINDOWS,
        "since": request.GET.get("since", ""), "until": request.GET.get("until", ""),
        "query": urlencode(keep), "back": request.get_full_path(), "show_tenants": view.level >= Level.TENANTS,
        "can_ack": request.user.has_perm("events.change_event"),
        "can_comment": request.user.has_perm("events.add_eventcomment"), "read_comments": view.sees_all,
        "retention_days": f"{RETENTION_DAYS:g}",
        "sections": page_sections(request.user, fabric),
        "write_failures": write_failures(fabric.pk) if view.sees_all else None,
    }
    return render(request, "events/events.html", context)


def _back(request, slug: str, pk: int):
    """Back to the list the form was sent from (same page and filters), at the event's row."""
    target = request.POST.get("next", "")
    if not target.startswith(f"/fabrics/{slug}/events/"):
        target = reverse("events:fabric-events", args=[slug])
    return redirect(f"{target.split('#')[0]}#event-{pk}")


def _event(request, slug: str, pk: int, permission: str):
    if not request.user.is_authenticated:
        return None
    scope = _scope(request, slug)
    if scope is None:
        raise Http404
    view, fabric = scope
    event = visible_events(view, fabric).filter(pk=pk).first()
    if event is None:
        raise Http404(f"no event {pk}")
    if not request.user.has_perm(permission):
        raise PermissionDenied(f"needs the {permission} permission")
    return event


@require_POST
def event_acknowledge(request, slug: str, pk: int):
    """Acknowledge (or, with ``acknowledged=0``, reopen) an event from the page."""
    event = _event(request, slug, pk, "events.change_event")
    if event is None:
        return redirect_to_login(request.get_full_path())
    done = request.POST.get("acknowledged", "1") != "0"
    acknowledge(event, request.user, done, request.POST.get("comment", ""))
    messages.success(request, f"Event {event.pk} {'acknowledged' if done else 'no longer acknowledged'}.")
    return _back(request, slug, event.pk)


@require_POST
def event_comment(request, slug: str, pk: int):
    """Add a comment to an event from the page."""
    event = _event(request, slug, pk, "events.add_eventcomment")
    if event is None:
        return redirect_to_login(request.get_full_path())
    try:
        add_comment(event, request.user, request.POST.get("text", ""))
    except ValidationError as exc:
        messages.error(request, "No comment added: " + "; ".join(exc.messages))
    else:
        messages.success(request, f"Comment added to event {event.pk}.")
    return _back(request, slug, event.pk)
