"""Read device health outputs of any of the device readers, told apart by content, and sum them up.

:func:`detect` names the kind of a text; :func:`read_devices` reads files (gzip allowed) or texts into one
:class:`~.vitals.DeviceReadings`; :func:`summary` gives the counts the ``health`` command prints: fans and fan
failures of switches, power supplies and their failures, and firmware versions per device type.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import tzinfo
from pathlib import Path

from ..errors import FormatError
from ..formats._input import read_bytes, to_text
from . import ibdiagnet_db, ibstat, ibswinfo, ibv_devinfo, nodes_info, opensm_errors
from ._text import device_type
from .vitals import DeviceReadings

__all__ = ["KINDS", "detect", "read_text", "read_devices", "summary", "records", "MAX_DEVICE_BYTES"]

#: Largest input read (an OpenSM log or a db_csv of a 200,000-port fabric).
MAX_DEVICE_BYTES = 1 << 30
KINDS = ("ibswinfo", "ibdiagnet2.db_csv", "ibdiagnet2.nodes_info", "ibstat", "ibv_devinfo", "OpenSM log")


def detect(text: str) -> str | None:
    """Which of :data:`KINDS` ``text`` is, by its content; ``None`` if none."""
    if ibdiagnet_db.looks_like(text):
        return "ibdiagnet2.db_csv"
    if nodes_info.looks_like(text):
        return "ibdiagnet2.nodes_info"
    if ibv_devinfo.looks_like(text):
        return "ibv_devinfo"
    if ibstat.looks_like(text):
        return "ibstat"
    if ibswinfo.looks_like(text):
        return "ibswinfo"
    if opensm_errors.looks_like(text):
        return "OpenSM log"
    return None


def read_text(text: str, source: str, out: DeviceReadings, *, now: float | None = None,
              tz: tzinfo | None = None) -> str:
    """Read ``text`` into ``out`` by the reader its content calls for; returns its kind."""
    kind = detect(text)
    skipped: list[dict] = []
    before = records(out)
    if kind is None:
        raise FormatError(source, None, "not a device health output this reader knows (" + ", ".join(KINDS) + ")")
    if kind == "ibswinfo":
        out.vitals.extend(ibswinfo.read(text, source, skipped))
    elif kind == "ibdiagnet2.db_csv":
        found = ibdiagnet_db.read(text, source, skipped)
        out.vitals.extend(found["vitals"])
        out.nodes_info.extend(found["nodes_info"])
        out.fec_modes.extend(found["fec_modes"])
        out.warnings.extend(found["warnings"])
    elif kind == "ibdiagnet2.nodes_info":
        out.nodes_info.extend(nodes_info.read(text, source, skipped))
    elif kind in ("ibstat", "ibv_devinfo"):
        reader = ibstat if kind == "ibstat" else ibv_devinfo
        out.hca_ports.extend(reader.read(text, source, skipped, out.adapter_types))
    else:
        out.opensm_errors.extend(opensm_errors.read(text, source, skipped, now=now, tz=tz))
    out.skipped.extend({**w, "source": source} for w in skipped)
    out.files.append({"file": source, "kind": kind, "records": records(out) - before})
    return kind


def records(r: DeviceReadings) -> int:
    """How many records ``r`` holds in all (of every kind)."""
    return len(r.vitals) + len(r.hca_ports) + len(r.nodes_info) + sum(map(len, r.fec_modes)) + len(r.warnings) \
        + len(r.opensm_errors)


def read_devices(paths_or_texts: Iterable[str | Path], *, now: float | None = None,
                 tz: tzinfo | None = None) -> DeviceReadings:
    """Read every item: a :class:`~pathlib.Path` or a path string is a file (gzip allowed, at most
    :data:`MAX_DEVICE_BYTES`), a string holding a newline is the text itself (named ``<text N>``)."""
    out = DeviceReadings()
    for k, item in enumerate(paths_or_texts, 1):
        if isinstance(item, str) and "\n" in item:
            read_text(item, f"<text {k}>", out, now=now, tz=tz)
            continue
        source = str(item)
        size = Path(item).stat().st_size if Path(item).is_file() else 0
        if size > MAX_DEVICE_BYTES:  # checked before the file is read into memory
            raise FormatError(source, None, f"larger than {MAX_DEVICE_BYTES:,} bytes")
        read_text(to_text(read_bytes(item, source), source, MAX_DEVICE_BYTES), source, out, now=now, tz=tz)
    return out


def _fan_failures(v) -> int:
    failed = sum(not f.ok for f in v.fans)
    tachos_failed = any(not f.ok for f in v.fans if not f.name.startswith("PSU"))
    return failed + (ibswinfo.FAN_STATUS_ERROR in v.errors and not tachos_failed)


def summary(readings: DeviceReadings) -> dict:
    """``switch_fans``, ``fan_failures``, ``psus``, ``psu_failures`` and ``firmware`` (``{device type: {version:
    count}}``, one count per device: ibdiagnet's node info first, then switches and adapters it did not list).

    A fan fails when it reads 0 rpm or its status is ``ERROR``; a switch whose ``fan status`` is ``ERROR`` with
    no fan identified counts one. A power supply fails when its status or its DC output is ``ERROR``.
    """
    firmware: dict[str, dict[str, int]] = {}
    seen: set[object] = set()

    def count(key: object, kind: str, version: str | None) -> None:
        if version is None or key in seen:
            return
        seen.add(key)
        versions = firmware.setdefault(kind, {})
        versions[version] = versions.get(version, 0) + 1

    for n in readings.nodes_info:
        count(n.guid, device_type(n.device_id) if n.device_id is not None else "unknown", n.firmware)
    for v in readings.vitals:
        count(v.guid if v.guid is not None else ("switch", v.name), v.part_number or v.hardware or "switch",
              v.firmware)
    for p in readings.hca_ports:
        count(p.guid if p.guid is not None else ("adapter", p.node), readings.adapter_types.get(p.node, "adapter"),
              p.firmware)
    return {
        "switch_fans": sum(len(v.fans) for v in readings.vitals),
        "fan_failures": sum(_fan_failures(v) for v in readings.vitals),
        "psus": sum(len(v.psus) for v in readings.vitals),
        "psu_failures": sum(not p.ok or p.dc_ok is False for v in readings.vitals for p in v.psus),
        "firmware": {k: dict(sorted(vs.items())) for k, vs in sorted(firmware.items())},
    }
