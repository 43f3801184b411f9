"""Serializers of the notifications API: secrets are written, never read back (``secrets_set`` lists their names)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions, serializers

from ibweb.http.json_input import JSONField
from ibweb.tenancy.models import Tenant

from ..config import ConfigError, check_channel
from ..models import SEVERITIES, Attempt, Channel, Delivery, Rule, Silence
from .permissions import may_own

__all__ = ["ChannelSerializer", "RuleSerializer", "SilenceSerializer", "DeliverySerializer", "AttemptSerializer"]

_MATCHERS = ("kinds", "fabrics", "clusters", "tenants", "switches", "ports", "hosts")


def _owner(serializer, tenant) -> None:
    """A tenant's admins write their tenants' rows only: refused before anything else is checked (tells nothing)."""
    request = serializer.context.get("request")
    if request is not None and not may_own(request.user, tenant.pk if tenant else None):
        raise exceptions.PermissionDenied("you may manage your tenants' rows only")


def _strings(value, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and 0 < len(v) <= 200 for v in value) \
            or len(value) > 100:
        raise serializers.ValidationError({field: "a list of up to 100 strings (1 to 200 characters)"})
    return value


class ChannelSerializer(serializers.ModelSerializer):
    tenant = serializers.SlugRelatedField(slug_field="slug", queryset=Tenant.objects.all(), required=False,
                                          allow_null=True)
    config = JSONField(required=False)
    secrets = JSONField(required=False, write_only=True)
    secrets_set = serializers.SerializerMethodField()

    class Meta:
        model = Channel
        fields = ["id", "name", "kind", "tenant", "config", "secrets", "secrets_set", "enabled", "rate_limit_per_min",
                  "repeat_interval_s", "failing_after_s", "failing_since", "created_at"]
        read_only_fields = ["failing_since", "created_at"]
        validators = []  # the name is unique per owner, the operators' (no tenant) too: checked in validate

    def get_secrets_set(self, obj) -> list[str]:
        return sorted(obj.secrets or {})

    def validate(self, attrs):
        kind = attrs.get("kind", getattr(self.instance, "kind", None))
        tenant = attrs.get("tenant", getattr(self.instance, "tenant", None))
        _owner(self, tenant)
        name = attrs.get("name", getattr(self.instance, "name", None))
        same = Channel.objects.filter(tenant=tenant, name=name).exclude(pk=getattr(self.instance, "pk", None))
        if same.exists():
            raise serializers.ValidationError({"name": "its owner has a channel of this name"})
        config = attrs.get("config", getattr(self.instance, "config", {}) or {})
        secrets = {**(getattr(self.instance, "secrets", {}) or {})} if self.instance is not None \
            and kind == self.instance.kind else {}
        secrets.update(attrs.get("secrets") or {})
        config = {k: v for k, v in config.items() if k not in secrets} if isinstance(config, dict) else config
        try:
            attrs["config"], attrs["secrets"] = check_channel(kind, config, secrets)
        except ConfigError as exc:
            raise serializers.ValidationError({exc.field if exc.field != "kind" else "kind": str(exc)}) from exc
        return attrs


class RuleSerializer(serializers.ModelSerializer):
    tenant = serializers.SlugRelatedField(slug_field="slug", queryset=Tenant.objects.all(), required=False,
                                          allow_null=True)
    channels = serializers.PrimaryKeyRelatedField(many=True, queryset=Channel.objects.all())
    min_severity = serializers.ChoiceField(choices=SEVERITIES, default="warning")

    class Meta:
        model = Rule
        fields = ["id", "name", "tenant", "enabled", "min_severity", "sends", *_MATCHERS, "channels"]

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        if request is not None:  # only channels the user sees may be named
            fields["channels"].child_relation.queryset = Channel.objects.restrict(request.user)
        return fields

    def validate(self, attrs):
        for field in _MATCHERS:
            if field in attrs:
                attrs[field] = _strings(attrs[field], field)
        tenant = attrs.get("tenant", getattr(self.instance, "tenant", None))
        _owner(self, tenant)
        for ch in attrs.get("channels", []):
            if tenant is not None and ch.tenant_id != tenant.pk:
                raise serializers.ValidationError({"channels": f"channel {ch.pk} is not tenant {tenant.slug}'s"})
        return attrs


class SilenceSerializer(serializers.ModelSerializer):
    class Meta:
        model = Silence
        fields = ["id", *_MATCHERS, "starts_at", "ends_at", "reason", "author_name", "created_at", "pushed"]
        read_only_fields = ["author_name", "created_at", "pushed"]

    def validate(self, attrs):
        for field in _MATCHERS:
            if field in attrs:
                attrs[field] = _strings(attrs[field], field)
        starts = attrs.get("starts_at", getattr(self.instance, "starts_at", None))
        ends = attrs.get("ends_at", getattr(self.instance, "ends_at", None))
        if starts and ends and ends <= starts:
            raise serializers.ValidationError({"ends_at": "after starts_at"})
        if not any(attrs.get(f, getattr(self.instance, f, None)) for f in _MATCHERS):
            raise serializers.ValidationError({"kinds": "a silence matches something: give at least one matcher"})
        return attrs


class AttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = Attempt
        fields = ["at", "ok", "detail", "duration_ms", "refresh"]


class DeliverySerializer(serializers.ModelSerializer):
    attempts_made = serializers.SerializerMethodField()
    attempts_total = serializers.SerializerMethodField()
    events = serializers.SerializerMethodField()

    class Meta:
        model = Delivery
        fields = ["id", "channel", "key", "state", "status", "reason", "group", "notices", "events", "silence",
                  "created_at", "next_attempt_at", "attempts", "sent_at", "detail", "attempts_made",
                  "attempts_total"]
        read_only_fields = fields

    @extend_schema_field(AttemptSerializer(many=True))
    def get_attempts_made(self, obj) -> list[dict]:
        """Oldest first: all of them, or (a list of deliveries) the newest ``ATTEMPTS_SHOWN``."""
        newest = getattr(obj, "newest_attempts", None)
        rows = list(reversed(newest)) if newest is not None else obj.attempt_rows.all()
        return AttemptSerializer(rows, many=True).data

    def get_attempts_total(self, obj) -> int:
        """How many attempts the delivery has (re-posts included), however many are listed."""
        total = getattr(obj, "attempts_total", None)
        return total if total is not None else obj.attempt_rows.count()

    def get_events(self, obj) -> list[int]:
        return sorted(link.event_id for link in obj.event_links.all())
