from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from fabric_engine.errors import FabricEngineError
from fabric_engine.telemetry import CounterSamples, parse_iblinkinfo

from .. import store
from ..models import CollectorConfig, Sweep


class CollectorConfigSerializer(serializers.ModelSerializer):
    fabric = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    routing = serializers.SerializerMethodField(help_text="What the engine routes with: source (opensm-dump or "
                                                          "computed), engine, dump path, reason, version.")

    class Meta:
        model = CollectorConfig
        fields = ["id", "fabric", "source", "command_prefix", "environment", "drop_dir", "lfts_path", "timeout_s",
                  "interval_s", "stale_after_s", "shard_size", "wrap_counters", "tick_code", "thresholds", "enabled",
                  "routing"]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_routing(self, obj: CollectorConfig) -> dict | None:
        return store.routing_status(obj.fabric_id)


class SweepSerializer(serializers.ModelSerializer):
    fabric = serializers.SlugRelatedField(source="config.fabric", slug_field="slug", read_only=True)
    age_s = serializers.FloatField(read_only=True)

    class Meta:
        model = Sweep
        fields = ["id", "fabric", "source", "status", "started", "finished", "duration_s", "age_s", "shards",
                  "ports", "failures", "events"]


class SamplePushSerializer(serializers.Serializer):
    """Body of a push: counter samples (as ``CounterSamples.from_records`` reads them), optional discovery.

    ``{"samples": [{"lid": 2, "port": 3, "t": 1700000000.0, "extended": true,
    "counters": {"PortXmitData": 123, ...}}, ...], "iblinkinfo": "<iblinkinfo output>"}``
    """

    samples = serializers.ListField(child=serializers.DictField(), allow_empty=False, max_length=200_000)
    iblinkinfo = serializers.CharField(required=False, allow_blank=False, trim_whitespace=False)

    def validate(self, attrs: dict) -> dict:
        try:
            attrs["parsed"] = CounterSamples.from_records(attrs["samples"], source="samples").merged()
        except FabricEngineError as exc:
            raise serializers.ValidationError({"samples": str(exc)}) from exc
        if "iblinkinfo" in attrs:
            try:
                parse_iblinkinfo(attrs["iblinkinfo"], source="iblinkinfo")
            except FabricEngineError as exc:
                raise serializers.ValidationError({"iblinkinfo": str(exc)}) from exc
        return attrs
