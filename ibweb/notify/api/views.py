"""The notifications API (``/api/notify/``).

Routes::

    channels/               GET list (a tenant's channels to its users, all to ALL); POST a channel
    channels/<id>/          GET, PUT, PATCH, DELETE (secrets written, never read: ``secrets_set`` names them)
    channels/<id>/test/     POST send a test notification now (recorded as a delivery with its attempt)
    rules/, rules/<id>/     which events go to which channels (a tenant's rules name its channels only)
    silences/, .../<id>/    silences and maintenance windows (ALL only)
    deliveries/, .../<id>/  what was sent, queued or silenced, each with its attempts (read only)
"""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from ibweb.auth.permissions import ViewerRead

from .. import am_silences
from ..models import Channel, Delivery, Rule, Silence
from ..testing import send_test
from .permissions import OperatorsWrite, TenantOwnedWrite, may_own
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


class DeliveryViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Delivery.objects.all()
    serializer_class = DeliverySerializer
    permission_classes = [ViewerRead]

    def get_queryset(self):
        qs = Delivery.objects.restrict(self.request.user).prefetch_related("attempt_rows", "event_links")
        channel = self.request.query_params.get("channel")
        if channel is not None:
            if not channel.isdigit():
                raise exceptions.ValidationError({"channel": "a channel id"})
            qs = qs.filter(channel_id=int(channel))
        state = self.request.query_params.get("state")
        if state is not None:
            qs = qs.filter(state=state)
        return qs.order_by("-pk")
