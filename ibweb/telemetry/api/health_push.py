"""``POST /api/telemetry/fabrics/<slug>/health/``: operators' hosts push link health captures (issue 37).

Body: ``{"captures": [{"name": "leaf01-p1.txt", "text": "<output>", "node": "leaf01", "port": 1}, ...]}``,
each ``text`` one tool's output as it printed it: ``mlxlink`` (text or ``--json``), ``mlxcables``, ``perfquery -T``,
``ibdiagnet2.cables``, ``ibdiagnet2.db_csv`` (its PHY/BER, cable and counter sections) or UFM Telemetry (CSV or
JSON); the kind is told by content. ``node`` (a node name or
``0x`` GUID) and ``port`` name the port of a capture that does not (``mlxlink`` prints only its device); else
rows are matched by GUID, LID or name to the discovery the engine runs on (:mod:`..health_ports`). Ports the
fabric has no such node or port for are counted in the answer's ``unknown_ports`` and named in its warnings.

Same token, throttle and body cap as a counter push (``IBWEB_MAX_PUSH_BYTES``, checked before the JSON is
parsed). Every capture is read before anything is stored: one a reader refuses is a 400 naming the capture and
its line or field, and nothing of the push is kept. The rows merge into the fabric's newest readings
(:mod:`..health_readings`; a later capture of the same push wins), which the telemetry source gives the health
publisher each tick.
"""

from __future__ import annotations

import time

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response

from fabric_engine.captured import capped
from fabric_engine.errors import FabricEngineError
from fabric_engine.health import read_text_as
from fabric_engine.health.records import merge
from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.topology import Fabric
from fabric_engine.topology.limits import MAX_FABRIC_PORTS
from ibweb.runtime import health_readings, record
from ibweb.runtime.health_ports import match_ports, node_of_key

from .. import store
from ..models import CollectorConfig
from .serializers import _ParsedJSON, validated_captures
from .views import PushView

__all__ = ["HealthPushSerializer", "HealthPushView", "MAX_CAPTURES"]

#: Most captures in one push (one per port of the largest subnet, as for counter samples).
MAX_CAPTURES = MAX_FABRIC_PORTS
#: Unknown ports named in the warnings (the rest are counted).
_NAMED = 20


class _Capture(serializers.Serializer):
    name = serializers.CharField(required=False, max_length=255, default="")
    text = serializers.CharField(allow_blank=False, trim_whitespace=False)
    node = serializers.CharField(required=False, max_length=255)
    port = serializers.IntegerField(required=False, min_value=1, max_value=255)


class HealthPushSerializer(serializers.Serializer):
    """Body of a health push: ``captures``, each ``{"name", "text", "node", "port"}`` (only ``text`` required)."""

    captures = _ParsedJSON(help_text=f"1..{MAX_CAPTURES:,} capture objects.")

    def validate_captures(self, value) -> list[dict]:
        return validated_captures(value, _Capture, MAX_CAPTURES)


def _discovery(config: CollectorConfig) -> Fabric | None:
    """The fabric the engine runs on (its record), else the one of the newest sweep; None before any."""
    h = record.head_of(config.fabric)
    f = record.fabric(config.fabric_id, h) if h is not None else None
    if f is not None:
        return f
    _, newest = store.sweeps(config.fabric_id)
    if newest is None:
        return None
    try:
        return fabric_from_linkinfo(parse_iblinkinfo(newest["linkinfo"]), config.fabric.slug)
    except FabricEngineError:
        return None


def read_captures(captures: list[dict], fabric: Fabric, now: float) -> dict:
    """Every capture read and matched to ``fabric``: ``{"rows", "captures", "unknown_ports", "warnings"}``.

    Raises :class:`~rest_framework.exceptions.ValidationError` naming the first capture a reader refuses.
    """
    parts, summary, warnings = [], [], []
    for i, c in enumerate(captures):
        found: list = []
        try:
            kind, rec = read_text_as(c["text"], c["name"], found)
        except FabricEngineError as exc:
            raise exceptions.ValidationError({"captures": [f"captures[{i}]: {exc}"]}) from exc
        node = None
        if "node" in c:
            node = node_of_key(fabric, c["node"])
            if node is None:
                warnings.append({"capture": c["name"], "line": None, "text": c["node"],
                                 "reason": f"node: no node {c['node']!r} in the fabric's discovery"})
                node = -1
        matched, dropped = match_ports(fabric, rec, node=node, port=c.get("port"))
        matched.data["t"][:] = now
        parts.append(matched)
        if dropped.size:
            warnings.append({"capture": c["name"], "line": None, "text": ", ".join(dropped[:_NAMED].tolist()),
                             "reason": f"{dropped.size} port(s) of no node or port of the fabric's discovery"})
        warnings.extend({"capture": c["name"], **w} for w in found)
        summary.append({"name": c["name"], "kind": kind, "ports": len(rec), "matched": len(matched)})
    try:
        rows = merge(parts[::-1])  # the later capture of a port first: its values win
    except FabricEngineError as exc:
        raise exceptions.ValidationError({"captures": [str(exc)]}) from exc
    return {"rows": rows, "captures": summary, "unknown_ports": sum(s["ports"] - s["matched"] for s in summary),
            "warnings": capped(warnings)}


@extend_schema(request=HealthPushSerializer, responses=OpenApiTypes.OBJECT)
class HealthPushView(PushView):
    """``POST /api/telemetry/fabrics/<slug>/health/``: link health captures pushed with the collector's token."""

    serializer_class = HealthPushSerializer

    def post(self, request, slug: str):
        config = self.pushed_config(request, slug)
        body = HealthPushSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        fabric = _discovery(config)
        if fabric is None:
            return Response({"captures": ["the fabric has no discovery yet: push its iblinkinfo with counter "
                                          "samples first"]}, status=status.HTTP_409_CONFLICT)
        got = read_captures(body.validated_data["captures"], fabric, time.time())
        kept = health_readings.put(config.fabric_id, got["rows"])
        self.token_used(request)
        return Response({"captures": got["captures"], "ports": len(got["rows"]), "ports_kept": kept,
                         "unknown_ports": got["unknown_ports"], "warnings": got["warnings"]})
