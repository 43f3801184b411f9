from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import authentication, exceptions, permissions, status, throttling, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from ibweb.fabrics.models import Fabric

from .. import store, sweeps
from ..choices import CollectorSource
from ..models import CollectorConfig, PushToken, Sweep
from .serializers import CollectorConfigSerializer, SamplePushSerializer, SweepSerializer


class CollectorConfigViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = CollectorConfigSerializer

    def get_queryset(self):
        return CollectorConfig.objects.select_related("fabric").filter(
            fabric__in=Fabric.objects.restrict(self.request.user))


class SweepViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = SweepSerializer

    def get_queryset(self):
        qs = Sweep.objects.select_related("config__fabric").filter(
            config__fabric__in=Fabric.objects.restrict(self.request.user))
        slug = self.request.query_params.get("fabric")
        return qs.filter(config__fabric__slug=slug) if slug else qs


class PushTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <token>`` with a :class:`PushToken`; ``request.auth`` is the token."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].decode(errors="replace") != self.keyword:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization: Bearer <token>")
        token = PushToken.lookup(header[1].decode(errors="replace"))
        if token is None:
            raise exceptions.AuthenticationFailed("unknown push token")
        return None, token

    def authenticate_header(self, request) -> str:
        return self.keyword


class PushRateThrottle(throttling.SimpleRateThrottle):
    """Pushes per token (rate ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["push"]``); 429 with Retry-After beyond."""

    scope = "push"

    def get_cache_key(self, request, view) -> str | None:
        token = request.auth
        return self.cache_format % {"scope": self.scope, "ident": token.pk} if isinstance(token, PushToken) else None


class HasPushToken(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, PushToken)


@extend_schema(request=SamplePushSerializer, responses=OpenApiTypes.OBJECT)
class SamplePushView(APIView):
    """``POST /api/telemetry/fabrics/<slug>/samples/``: an external collector pushes one sweep."""

    authentication_classes = [PushTokenAuthentication]
    permission_classes = [HasPushToken]
    throttle_classes = [PushRateThrottle]
    serializer_class = SamplePushSerializer

    def post(self, request, slug: str):
        config = get_object_or_404(CollectorConfig.objects.select_related("fabric"), fabric__slug=slug)
        token: PushToken = request.auth
        if token.config_id != config.pk:
            raise exceptions.PermissionDenied("this token belongs to another fabric")
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
        result = {"shard": 0, "samples": sweeps.samples_to_json(body.validated_data["parsed"]), "failures": []}
        sweeps.merge(config, sweep, linkinfo, [result])
        PushToken.objects.filter(pk=token.pk).update(last_used=timezone.now())
        return Response(SweepSerializer(sweep).data, status=status.HTTP_201_CREATED)
