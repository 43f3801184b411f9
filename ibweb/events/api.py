"""REST API of a fabric's events: list with filters, detail, acknowledge, comment, and a summary.

Routes (under ``/api/fabrics/``)::

    fabrics/<slug>/events/                    GET: filters of :mod:`ibweb.events.filtersets`, limit/offset
    fabrics/<slug>/events/summary/            GET: active events by severity, unacknowledged count
    fabrics/<slug>/events/<id>/               GET: one event with its comments
    fabrics/<slug>/events/<id>/acknowledge/   POST {"acknowledged": true|false, "comment": "..."} (events.change_event)
    fabrics/<slug>/events/<id>/comments/      POST {"text": "..."} (events.add_eventcomment)

Every answer follows :mod:`ibweb.events.visibility` (the tenant rules of the feed), rendered by the feed's
renderer (:func:`ibweb.access.alert_renderer`).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from ibweb.access import AlertRenderer, Level, View, alert_renderer, view_of
from ibweb.fabrics.models import Fabric
from ibweb.http.json_input import JSONField

from .choices import Severity
from .filtersets import EventFilterBackend, EventFilterSet
from .models import Event, EventComment
from .visibility import comments_shown, redact, visible_events

__all__ = ["event_payload", "EventsView", "EventListView", "EventDetailView", "EventAcknowledgeView",
           "EventCommentView", "EventSummaryView", "acknowledge", "add_comment", "EventPagination", "MAX_LIMIT"]


def map_url(fabric: Fabric, event: Event, shown: dict) -> str:
    """The live map of the fabric focused on what the event is about."""
    base = f"/fabrics/{fabric.slug}/"
    if event.link is not None:
        return f"{base}?focus=link:{event.link}"
    if event.object_type == "job" and event.job:
        return f"{base}?focus=job:{event.job}"
    if shown["node"]:
        return f"{base}?focus=node:{shown['node']}"
    return base


def event_payload(event: Event, view: View, renderer: AlertRenderer, comments: bool = False) -> dict:
    """The JSON of one event as this view may see it (its comments only where :func:`comments_shown`)."""
    readable = comments_shown(event, renderer)
    notes = list(event.comments.all()) if comments and readable else []
    shown = redact(event, renderer, tuple(c.text for c in notes))
    now = datetime.now(tz=UTC)
    out = {"id": event.pk, "kind": event.kind, "severity": event.severity, "object_type": event.object_type,
           "object_id": shown["object_id"], "link": event.link, "node": shown["node"], "job": event.job,
           "tenant": event.tenant.slug if event.tenant_id else None, "message": shown["message"],
           "first_seen": event.first_seen.isoformat(), "last_seen": event.last_seen.isoformat(),
           "count": event.ticks(now, event.fabric.tick_s), "duration_s": round(event.duration_s(now), 3),
           "occurrence": event.occurrence,
           "active": event.active,
           "cleared_at": event.cleared_at.isoformat() if event.cleared_at else None,
           "acknowledged": event.acknowledged_at is not None,
           "acknowledged_by": event.acknowledged_by.get_username() if event.acknowledged_by_id else None,
           "acknowledged_at": event.acknowledged_at.isoformat() if event.acknowledged_at else None,
           "map_url": map_url(event.fabric, event, shown)}
    if view.level == Level.ALL:
        out["details"] = event.details
    if comments:
        out["comments"] = [{"user": c.username, "time": c.time.isoformat(), "text": text}
                           for c, text in zip(notes, shown["texts"], strict=False)]
    else:
        out["comments"] = getattr(event, "n_comments", None) if readable else 0
    return out


def acknowledge(event: Event, user, acknowledged: bool = True, comment: str = "") -> Event:
    """Acknowledge (or un-acknowledge) ``event`` as ``user``, with an optional comment."""
    with transaction.atomic():
        if acknowledged:
            event.acknowledged_by, event.acknowledged_at = user, datetime.now(tz=UTC)
        else:
            event.acknowledged_by, event.acknowledged_at = None, None
        event.save(update_fields=["acknowledged_by", "acknowledged_at"])
        if comment.strip():
            add_comment(event, user, comment)
    return event


def add_comment(event: Event, user, text: str) -> EventComment:
    text = text.strip()
    if not text:
        raise DjangoValidationError({"text": "write a comment"})
    if len(text) > 4000:
        raise DjangoValidationError({"text": "at most 4,000 characters"})
    return EventComment.objects.create(event=event, user=user, username=user.get_username(), text=text)


class CanViewEvents(BasePermission):
    """Reads need a view (:func:`ibweb.access.view_of`); writes a signed-in user (each write checks its permission)."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return view_of(request.user).may_view
        return bool(request.user and request.user.is_authenticated)


#: The most events one page holds, whatever ``limit`` asks.
MAX_LIMIT = 500


class EventPagination(LimitOffsetPagination):
    """Limit/offset pages of at most :data:`MAX_LIMIT` events."""

    max_limit = MAX_LIMIT


class EventsView(APIView):
    """A fabric's events as the requesting user may see them: the base of every view of them (also other apps')."""

    permission_classes = [CanViewEvents]

    def scope(self, request, slug: str):
        view = view_of(request.user)
        if not view.may_view:
            raise PermissionDenied("log in to see events")
        fabric = get_object_or_404(Fabric.objects.restrict(request.user), slug=slug)
        return view, fabric, visible_events(view, fabric).select_related("tenant", "acknowledged_by", "fabric")

    def one(self, request, slug: str, pk: int):
        view, fabric, qs = self.scope(request, slug)
        event = qs.filter(pk=pk).first()
        if event is None:
            raise NotFound(f"no event {pk} of fabric {slug}")
        return view, fabric, event


class EventSchema(serializers.Serializer):
    """What :func:`event_payload` answers per event, for the OpenAPI schema (``details`` only at the ``ALL`` level)."""

    id = serializers.IntegerField()
    kind = serializers.CharField()
    severity = serializers.ChoiceField(choices=Severity.choices)
    object_type = serializers.CharField()
    object_id = serializers.CharField()
    link = serializers.IntegerField(allow_null=True)
    node = serializers.CharField(allow_null=True)
    job = serializers.CharField()
    tenant = serializers.CharField(allow_null=True)
    message = serializers.CharField()
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    count = serializers.IntegerField(help_text="ticks it was raised (from wall time and the fabric's tick)")
    duration_s = serializers.FloatField(help_text="seconds from its first tick to the one that cleared it (or now)")
    occurrence = serializers.IntegerField()
    active = serializers.BooleanField()
    cleared_at = serializers.DateTimeField(allow_null=True)
    acknowledged = serializers.BooleanField()
    acknowledged_by = serializers.CharField(allow_null=True)
    acknowledged_at = serializers.DateTimeField(allow_null=True)
    map_url = serializers.CharField()
    details = JSONField(kind=dict, required=False)
    comments = serializers.IntegerField(allow_null=True, help_text="how many (the detail lists them)")


class EventListView(EventsView, ListAPIView):
    """The fabric's events, newest first, filtered by :class:`~ibweb.events.filtersets.EventFilterSet`.

    The rows are scoped to what the user may see first (:meth:`scope`), then filtered.
    """

    queryset = Event.objects.none()  # the model, for the OpenAPI schema; the rows come from scope()
    serializer_class = EventSchema  # the schema's; the rows are answered by event_payload
    filter_backends = [EventFilterBackend]
    filterset_class = EventFilterSet
    pagination_class = EventPagination

    def list(self, request, slug: str):
        view, fabric, qs = self.scope(request, slug)
        self.access, self.hidden = view, alert_renderer(view, fabric)  # what EventFilterBackend hands the FilterSet
        page = self.paginate_queryset(self.filter_queryset(qs.annotate(n_comments=Count("comments"))))
        return self.get_paginated_response([event_payload(e, view, self.hidden) for e in page])


@extend_schema(responses=EventSchema)
class EventDetailView(EventsView):
    def get(self, request, slug: str, pk: int):
        view, fabric, event = self.one(request, slug, pk)
        return Response(event_payload(event, view, alert_renderer(view, fabric), comments=True))


class _Body(serializers.Serializer):
    acknowledged = serializers.BooleanField(default=True)
    comment = serializers.CharField(required=False, allow_blank=True, max_length=4000, default="")


@extend_schema(request=_Body, responses=EventSchema)
class EventAcknowledgeView(EventsView):
    """Acknowledge an event (operators: ``events.change_event``)."""

    def post(self, request, slug: str, pk: int):
        view, fabric, event = self.one(request, slug, pk)
        if not request.user.has_perm("events.change_event"):
            raise PermissionDenied("acknowledging events needs the operator role")
        body = _Body(data=request.data)
        body.is_valid(raise_exception=True)
        acknowledge(event, request.user, body.validated_data["acknowledged"], body.validated_data["comment"])
        return Response(event_payload(event, view, alert_renderer(view, fabric), comments=True))


class _Comment(serializers.Serializer):
    text = serializers.CharField(max_length=4000)


@extend_schema(request=_Comment, responses={201: EventSchema})
class EventCommentView(EventsView):
    """Comment on an event (``events.add_eventcomment``)."""

    def post(self, request, slug: str, pk: int):
        view, fabric, event = self.one(request, slug, pk)
        if not request.user.has_perm("events.add_eventcomment"):
            raise PermissionDenied("commenting on events needs the events.add_eventcomment permission")
        body = _Comment(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            add_comment(event, request.user, body.validated_data["text"])
        except DjangoValidationError as exc:
            raise ValidationError(exc.message_dict) from None
        return Response(event_payload(event, view, alert_renderer(view, fabric), comments=True),
                        status=201)


def summary(qs) -> dict:
    """Active events by severity and the unacknowledged ones, of an event queryset."""
    counts = qs.aggregate(critical=Count("pk", filter=Q(active=True, severity="critical")),
                          warning=Count("pk", filter=Q(active=True, severity="warning")),
                          info=Count("pk", filter=Q(active=True, severity="info")),
                          unacknowledged=Count("pk", filter=Q(active=True, acknowledged_at__isnull=True)))
    return {"active": {k: counts[k] for k in ("critical", "warning", "info")},
            "unacknowledged": counts["unacknowledged"]}


@extend_schema(responses=OpenApiTypes.OBJECT)
class EventSummaryView(EventsView):
    def get(self, request, slug: str):
        view, fabric, qs = self.scope(request, slug)
        return Response({"fabric": fabric.slug, **summary(qs)})
