"""REST API of tenancy: CRUD viewsets, the UFM-style P_Key API, OpenSM file export and import."""

from __future__ import annotations

import numpy as np
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from fabric_engine.errors import FormatError
from fabric_engine.formats.opensm_partitions import DEFAULT_PKEY
from ibweb.access import (
    view_of,
    visible_fabrics,
    visible_members,
    visible_partitions,
    visible_qos_policies,
    visible_service_classes,
    visible_tenants,
)
from ibweb.auth.permissions import AllTenantsRead
from ibweb.fabrics.models import Fabric
from ibweb.http.body_limits import JSONParser
from ibweb.runtime.published import published_fabric

from .. import audit, services
from ..choices import AuditAction
from ..exporters import FILES, default_partition_spec, export_response
from ..filtersets import (
    AuditEntryFilterSet,
    CongestionControlPolicyFilterSet,
    MemberFilterSet,
    PartitionFilterSet,
    QosPolicyFilterSet,
    TenantFilterSet,
)
from ..importers import import_cc_conf, import_partitions_conf
from ..models import AuditEntry, CongestionControlPolicy, Partition, QosPolicy, ServiceClass
from .parsers import PlainTextParser
from .serializers import (
    AuditEntrySerializer,
    CongestionControlPolicySerializer,
    GuidsSerializer,
    MemberSerializer,
    PartitionSerializer,
    PKeyCreateSerializer,
    PKeyField,
    PKeyQosSerializer,
    QosPolicySerializer,
    ServiceClassSerializer,
    TenantSerializer,
    django_errors,
)


class AuditedModelViewSet(viewsets.ModelViewSet):
    """CRUD that validates through the serializer and leaves an audit entry per write.

    An update or delete reads its row under a row lock inside one transaction, so two
    concurrent PATCHes of one row apply one after the other and neither loses the
    other's fields.
    """

    lock_rows = False

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        return queryset.select_for_update(of=("self",)) if self.lock_rows else queryset

    def update(self, request, *args, **kwargs):
        with transaction.atomic():
            self.lock_rows = True
            return super().update(request, *args, **kwargs)

    def destroy(self, request, *args, **kwargs):
        with transaction.atomic():
            self.lock_rows = True
            return super().destroy(request, *args, **kwargs)

    def perform_create(self, serializer):
        with transaction.atomic():
            obj = serializer.save()
            audit.record(self.request.user, AuditAction.CREATE, obj, via="api")

    def perform_update(self, serializer):
        with transaction.atomic():
            before = audit.snapshot(serializer.instance)
            obj = serializer.save()
            audit.record(self.request.user, AuditAction.UPDATE, obj, before=before, via="api")

    def perform_destroy(self, instance):
        with transaction.atomic():
            before = audit.snapshot(instance)
            audit.record(self.request.user, AuditAction.DELETE, instance, before=before, after=None, via="api")
            instance.delete()


class TenantViewSet(AuditedModelViewSet):
    serializer_class = TenantSerializer
    filterset_class = TenantFilterSet
    lookup_field = "slug"

    def get_queryset(self):
        return visible_tenants(view_of(self.request.user)).select_related("service_class").prefetch_related("users")


class ServiceClassViewSet(AuditedModelViewSet):
    serializer_class = ServiceClassSerializer
    queryset = ServiceClass.objects.all()  # the model for DjangoModelPermissions

    def get_queryset(self):
        return visible_service_classes(view_of(self.request.user))


class PartitionViewSet(AuditedModelViewSet):
    serializer_class = PartitionSerializer
    filterset_class = PartitionFilterSet

    def get_queryset(self):
        return (visible_partitions(view_of(self.request.user)).select_related("fabric", "tenant", "service_class")
                .prefetch_related("members"))


class QosPolicyViewSet(AuditedModelViewSet):
    serializer_class = QosPolicySerializer
    queryset = QosPolicy.objects.select_related("fabric")
    filterset_class = QosPolicyFilterSet

    def get_queryset(self):
        return visible_qos_policies(view_of(self.request.user), self.queryset)


class CongestionControlPolicyViewSet(AuditedModelViewSet):
    """A fabric's congestion control settings: read as the fabric's QoS tables (``TENANTS`` and up, the model's
    ``access_scope``), written with the model permissions (policy admins)."""

    serializer_class = CongestionControlPolicySerializer
    queryset = CongestionControlPolicy.objects.select_related("fabric")
    filterset_class = CongestionControlPolicyFilterSet

    def get_queryset(self):
        return self.queryset.restrict(view_of(self.request.user))


class AuditEntryViewSet(viewsets.ReadOnlyModelViewSet):
    """The audit log: who changed which tenant's data, with contacts and members before and after (``ALL`` only)."""

    serializer_class = AuditEntrySerializer
    permission_classes = [AllTenantsRead]
    queryset = AuditEntry.objects.select_related("fabric")
    filterset_class = AuditEntryFilterSet


# ------------------------------------------------------------------ UFM-style P_Keys
class PKeyPermission(permissions.BasePermission):
    """Reads need a view above ``NONE``; each write action names the model permissions it needs."""

    def has_permission(self, request, view) -> bool:
        if not hasattr(view, request.method.lower()):
            return True  # 405
        if request.method in permissions.SAFE_METHODS:
            return view_of(request.user).may_view
        needed = view.action_permissions.get(view.action, ("tenancy.change_partition",))
        return bool(request.user and request.user.is_authenticated and request.user.has_perms(needed))


@extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
class PKeyViewSet(viewsets.ViewSet):
    """P_Keys of one fabric with NVIDIA UFM's semantics (``/api/tenancy/fabrics/<slug>/pkeys/``).

    ``GET pkeys/`` all P_Keys with their GUIDs; ``POST pkeys/`` add GUIDs (creating
    the P_Key if new); ``POST pkeys/add/`` create without GUIDs; ``GET|DELETE
    pkeys/<pkey>/``; ``POST pkeys/<pkey>/guids/`` add, ``PUT`` replace the set, ``POST
    pkeys/<pkey>/guids/remove/`` remove; ``PUT|PATCH pkeys/<pkey>/qos/`` set SL, MTU and rate limit.
    """

    permission_classes = [PKeyPermission]
    action_permissions = {
        "create": ("tenancy.add_partition", "tenancy.change_partition", "tenancy.add_partitionmember"),
        "add": ("tenancy.add_partition",),
        "destroy": ("tenancy.delete_partition",),
        "add_guids": ("tenancy.change_partition", "tenancy.add_partitionmember"),
        "set_guids": ("tenancy.change_partition", "tenancy.add_partitionmember", "tenancy.delete_partitionmember"),
        "remove_guids": ("tenancy.change_partition", "tenancy.delete_partitionmember"),
        "set_qos": ("tenancy.change_partition",),
    }

    def _fabric(self, slug: str) -> Fabric:
        return get_object_or_404(visible_fabrics(view_of(self.request.user)), slug=slug)

    def _partitions(self, fabric: Fabric):
        return visible_partitions(view_of(self.request.user)).filter(fabric=fabric).prefetch_related("members")

    def _partition(self, fabric: Fabric, pkey: str) -> Partition:
        value = PKeyField().to_internal_value(pkey)
        if value == DEFAULT_PKEY and self.action != "retrieve":
            raise ValidationError({"pkey": ["0x7fff is the default partition, managed by ibweb (read-only)"]})
        try:
            return self._partitions(fabric).get(pkey=value)
        except Partition.DoesNotExist:
            raise NotFound(f"no P_Key 0x{value:04x} in fabric {fabric.slug}") from None

    @staticmethod
    def _entry(p: Partition) -> dict:
        """The UFM-style body of a P_Key; each GUID also names its node (index in the feed's topology; None
        before the fabric's engine published its fabric: a read never builds it)."""
        members = list(p.members.all())
        inv = published_fabric(p.fabric)
        nodes = [None] * len(members)
        if inv is not None and members:
            index, found = inv.guid_index.nodes(np.array([int(m.guid, 16) for m in members], dtype=np.uint64))
            nodes = [int(n) if ok else None for n, ok in zip(index.tolist(), found.tolist(), strict=True)]
        return {"partition": p.name, "tenant": p.tenant.slug if p.tenant_id else None, "ip_over_ib": p.ipoib,
                "index0": p.index0, "service_level": p.sl, "mtu_limit": p.mtu, "rate_limit": p.get_rate_display()
                if p.rate else None, "managed": False,
                "guids": [{"guid": m.guid, "membership": m.membership, "node": n} for m, n in zip(members, nodes,
                                                                                                 strict=True)]}

    def _default_entry(self, fabric: Fabric) -> dict:
        spec = default_partition_spec(fabric)
        return {"partition": spec.name, "tenant": None, "ip_over_ib": True, "index0": False, "service_level": None,
                "mtu_limit": None, "rate_limit": None, "managed": True,
                "keywords": {m.target: m.membership for m in spec.members}, "guids": []}

    @staticmethod
    def _fresh(partition: Partition) -> Partition:
        """``partition`` read again with its members (what a write left, not the list read before it)."""
        return Partition.objects.select_related("tenant", "fabric").prefetch_related("members").get(pk=partition.pk)

    def _check_tenant(self, partition: Partition) -> None:
        if not view_of(self.request.user).sees_tenant(partition.tenant_id):
            raise PermissionDenied("this partition belongs to another tenant")

    def _run(self, fn, *args):
        try:
            return fn(*args)
        except DjangoValidationError as exc:
            raise django_errors(exc) from None

    @extend_schema(operation_id="api_tenancy_fabrics_pkeys_list")
    def list(self, request, fabric: str):
        f = self._fabric(fabric)
        out = {f"0x{DEFAULT_PKEY:04x}": self._default_entry(f)}
        out.update({p.pkey_hex: self._entry(p) for p in self._partitions(f).select_related("tenant", "fabric")})
        return Response(out)

    def retrieve(self, request, fabric: str, pkey: str):
        f = self._fabric(fabric)
        if PKeyField().to_internal_value(pkey) == DEFAULT_PKEY:
            return Response(self._default_entry(f))
        return Response(self._entry(self._partition(f, pkey)))

    def _create_partition(self, f: Fabric, data: dict) -> Partition:
        partition = Partition(fabric=f, pkey=data["pkey"], name=data.get("name") or "", tenant=data.get("tenant"),
                              ipoib=data.get("ip_over_ib", True), index0=data.get("index0", False))
        if not view_of(self.request.user).sees_tenant(partition.tenant_id):
            raise ValidationError({"tenant": ["you may only create partitions of your own tenants"]})
        self._run(partition.full_clean)
        partition.save()
        audit.record(self.request.user, AuditAction.CREATE, partition, via="api")
        return partition

    def add(self, request, fabric: str):
        f = self._fabric(fabric)
        s = PKeyCreateSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        with transaction.atomic():
            partition = self._create_partition(f, s.validated_data)
        return Response(self._entry(partition), status=status.HTTP_201_CREATED)

    def create(self, request, fabric: str):
        f = self._fabric(fabric)
        s = PKeyCreateSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        if d["pkey"] == DEFAULT_PKEY:
            raise ValidationError({"pkey": ["0x7fff is the default partition, managed by ibweb (read-only)"]})
        entries = self._run(services.member_entries, d["guids"], d.get("membership"), d.get("memberships")) \
            if d["guids"] else []
        with transaction.atomic():
            partition = Partition.objects.filter(fabric=f, pkey=d["pkey"]).first()
            created = partition is None
            if created:
                partition = self._create_partition(f, d)
            else:
                self._check_tenant(partition)
            if entries:
                self._run(services.add_members, partition, entries, request.user, "api")
        return Response(self._entry(self._fresh(partition)),
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    def destroy(self, request, fabric: str, pkey: str):
        partition = self._partition(self._fabric(fabric), pkey)
        self._check_tenant(partition)
        with transaction.atomic():
            audit.record(request.user, AuditAction.DELETE, partition, before=audit.snapshot(partition), after=None,
                         via="api")
            partition.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _guids(self, request, fabric: str, pkey: str, fn, allow_empty: bool = False):
        partition = self._partition(self._fabric(fabric), pkey)
        self._check_tenant(partition)
        s = GuidsSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        if fn is services.remove_members:
            self._run(fn, partition, d["guids"], request.user, "api")
        else:
            entries = [] if (allow_empty and not d["guids"]) else self._run(
                services.member_entries, d["guids"], d.get("membership"), d.get("memberships"),
                partition.default_membership)
            self._run(fn, partition, entries, request.user, "api")
        return Response(self._entry(self._fresh(partition)))  # the members after the change

    def add_guids(self, request, fabric: str, pkey: str):
        return self._guids(request, fabric, pkey, services.add_members)

    def set_guids(self, request, fabric: str, pkey: str):
        return self._guids(request, fabric, pkey, services.replace_members, allow_empty=True)

    def remove_guids(self, request, fabric: str, pkey: str):
        return self._guids(request, fabric, pkey, services.remove_members)

    def set_qos(self, request, fabric: str, pkey: str):
        partition = self._partition(self._fabric(fabric), pkey)
        self._check_tenant(partition)
        s = PKeyQosSerializer(data=request.data, partial=request.method == "PATCH")
        s.is_valid(raise_exception=True)
        names = {"service_level": "sl", "mtu_limit": "mtu", "rate_limit": "rate"}
        changes = {names[k]: v for k, v in s.validated_data.items()}
        if changes:
            self._run(services.update_partition, partition, changes, request.user, "api")
        return Response(self._entry(self._fresh(partition)))


# ------------------------------------------------------------------ OpenSM files
class OpenSMFilePermission(permissions.BasePermission):
    """The files show (and an import changes) every tenant: the ``ALL`` level; imports also need the model perms
    (of partitions for ``partitions.conf``, of congestion control policies for ``opensm.conf``)."""

    message = "the OpenSM files show every tenant: operators and policy admins only"

    def has_permission(self, request, view) -> bool:
        if not view_of(request.user).sees_all:
            return False
        if request.method in permissions.SAFE_METHODS:
            return True
        if view.kwargs.get("filename") == "opensm.conf":
            return request.user.has_perms(("tenancy.add_congestioncontrolpolicy",
                                           "tenancy.change_congestioncontrolpolicy"))
        return request.user.has_perms(("tenancy.add_partition", "tenancy.change_partition",
                                       "tenancy.add_partitionmember", "tenancy.delete_partitionmember"))


@extend_schema(request=OpenApiTypes.STR, responses=OpenApiTypes.STR)
class OpenSMFileView(APIView):
    """``GET`` downloads ``partitions.conf``, ``qos-policy.conf`` or ``opensm.conf``; ``POST`` (text body or
    ``{"text": ...}``) imports a ``partitions.conf`` transactionally, or the congestion control options
    (``congestion_control``, ``cc_*``) of an ``opensm.conf`` into the fabric's congestion control policy."""

    permission_classes = [OpenSMFilePermission]
    parser_classes = [PlainTextParser, JSONParser]

    def get(self, request, fabric: str, filename: str):
        f = get_object_or_404(visible_fabrics(view_of(request.user)), slug=fabric)
        if filename not in FILES:
            raise NotFound(f"unknown file {filename}; known: {', '.join(FILES)}")
        return export_response(f, filename)

    def post(self, request, fabric: str, filename: str):
        f = get_object_or_404(visible_fabrics(view_of(request.user)), slug=fabric)
        if filename not in ("partitions.conf", "opensm.conf"):
            raise ValidationError({"file": ["only partitions.conf and opensm.conf (its cc_* options) can be "
                                            "imported"]})
        data = request.data
        text = data if isinstance(data, str) else data.get("text") if isinstance(data, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise ValidationError({"text": [f"send the {filename} text"]})
        if filename == "opensm.conf":
            try:
                policy = import_cc_conf(f, text, request.user, source=filename)
            except FormatError as exc:
                return Response({"text": [str(exc)], "line": exc.line}, status=status.HTTP_400_BAD_REQUEST)
            return Response(CongestionControlPolicySerializer(policy).data)
        replace = str(request.query_params.get("merge", "")).lower() not in ("1", "true", "yes")
        try:
            result = import_partitions_conf(f, text, request.user, source=filename, replace_members=replace)
        except FormatError as exc:
            return Response({"text": [str(exc)], "line": exc.line}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"created": result.created, "updated": result.updated, "members": result.members,
                         "notes": result.notes})


class MemberViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Read-only list of members across partitions (``?fabric=``, ``?partition=``, ``?guid=``)."""

    serializer_class = MemberSerializer
    filterset_class = MemberFilterSet

    def get_queryset(self):
        return visible_members(view_of(self.request.user))
