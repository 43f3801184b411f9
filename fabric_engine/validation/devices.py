"""Device checks on the vitals of switches and hosts: firmware compliance, fans, PSUs and temperatures.

The vitals are :class:`fabric_engine.devices.vitals.DeviceVitals` (``ibswinfo``, ibdiagnet's nodes info and
temperature sensing, ``ibstat``...); only their attributes are read, so any object with the same fields does.

* Firmware: devices are grouped by type (part number, else hardware, else PSID). With a configured minimum for
  a type, a device below it is an ``error``; without one, a type running more than one version has every device
  off its most common version flagged (``warning``, ties going to the newest version as the target). Versions
  compare as tuples of their numbers (``31.2012.1068``).
* Fans: a fan not ``ok``, or at 0 rpm, is an ``error``. PSUs: not ``ok`` or DC not ok is an ``error``.
* Temperatures: at or above the sensor's ``critical`` is an ``error``, its ``warning`` a ``warning``; a sensor
  without thresholds is compared with the configured fallbacks, if any. ``max_celsius`` is the highest reading
  the device recorded, not a threshold: kept as evidence.
* A device that reported errors (``errors``) gets a ``warning`` naming them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from .findings import ERROR, WARNING, Finding

__all__ = ["device_type", "version_key", "check_firmware", "check_vitals", "CHECK_FIRMWARE", "CHECK_FAN",
           "CHECK_PSU", "CHECK_TEMPERATURE", "CHECK_DEVICE_ERRORS"]

CHECK_FIRMWARE, CHECK_FAN, CHECK_PSU = "firmware", "fan", "psu"
CHECK_TEMPERATURE, CHECK_DEVICE_ERRORS = "temperature", "device_errors"
_NUMBER = re.compile(r"\d+")


def device_type(d) -> str:
    """The type a device's firmware is compared within: part number, else hardware, else PSID."""
    return str(d.part_number or d.hardware or d.psid or "unknown")


def version_key(version: str) -> tuple[int, ...]:
    """``"31.2012.1068"`` -> ``(31, 2012, 1068)``; what firmware versions are ordered by."""
    return tuple(int(x) for x in _NUMBER.findall(str(version)))


def _subject(d) -> str:
    return str(d.name) if d.name else f"0x{int(d.guid):016x}"


def check_firmware(devices: Sequence, minimum: Mapping[str, str] | None = None) -> list[Finding]:
    """Firmware compliance of ``devices`` (see the module docstring); ``minimum``: device type -> version."""
    minimum = dict(minimum or {})
    by_type: dict[str, list] = {}
    for d in devices:  # one entry per device
        if d.firmware:
            by_type.setdefault(device_type(d), []).append(d)
    out = []
    for kind, group in sorted(by_type.items()):
        versions = Counter(str(d.firmware) for d in group)
        counts = dict(sorted(versions.items(), key=lambda kv: version_key(kv[0])))
        if kind in minimum:
            floor = version_key(minimum[kind])
            for d in group:
                if version_key(d.firmware) < floor:
                    out.append(Finding(CHECK_FIRMWARE, ERROR, _subject(d),
                                       f"{_subject(d)} ({kind}) runs firmware {d.firmware}, below the minimum "
                                       f"{minimum[kind]}", {"type": kind, "firmware": str(d.firmware),
                                                            "minimum": minimum[kind], "versions": counts,
                                                            "source": d.source}))
            continue
        if len(versions) < 2:
            continue
        target = max(versions, key=lambda v: (versions[v], version_key(v)))
        for d in group:
            if str(d.firmware) != target:
                out.append(Finding(CHECK_FIRMWARE, WARNING, _subject(d),
                                   f"{_subject(d)} ({kind}) runs firmware {d.firmware}; {versions[target]} of "
                                   f"{len(group)} devices of its type run {target}",
                                   {"type": kind, "firmware": str(d.firmware), "majority": target,
                                    "versions": counts, "source": d.source}))
    return out


def check_vitals(devices: Sequence, *, warning_c: float | None = None,
                 critical_c: float | None = None) -> list[Finding]:
    """Fans, PSUs, temperatures and reported errors of ``devices``; ``warning_c``/``critical_c``: fallback
    thresholds for sensors that give none (none by default: such a sensor is not judged)."""
    out = []
    for d in devices:  # one entry per device, then its few sensors
        who = _subject(d)
        for f in d.fans:
            if not f.ok or f.rpm == 0:
                out.append(Finding(CHECK_FAN, ERROR, f"{who} fan {f.name}",
                                   f"{who}: fan {f.name} {'failed' if not f.ok else 'stopped (0 rpm)'}",
                                   {"fan": f.name, "ok": f.ok, "rpm": f.rpm, "source": d.source}))
        for p in d.psus:
            if not p.ok or p.dc_ok is False:
                what = "failed" if not p.ok else "DC output not ok"
                out.append(Finding(CHECK_PSU, ERROR, f"{who} PSU {p.name}", f"{who}: PSU {p.name} {what}",
                                   {"psu": p.name, "ok": p.ok, "dc_ok": p.dc_ok, "watts": p.watts,
                                    "source": d.source}))
        for t in d.temperatures:
            if t.celsius is None:
                continue
            crit = t.critical if t.critical is not None else critical_c
            warn = t.warning if t.warning is not None else warning_c
            level, limit = None, None
            if crit is not None and t.celsius >= crit:
                level, limit = ERROR, crit
            elif warn is not None and t.celsius >= warn:
                level, limit = WARNING, warn
            if level:
                out.append(Finding(CHECK_TEMPERATURE, level, f"{who} {t.sensor}",
                                   f"{who}: {t.sensor} at {t.celsius:g} °C, at or above its "
                                   f"{'critical' if level == ERROR else 'warning'} threshold {limit:g} °C",
                                   {"sensor": t.sensor, "celsius": t.celsius, "warning": warn, "critical": crit,
                                    "max_celsius": t.max_celsius, "source": d.source}))
        if d.errors:
            out.append(Finding(CHECK_DEVICE_ERRORS, WARNING, who,
                               f"{who} reported {len(d.errors)} error(s): {'; '.join(d.errors[:3])}",
                               {"errors": list(d.errors), "source": d.source}))
    return out
