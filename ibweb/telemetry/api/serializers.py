import time

import numpy as np
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from fabric_engine.errors import FabricEngineError, FormatError
from fabric_engine.telemetry import FUTURE_MARGIN_S, CounterSamples, read_discovery
from fabric_engine.telemetry.perfquery_cc import split_cc_records
from fabric_engine.topology.limits import MAX_FABRIC_PORTS

from .. import cc_readings, store
from ..models import CollectorConfig, Sweep


class CollectorConfigSerializer(serializers.ModelSerializer):
    """A collector; ``command_prefix`` and ``environment`` may hold credentials: written, never read back.

    ``environment_keys`` names the variables set, ``command_prefix_length`` says how many words the prefix has.
    """

    fabric = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    routing = serializers.SerializerMethodField(help_text="What the engine routes with: source (opensm-dump or "
                                                          "computed), engine, dump path, reason, version.")
    environment_keys = serializers.SerializerMethodField(help_text="Names of the variables set (values are "
                                                                   "write-only).")
    command_prefix_length = serializers.SerializerMethodField(help_text="Words of the command prefix (write-only).")

    class Meta:
        model = CollectorConfig
        fields = ["id", "fabric", "source", "command_prefix", "environment", "environment_keys",
                  "command_prefix_length", "drop_dir", "lfts_path", "timeout_s", "interval_s", "stale_after_s",
                  "shard_size", "wrap_counters", "tick_code", "thresholds", "health_counters", "cc_counters",
                  "opensm_log_path", "validation_every", "enabled", "routing"]
        extra_kwargs = {"command_prefix": {"write_only": True}, "environment": {"write_only": True}}

    def get_environment_keys(self, obj: CollectorConfig) -> list[str]:
        return sorted(obj.environment) if isinstance(obj.environment, dict) else []

    def get_command_prefix_length(self, obj: CollectorConfig) -> int:
        return len(obj.command_prefix) if isinstance(obj.command_prefix, list) else 0

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_routing(self, obj: CollectorConfig) -> dict | None:
        return store.routing_status(obj.fabric_id)


class SweepSerializer(serializers.ModelSerializer):
    fabric = serializers.SlugRelatedField(source="config.fabric", slug_field="slug", read_only=True)
    age_s = serializers.FloatField(read_only=True)

    class Meta:
        model = Sweep
        fields = ["id", "fabric", "source", "status", "started", "finished", "duration_s", "age_s", "shards",
                  "ports", "failures", "warnings", "events"]


#: Most samples in one push: one per port of the largest subnet (a sample carries basic and extended counters).
MAX_PUSH_SAMPLES = MAX_FABRIC_PORTS
#: The congestion control counters a sample's ``counters`` may hold (perfquery's names, as the fabric's congestion
#: readings keep them): the rest of its counters are the port counters.
PUSHED_CC = tuple(counter for _, counter in cc_readings.COUNTERS)


@extend_schema_field({"type": "array", "items": {"type": "object"}})
class _ParsedJSON(serializers.Field):
    """A JSON value taken as the parser produced it (``JSONField`` would serialise a 200 MB push again to check it)."""

    def to_internal_value(self, data):
        return data

    def to_representation(self, value):
        return value


def validated_captures(value, item: type[serializers.Serializer], limit: int) -> list[dict]:
    """A push's ``captures``: a non-empty list of at most ``limit`` objects, each valid for ``item``, the first bad
    one named (``captures[1].port: ...``); a capture without a name is called ``capture <i + 1>``."""
    if not isinstance(value, list) or not value:
        raise serializers.ValidationError("expected a non-empty list of capture objects")
    if len(value) > limit:
        raise serializers.ValidationError(f"{len(value):,} captures; at most {limit:,}")
    out = []
    for i, raw in enumerate(value):  # loop over captures
        one = item(data=raw) if isinstance(raw, dict) else None
        if one is None or not one.is_valid():
            errors = one.errors if one is not None else {"": ["a capture is an object"]}
            field, [message, *_] = next(iter(errors.items()))
            raise serializers.ValidationError(f"captures[{i}]{'.' + field if field else ''}: {message}")
        out.append({**one.validated_data, "name": one.validated_data["name"] or f"capture {i + 1}"})
    return out


class SamplePushSerializer(serializers.Serializer):
    """Body of a push: counter samples (as ``CounterSamples.from_records`` reads them), optional discovery.

    ``{"samples": [{"lid": 2, "port": 3, "t": 1700000000.0, "extended": true,
    "counters": {"PortXmitData": 123, ..., "PortPktRcvFECN": 7, "PortPktRcvBECN": 1}}, ...],
    "iblinkinfo": "<iblinkinfo output>"}``

    ``PortPktRcvFECN`` and ``PortPktRcvBECN`` (:data:`PUSHED_CC`, optional; 32 bits, cumulative as ``perfquery
    --rcvcc`` reads them) become the fabric's congestion readings (``cc``: a
    :class:`~fabric_engine.telemetry.perfquery_cc.CCSamples`, None when no sample has them), as the collector's.

    Everything is checked before anything is stored (issue 14): every sample (LID
    1..0xBFFF, port 0..255, a finite time no more than ``FUTURE_MARGIN_S`` (300 s) ahead of
    this server's clock (issue 26), known counters that fit their width), and the
    discovery is parsed *and* built into a fabric, as the engine will, so a discovery
    the engine could not use is a 400 naming its line, never a stored sweep.
    """

    samples = _ParsedJSON(help_text=f"1..{MAX_PUSH_SAMPLES:,} sample objects (one per port); a sample's counters may "
                                    f"include {' and '.join(PUSHED_CC)}.")
    iblinkinfo = serializers.CharField(required=False, allow_blank=False, trim_whitespace=False)

    def validate_samples(self, value) -> list:
        if not isinstance(value, list) or not value:
            raise serializers.ValidationError("expected a non-empty list of sample objects")
        if len(value) > MAX_PUSH_SAMPLES:
            raise serializers.ValidationError(f"{len(value):,} samples; at most {MAX_PUSH_SAMPLES:,} (one per port "
                                              f"of the largest subnet)")
        return value

    def validate(self, attrs: dict) -> dict:
        try:
            records, cc, cc_rows = split_cc_records(attrs["samples"], PUSHED_CC, source="samples")
            raw = CounterSamples.from_records(records, source="samples")
        except FormatError as exc:
            where = f"samples[{exc.line - 1}]" if exc.line is not None else "samples"
            raise serializers.ValidationError({"samples": f"{where}: {exc.message}"}) from exc
        # issue 26: a sample from the future would be held by the engine anyway; refuse it here, naming it
        now = time.time()
        t_of = raw.t.max(axis=1, initial=0.0)  # per sample: its counters' time, or its congestion counters'
        t_of[cc_rows] = np.maximum(t_of[cc_rows], cc.t)
        ahead = np.flatnonzero(t_of > now + FUTURE_MARGIN_S)
        if ahead.size:
            i = int(ahead[0])
            t = float(t_of[i])
            raise serializers.ValidationError({"samples": f"samples[{i}]: t: {t!r} is {t - now:,.0f} s ahead of "
                                                          f"this server's clock (at most {FUTURE_MARGIN_S:g} s)"})
        attrs["parsed"] = raw.merged()
        attrs["cc"] = cc if len(cc) else None
        if "iblinkinfo" in attrs:
            try:
                read_discovery(attrs["iblinkinfo"], source="iblinkinfo")
            except FabricEngineError as exc:
                raise serializers.ValidationError({"iblinkinfo": str(exc)}) from exc
        return attrs
