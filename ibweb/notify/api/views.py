"""The notifications API (``/api/notify/``).

Routes::

    channels/               GET list (a tenant's channels to its users, all to ALL); POST a channel
    channels/<id>/          GET, PUT, PATCH, DELETE (secrets written, never read: ``secrets_set`` names them)
    channels/<id>/test/     POST send a test notification now (recorded as a delivery with its attempt)
    rules/, rules/<id>/     which events go to which channels (a tenant's rules name its channels only)
    rules/<id>/digest/      POST send the rule's channels a digest of the last 24 hours now (ibweb.notify.digest)
    silences/, .../<id>/    silences and maintenance windows (ALL only)
    silences/<id>/expire/   POST end a silence now (and in the Alertmanagers it was pushed to): notify.change_silence
    silences/draft/         GET whether you may create silences; ``?event=<id>``: the matchers of one of that event
    deliveries/, .../<id>/  what was sent, queued or silenced (read only): a list gives each delivery's newest
                            ``ATTEMPTS_SHOWN`` attempts (as the page), one delivery all of them; both say how many
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, Prefetch
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from ibweb.auth.permissions import ViewerRead
from ibweb.events.models import Event

from .. import am_silences, clock
from ..digest import send_digest
from ..models import Attempt, Channel, Delivery, Rule, Silence
from ..silence_drafts import draft_of_event, may_silence
from ..testing import send_test
from ..views import ATTEMPTS_SHOWN
from .permissions import OperatorsChange, OperatorsWrite, TenantOwnedWrite, may_own
from .serializers import ChannelSerializer, DeliverySerializer, RuleSerializer, SilenceSerializer

__all__ = ["ChannelViewSet", "RuleViewSet", "SilenceViewSet", "DeliveryViewSet"]


class _TenantOwned(viewsets.ModelViewSet):
    permission_classes = [TenantOwnedWrite]

    def get_queryset(self):
        return self.queryset.model.objects.restrict(self.request.user).order_by("pk")

    def _owner(self, serializer) -> None:
        tenant = serializer.validated_data.get("tenant", getattr(serializer.instance, "tenant", None))
        if not may_own(self.request.user, tenant.pk if tenant else None):
            raise exceptions.PermissionDenied("you may manage your tenants' rows only")

    def perform_create(self, serializer) -> None:
        self._owner(serializer)
        serializer.save()

    def perform_update(self, serializer) -> None:
        self._owner(serializer)
        serializer.save()


class ChannelViewSet(_TenantOwned):
    queryset = Channel.objects.all()
    serializer_class = ChannelSerializer

    @extend_schema(request=None, responses=DeliverySerializer)
    @action(detail=True, methods=["post"])
    def test(self, request, pk=None, format=None):  # noqa: A002 - DRF format suffix
        """Send a test notification through this channel now; the delivery with its attempt (``state`` sent or
        failed: a test is not retried)."""
        channel = self.get_object()
        if not request.user.has_perm("notify.change_channel"):
            raise exceptions.PermissionDenied("sending a test needs notify.change_channel")
        delivery = send_test(channel, request.user.get_username())
        return Response(DeliverySerializer(delivery).data)


class RuleViewSet(_TenantOwned):
    queryset = Rule.objects.all()
    serializer_class = RuleSerializer

    def get_queryset(self):
        return super().get_queryset().prefetch_related("channels")

    @extend_schema(request=None, responses=DeliverySerializer(many=True))
    @action(detail=True, methods=["post"])
    def digest(self, request, pk=None, format=None):  # noqa: A002 - DRF format suffix
        """Send this rule's channels a digest of the last 24 hours now (whatever the rule sends otherwise); the
        deliveries queued (``GET deliveries/<id>/`` shows how they went)."""
        rule = self.get_object()
        if not may_own(request.user, rule.tenant_id):
            raise exceptions.PermissionDenied("you may manage your tenants' rows only")
        made = send_digest(rules=[rule], manual=True)
        return Response(DeliverySerializer(made, many=True).data)


class SilenceViewSet(viewsets.ModelViewSet):
    queryset = Silence.objects.all()
    serializer_class = SilenceSerializer
    permission_classes = [OperatorsWrite]

    def get_queryset(self):
        return Silence.objects.restrict(self.request.user)

    def perform_create(self, serializer) -> None:
        with transaction.atomic():
            serializer.save(author=self.request.user, author_name=self.request.user.get_username())
        am_silences.push(serializer.instance)

    def perform_update(self, serializer) -> None:
        serializer.save()
        am_silences.push(serializer.instance)

    def perform_destroy(self, instance) -> None:
        am_silences.expire(instance)
        instance.delete()

    @extend_schema(request=None, responses=SilenceSerializer)
    @action(detail=True, methods=["post"], permission_classes=[OperatorsChange])
    def expire(self, request, pk=None, format=None):  # noqa: A002 - DRF format suffix
        """End this silence now (a maintenance window not started yet: cancelled); kept, with its deliveries. A change
        of the silence: needs ``notify.change_silence`` (:class:`~.permissions.OperatorsChange`)."""
        silence = self.get_object()
        now = clock.now()
        if silence.ends_at > now:
            silence.starts_at, silence.ends_at = min(silence.starts_at, now), now
            silence.save(update_fields=["starts_at", "ends_at"])
            am_silences.expire(silence)
        return Response(SilenceSerializer(silence).data)

    @extend_schema(request=None, responses=None)
    @action(detail=False, methods=["get"])
    def draft(self, request, format=None):  # noqa: A002 - DRF format suffix
        """``{"may_create"}``: whether you may create silences (pages show their "Silence..." actions by it); with
        ``?event=<id>`` (an event you see) also ``matchers`` and ``about``: a silence of that event's kind where it
        is (its port, else its switch, else its hosts, on its fabric)."""
        out: dict = {"may_create": may_silence(request.user)}
        event = request.query_params.get("event")
        if event is not None and out["may_create"]:
            if not event.isdigit():
                raise exceptions.ValidationError({"event": "an event id"})
            shown = Event.objects.restrict(request.user).select_related("fabric", "fabric__cluster", "tenant")
            out.update(draft_of_event(get_object_or_404(shown, pk=int(event))))
        return Response(out)


class DeliveryViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Delivery.objects.all()
    serializer_class = DeliverySerializer
    permission_classes = [ViewerRead]

    def get_queryset(self):
        qs = (Delivery.objects.restrict(self.request.user).prefetch_related("event_links")
              .annotate(attempts_total=Count("attempt_rows")))
        if self.action == "list":  # each delivery's newest attempts only, picked by the database (a window function)
            newest = Attempt.objects.order_by("-at", "-pk")[:ATTEMPTS_SHOWN]
            qs = qs.prefetch_related(Prefetch("attempt_rows", queryset=newest, to_attr="newest_attempts"))
        else:
            qs = qs.prefetch_related("attempt_rows")
        channel = self.request.query_params.get("channel")
        if channel is not None:
            if not channel.isdigit():
                raise exceptions.ValidationError({"channel": "a channel id"})
            qs = qs.filter(channel_id=int(channel))
        state = self.request.query_params.get("state")
        if state is not None:
            qs = qs.filter(state=state)
        return qs.order_by("-pk")
