from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, permissions, status, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from ibweb.access import view_of, visible_fabrics
from ibweb.auth.bearer import BearerAuthentication, BearerRoute, TokenThrottle
from ibweb.auth.permissions import AllTenantsRead

from .. import store, sweeps
from ..cc_sweep import pushed_cc
from ..choices import CollectorSource
from ..filtersets import SweepFilterSet
from ..models import CollectorConfig, PushToken, Sweep
from ..transport import shard_result
from .serializers import CollectorConfigSerializer, SamplePushSerializer, SweepSerializer


class CollectorConfigViewSet(viewsets.ReadOnlyModelViewSet):
    """How each telemetry-fed fabric is read (``ALL`` only: commands, hosts and paths of the management network)."""

    serializer_class = CollectorConfigSerializer
    permission_classes = [AllTenantsRead]

    def get_queryset(self):
        return CollectorConfig.objects.select_related("fabric").filter(
            fabric__in=visible_fabrics(view_of(self.request.user)))


class SweepViewSet(viewsets.ReadOnlyModelViewSet):
    """Sweeps with their failures and topology events (``ALL`` only: they name every host)."""

    serializer_class = SweepSerializer
    permission_classes = [AllTenantsRead]

    filterset_class = SweepFilterSet

    def get_queryset(self):
        return Sweep.objects.select_related("config__fabric").filter(
            config__fabric__in=visible_fabrics(view_of(self.request.user)))


class PushTokenAuthentication(BearerAuthentication):
    """``Authorization: Bearer <token>`` with a :class:`PushToken`; ``request.auth`` is the token."""

    token_model = PushToken
    unknown = "unknown push token"


class PushRateThrottle(TokenThrottle):
    """Pushes per token (rate ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["push"]``); 429 with Retry-After beyond."""

    token_model = PushToken


class HasPushToken(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, PushToken)


class PushView(BearerRoute, APIView):
    """A route that a collector's push token posts to: its authentication, permission and throttle."""

    bearer_authentication = PushTokenAuthentication
    permission_classes = [HasPushToken]
    throttle_classes = [PushRateThrottle]

    def pushed_config(self, request, slug: str) -> CollectorConfig:
        """The collector of fabric ``slug`` (404 if none); 403 when the request's token is another fabric's."""
        config = get_object_or_404(CollectorConfig.objects.select_related("fabric"), fabric__slug=slug)
        token: PushToken = request.auth
        if token.config_id != config.pk:
            raise exceptions.PermissionDenied("this token belongs to another fabric")
        return config

    def token_used(self, request) -> None:
        """Stamp the request's push token as used now."""
        PushToken.objects.filter(pk=request.auth.pk).update(last_used=timezone.now())


@extend_schema(request=SamplePushSerializer, responses=OpenApiTypes.OBJECT)
class SamplePushView(PushView):
    """``POST /api/telemetry/fabrics/<slug>/samples/``: an external collector pushes one sweep."""

    serializer_class = SamplePushSerializer

    def post(self, request, slug: str):
        config = self.pushed_config(request, slug)
        body = SamplePushSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        linkinfo = body.validated_data.get("iblinkinfo")
        if linkinfo is None:
            _, newest = store.sweeps(config.fabric_id)
            if newest is None:
                return Response({"iblinkinfo": "the first push of a fabric must include its iblinkinfo output"},
                                status=status.HTTP_400_BAD_REQUEST)
            linkinfo = newest["linkinfo"]
        sweep = Sweep.objects.create(config=config, source=CollectorSource.PUSH)
        result = shard_result(0, body.validated_data["parsed"], [])
        if body.validated_data["cc"] is not None:  # FECN/BECN: the fabric's congestion readings, as a sweep's
            result["cc"] = [pushed_cc(body.validated_data["cc"])]
        sweeps.merge(config, sweep, linkinfo, [result])
        self.token_used(request)
        return Response(SweepSerializer(sweep).data, status=status.HTTP_201_CREATED)
