from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from fabric_engine.formats.opensm_cc import write_cc_conf
from ibweb.access import view_of
from ibweb.fabrics.models import Fabric

from ..choices import Membership
from ..models import AuditEntry, CongestionControlPolicy, Partition, PartitionMember, QosPolicy, ServiceClass, Tenant


def django_errors(exc: DjangoValidationError) -> serializers.ValidationError:
    """A model or service ValidationError as DRF's, keeping the field names."""
    detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
    return serializers.ValidationError(detail)


@extend_schema_field({"type": "string", "example": "0x0001", "description": "A P_Key: hex, or an integer."})
class PKeyField(serializers.Field):
    """A P_Key as ``"0x0001"``; accepts hex strings or integers (the 0x8000 full bit is ignored)."""

    default_error_messages = {"invalid": "P_Key must be a number such as 0x0001"}

    def to_representation(self, value: int) -> str:
        return f"0x{int(value):04x}"

    def to_internal_value(self, data) -> int:
        try:
            value = int(data, 0) if isinstance(data, str) else int(data)
        except (TypeError, ValueError):
            self.fail("invalid")
        if isinstance(data, bool) or value < 0 or value > 0xFFFF:
            self.fail("invalid")
        return value & 0x7FFF


class ModelCleanMixin:
    """Run the model's ``full_clean`` (field validators, ``clean``, unique constraints) in ``validate``."""

    clean_exclude: tuple[str, ...] = ()

    def validate(self, attrs: dict) -> dict:
        model = self.Meta.model
        instance = self.instance or model()
        fields = {f.name: f for f in model._meta.concrete_fields if not f.primary_key}
        data = {f.attname: getattr(instance, f.attname) for f in fields.values()}
        for k, v in attrs.items():
            if k in fields:
                f = fields[k]
                data[f.attname] = (v.pk if v is not None else None) if f.is_relation else v
        candidate = model(pk=instance.pk, **data)
        candidate._state.adding = instance._state.adding  # an update is checked against the other rows only
        try:
            candidate.full_clean(exclude=list(self.clean_exclude))
        except DjangoValidationError as exc:
            raise django_errors(exc) from None
        return attrs


class ServiceClassSerializer(ModelCleanMixin, serializers.ModelSerializer):
    class Meta:
        model = ServiceClass
        fields = ["id", "name", "sl", "rate_limit", "mtu_limit", "description"]


class TenantSerializer(ModelCleanMixin, serializers.ModelSerializer):
    service_class = serializers.SlugRelatedField(slug_field="name", queryset=ServiceClass.objects.all(),
                                                 allow_null=True, required=False)

    class Meta:
        model = Tenant
        fields = ["id", "name", "slug", "description", "contacts", "service_class", "users"]
        extra_kwargs = {"users": {"required": False}}


class MemberSerializer(serializers.ModelSerializer):
    class Meta:
        model = PartitionMember
        fields = ["guid", "membership"]


class PartitionSerializer(ModelCleanMixin, serializers.ModelSerializer):
    fabric = serializers.SlugRelatedField(slug_field="slug", queryset=Fabric.objects.all())
    tenant = serializers.SlugRelatedField(slug_field="slug", queryset=Tenant.objects.all(), allow_null=True,
                                          required=False)
    service_class = serializers.SlugRelatedField(slug_field="name", queryset=ServiceClass.objects.all(),
                                                 allow_null=True, required=False)
    pkey = PKeyField()
    members = MemberSerializer(many=True, read_only=True)

    class Meta:
        model = Partition
        fields = ["id", "fabric", "tenant", "name", "pkey", "ipoib", "mtu", "rate", "sl", "service_class",
                  "default_membership", "index0", "all_cas", "all_switches", "all_routers", "self_port",
                  "description", "members"]
        validators = []  # the model's validate_constraints names the clashing field

    def validate_tenant(self, tenant):
        request = self.context.get("request")
        if request is not None and not view_of(request.user).sees_tenant(tenant.pk if tenant else None):
            raise serializers.ValidationError("you may only use your own tenants")
        return tenant


class QosPolicySerializer(ModelCleanMixin, serializers.ModelSerializer):
    fabric = serializers.SlugRelatedField(slug_field="slug", queryset=Fabric.objects.all())

    class Meta:
        model = QosPolicy
        fields = ["id", "fabric", "enabled", "max_vls", "high_limit", "vlarb_high", "vlarb_low", "sl2vl"]


class CongestionControlPolicySerializer(ModelCleanMixin, serializers.ModelSerializer):
    """``settings``: the ``cc_*`` values by field name (see ``ibweb.tenancy.cc_settings``); ``opensm_conf``: them
    as ``opensm.conf`` lines (read-only)."""

    fabric = serializers.SlugRelatedField(slug_field="slug", queryset=Fabric.objects.all())
    opensm_conf = serializers.SerializerMethodField()

    class Meta:
        model = CongestionControlPolicy
        fields = ["id", "fabric", "enabled", "settings", "opensm_conf"]

    def get_opensm_conf(self, obj) -> str:
        return write_cc_conf(obj.congestion_control())


class AuditEntrySerializer(serializers.ModelSerializer):
    fabric = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = AuditEntry
        fields = ["id", "time", "username", "action", "via", "fabric", "object_type", "object_id", "object_repr",
                  "before", "after"]
        read_only_fields = fields


# ----------------------------------------------------------------- UFM-style P_Key API
class GuidsSerializer(serializers.Serializer):
    """``guids`` with one ``membership`` for all or ``memberships`` one each (UFM semantics)."""

    guids = serializers.ListField(child=serializers.CharField(), allow_empty=True)
    membership = serializers.ChoiceField(choices=Membership.choices, required=False)
    memberships = serializers.ListField(child=serializers.ChoiceField(choices=Membership.choices), required=False)


class PKeyCreateSerializer(GuidsSerializer):
    """Create a P_Key (if new) and add GUIDs: UFM's ``POST pkeys``."""

    pkey = PKeyField()
    name = serializers.CharField(required=False, allow_blank=True)
    tenant = serializers.SlugRelatedField(slug_field="slug", queryset=Tenant.objects.all(), allow_null=True,
                                          required=False)
    ip_over_ib = serializers.BooleanField(required=False)
    index0 = serializers.BooleanField(required=False)
    guids = serializers.ListField(child=serializers.CharField(), required=False, default=list)


class PKeyQosSerializer(serializers.Serializer):
    """UFM's ``qos_conf``: ``service_level`` 0-15, ``mtu_limit`` (IBTA code 1-5), ``rate_limit`` in Gb/s."""

    service_level = serializers.IntegerField(min_value=0, max_value=15, required=False, allow_null=True)
    mtu_limit = serializers.IntegerField(min_value=1, max_value=5, required=False, allow_null=True)
    rate_limit = serializers.FloatField(required=False, allow_null=True)

    def validate_rate_limit(self, value):
        from fabric_engine.formats.opensm_partitions import RATE_GBPS

        if value is None:
            return None
        codes = [c for c, g in RATE_GBPS.items() if abs(g - value) < 1e-9]
        if not codes:
            known = ", ".join(f"{g:g}" for g in sorted(RATE_GBPS.values()))
            raise serializers.ValidationError(f"{value:g} Gb/s is not an InfiniBand rate; use one of {known}")
        return codes[0]
