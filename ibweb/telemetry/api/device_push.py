"""``POST /api/telemetry/fabrics/<slug>/devices/``: hosts push their adapters' and switches' device outputs (issue 38).

Body: ``{"captures": [{"name": "gpu0042-ibstat.txt", "text": "<output>", "host": "gpu0042"}, ...]}``, each ``text``
one tool's output as it printed it, its kind told by content: ``ibstat``, ``ibv_devinfo -v``, ``ibswinfo`` (an
unmanaged switch, read through its host), and any other output the device readers know
(:data:`fabric_engine.devices.KINDS`: ibdiagnet's ``ibdiagnet2.db_csv`` and ``ibdiagnet2.nodes_info``, OpenSM's
log), and ``sminfo`` lines or ``smpquery pkeys`` captures (a push collector has no commands of its own). Each host
pushes its own ports: pushed P_Key tables merge by (LID, GUID, port) and SMs by GUID or LID, so one host's push
never drops another's tables nor a plain ``sminfo`` (the master alone) the standby SMs pushed before. ``host``
(optional) names the host of adapter ports whose capture shows no shell prompt naming it
(ports are named ``<host>/<CA>``).

Same token and throttle as a counter push. Every capture is read before anything is stored: one a reader refuses
is a 400 naming the capture, its file name and line (``captures[1]: gpu0042-ibstat.txt:12: State 'Up': ...``), and
nothing of the push is kept; so is a push holding more records of a kind than the store keeps
(:data:`ibweb.runtime.device_readings.CAPS`: ``captures[7]: leaf.txt: the push's vitals: 8,193 records exceed
MAX_VITALS (8,192)``), checked after each capture is read. What was read merges into the fabric's device readings
(:mod:`ibweb.runtime.device_readings`: a later record of the same device or port wins). Nothing is matched to the
discovery here: records carry their GUIDs.
"""

from __future__ import annotations

import dataclasses
import re

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.response import Response

from fabric_engine.captured import capped
from fabric_engine.devices import read_text
from fabric_engine.devices.vitals import DeviceReadings
from fabric_engine.errors import FabricEngineError
from fabric_engine.validation.pkeys import read_pkeys
from fabric_engine.validation.sminfo import read_sminfo
from ibweb.runtime import device_readings

from .serializers import _ParsedJSON, validated_captures
from .views import PushView

__all__ = ["DevicePushSerializer", "DevicePushView", "MAX_DEVICE_CAPTURES", "read_captures"]

#: Most captures in one push (a host's adapters and the unmanaged switches it reaches, many times over).
MAX_DEVICE_CAPTURES = 4096
_SMINFO = re.compile(r"^\s*sminfo: sm lid \d", re.M)
_PKEYS = re.compile(r"^\s*\d+ pkeys capacity for this port\s*$", re.M)
_HOST = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")


class _Capture(serializers.Serializer):
    name = serializers.CharField(required=False, max_length=255, default="")
    text = serializers.CharField(allow_blank=False, trim_whitespace=False)
    host = serializers.RegexField(_HOST, required=False, max_length=63,
                                  error_messages={"invalid": "a host name (letters, digits, '.', '-', '_')"})


class DevicePushSerializer(serializers.Serializer):
    """Body of a device push: ``captures``, each ``{"name", "text", "host"}`` (only ``text`` required)."""

    captures = _ParsedJSON(help_text=f"1..{MAX_DEVICE_CAPTURES:,} capture objects.")

    def validate_captures(self, value) -> list[dict]:
        return validated_captures(value, _Capture, MAX_DEVICE_CAPTURES)


def _with_host(out: DeviceReadings, first: int, host: str) -> None:
    """Adapter ports from ``first`` on that no prompt named a host get ``host/`` before their adapter's name."""
    for i in range(first, len(out.hca_ports)):  # the few ports of one capture
        p = out.hca_ports[i]
        if "/" not in p.node:
            if p.node in out.adapter_types:
                out.adapter_types[f"{host}/{p.node}"] = out.adapter_types.pop(p.node)
            out.hca_ports[i] = dataclasses.replace(p, node=f"{host}/{p.node}")


def read_capture(text: str, name: str, out: DeviceReadings) -> str:
    """Read one capture into ``out``; its kind. Raises :class:`~fabric_engine.errors.FabricEngineError` naming
    ``name`` and the line."""
    if _SMINFO.search(text[:1 << 16]):
        got = read_sminfo(text, name)
        out.sms.extend(got.sms)
        out.skipped.extend({**w, "source": name} for w in got.warnings)
        kind = "sminfo"
    elif _PKEYS.search(text):
        got = read_pkeys(text, name)
        out.pkeys.extend(got.tables)
        out.skipped.extend({**w, "source": name} for w in got.warnings)
        kind = "smpquery pkeys"
    else:
        return read_text(text, name, out)
    out.files.append({"file": name, "kind": kind, "records": len(got.sms if kind == "sminfo" else got.tables)})
    return kind


def read_captures(captures: list[dict]) -> tuple[DeviceReadings, list[dict]]:
    """Every capture read into one :class:`DeviceReadings`: it, and per capture
    ``{"name", "kind", "records"}``. Raises :class:`~rest_framework.exceptions.ValidationError` naming the first
    capture a reader refuses (its index, name and line)."""
    out, summary = DeviceReadings(), []
    for i, c in enumerate(captures):
        first, records = len(out.hca_ports), len(out.files)
        try:
            kind = read_capture(c["text"], c["name"], out)
        except FabricEngineError as exc:
            raise exceptions.ValidationError({"captures": [f"captures[{i}]: {exc}"]}) from exc
        if "host" in c:
            _with_host(out, first, c["host"])
        try:  # lengths only, after each capture: a push too large is refused before more is read or stored
            device_readings.check_caps(out)
        except ValueError as exc:
            raise exceptions.ValidationError({"captures": [f"captures[{i}]: {c['name']}: the push's {exc}"]}) from exc
        summary.append({"name": c["name"], "kind": kind, "records": out.files[records]["records"]})
    return out, summary


@extend_schema(request=DevicePushSerializer, responses=OpenApiTypes.OBJECT)
class DevicePushView(PushView):
    """``POST /api/telemetry/fabrics/<slug>/devices/``: device outputs pushed with the collector's token."""

    serializer_class = DevicePushSerializer

    def post(self, request, slug: str):
        config = self.pushed_config(request, slug)
        body = DevicePushSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        got, summary = read_captures(body.validated_data["captures"])
        device_readings.write(config.fabric_id, got)  # merged: each host pushes its own ports and SMs
        self.token_used(request)
        return Response({"captures": summary, "records": sum(s["records"] for s in summary),
                         "warnings": capped([{k: w.get(k) for k in ("source", "line", "text", "reason")}
                                             for w in got.skipped])})
