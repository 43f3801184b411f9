"""Each fabric's validation report in the shared cache, computed by the Celery task (:mod:`.tasks`, every minute)
when due: older than ``IBWEB_VALIDATION_INTERVAL_S`` (default 300 s: its inputs change on the collectors' slower
interval), of a record version no longer in use, or device readings written again
(:func:`ibweb.runtime.device_readings.version`) and the report older than ``IBWEB_VALIDATION_DEBOUNCE_S`` (default
60 s: pushes from many hosts make one computation).

A reader (:func:`current`) gets the kept report, never computed in a web request (told when it is :func:`stale`),
except when none of the record version in use is kept; an operator's ``?refresh=1`` computes it now
(:func:`refresh`). Keys: ``ibweb:validation:<fabric id>`` (the newest report,
:func:`ibweb.live.validation.build.build_report` plus ``version``) and ``ibweb:validation-day:<fabric id>`` (the
report the daily digest compares with: one to two days before the newest, :func:`_kept_for_digest`) and
``ibweb:validation-sent:<fabric id>`` (the report the notifications' last daily digest covered, :func:`since_sent`).
"""

from __future__ import annotations

import time

from django.conf import settings

from fabric_engine.validation import diff_reports
from ibweb.runtime import device_readings
from ibweb.runtime.cache import shared_cache
from ibweb.runtime.cache_lock import held

from . import isolations
from .build import build_report
from .inputs import gather

__all__ = ["interval_s", "debounce_s", "age_s", "due", "stale", "read", "refresh", "refresh_once", "current",
           "digest", "since_sent", "mark_sent", "forget", "DAY_S"]

_TTL_S = 7 * 24 * 3600
DAY_S = 24 * 3600
_LOCK_S = 120


def interval_s() -> float:
    """Seconds a kept report is answered before it is computed again."""
    return float(settings.IBWEB_VALIDATION_INTERVAL_S)


def _key(fabric_id: int, part: str = "validation") -> str:
    return f"ibweb:{part}:{fabric_id}"


def read(fabric_id: int) -> dict | None:
    """The newest kept report of ``fabric_id`` (None: none yet)."""
    return shared_cache().get(_key(fabric_id))


def forget(fabric_id: int) -> None:
    """Drop the fabric's reports (tests, a deleted fabric)."""
    shared_cache().delete_many([_key(fabric_id), _key(fabric_id, "validation-day"),
                                 _key(fabric_id, "validation-day-next"), _key(fabric_id, "validation-lock"),
                                 _key(fabric_id, "validation-sent")])


def _kept_for_digest(fabric_id: int, stored: dict) -> None:
    """Two slots: the digest's baseline and the next one. The first report fills both; once the next one is a day
    older than ``stored``, it becomes the baseline and ``stored`` the next: the digest then covers one to two days
    (the first day: since the first report)."""
    cache = shared_cache()
    base_key, next_key = _key(fabric_id, "validation-day"), _key(fabric_id, "validation-day-next")
    nxt = cache.get(next_key)
    if cache.get(base_key) is None or nxt is None:
        cache.set_many({base_key: stored, next_key: stored}, timeout=_TTL_S)
    elif stored["t"] - nxt["t"] >= DAY_S:
        cache.set_many({base_key: nxt, next_key: stored}, timeout=_TTL_S)


def refresh(row) -> dict | None:
    """Compute ``row``'s report now and keep it; None while its engine has published no fabric. The advice's
    history is every isolation recorded (the device readings' and the database's, :mod:`.isolations`); the ports
    isolated now are listed."""
    devices_v = device_readings.version(row.pk)  # before the read: a write meanwhile makes it stale
    inputs = gather(row)
    if inputs is None:
        return None
    history = [*device_readings.isolated_history(inputs.devices), *isolations.history(row.pk)]
    stored = build_report(inputs.fabric, plan=inputs.plan, devices=inputs.devices, port_grade=inputs.port_grade,
                          score=inputs.score, history=history, t=time.time(),
                          inputs={"graded_t": inputs.graded_t, "notes": list(inputs.notes),
                                  "read_at": dict(getattr(inputs.devices, "read_at", None) or {})},
                          isolated=isolations.open_isolations(row.pk))
    stored["version"] = inputs.version
    stored["devices_v"] = devices_v
    shared_cache().set(_key(row.pk), stored, timeout=_TTL_S)
    _kept_for_digest(row.pk, stored)
    return stored


def debounce_s() -> float:
    """Seconds a kept report stands after new device readings before the task computes it again (many hosts push:
    their writes come together), at most the interval."""
    return min(float(settings.IBWEB_VALIDATION_DEBOUNCE_S), interval_s())


def age_s(stored: dict) -> float:
    """Seconds since ``stored`` was computed."""
    return max(0.0, time.time() - stored["t"])


def due(stored: dict | None, version: str | None, fabric_id: int) -> bool:
    """Whether the task computes the report again: none kept, of another record version, older than the interval,
    or device readings written since and the report older than :func:`debounce_s`."""
    if stored is None or stored.get("version") != version:
        return True
    age = age_s(stored)
    new_readings = stored.get("devices_v") != device_readings.version(fabric_id)
    return age >= interval_s() or (age >= debounce_s() and new_readings)


def stale(stored: dict, version: str | None, fabric_id: int) -> bool:
    """Whether the kept report is due again (:func:`due`, without the debounce): what a reader is told."""
    return (stored.get("version") != version or age_s(stored) >= interval_s()
            or stored.get("devices_v") != device_readings.version(fabric_id))


def refresh_once(row) -> dict | None:
    """:func:`refresh` unless another process computes ``row``'s report now (a cache lock): then None."""
    cache = shared_cache()
    with held(cache, _key(row.pk, "validation-lock"), _LOCK_S) as mine:
        return refresh(row) if mine else None


def current(row, version: str | None) -> dict | None:
    """``row``'s kept report of record version ``version``, never computed again here however old (the task's,
    :mod:`.tasks`; a reader is told :func:`stale`); computed now only when none of that version is kept (the
    first read of a fabric or of a new record), by one process at a time: the others get None meanwhile."""
    stored = read(row.pk)
    if stored is not None and stored.get("version") == version:
        return stored
    return refresh_once(row)


def _diff(base: dict, stored: dict) -> dict:
    """What changed from kept report ``base`` to ``stored`` (:func:`fabric_engine.validation.diff_reports`), each
    changed finding with the host names either report's finding recorded, and ``since``: ``base``'s time."""
    out = diff_reports(base["report"], stored["report"])
    hosts: dict[tuple[str, str], set[str]] = {}
    for f in (*base["report"].get("findings", ()), *stored["report"].get("findings", ())):
        if "hosts" in f:  # the host names each finding recorded (:func:`.build.hosts_named`), both reports'
            hosts.setdefault((f["check"], f["subject"]), set()).update(f["hosts"])
    out["changed"] = [{**c, "hosts": sorted(hosts[k])} if (k := (c["check"], c["subject"])) in hosts else c
                      for c in out["changed"]]
    return {"since": base["t"], **out}


def digest(fabric_id: int, stored: dict) -> dict | None:
    """What changed since the digest's baseline (:func:`fabric_engine.validation.diff_reports`: findings new,
    resolved and changed, each KPI before and after) with the baseline's time ``since``; None when ``stored`` is
    the baseline."""
    day = shared_cache().get(_key(fabric_id, "validation-day"))
    if day is None or day["t"] >= stored["t"]:
        return None
    return _diff(day, stored)


def since_sent(fabric_id: int) -> tuple[dict, dict] | None:
    """For the notifications' daily digest: ``(changes, newest)``, what changed from the report the last digest sent
    (:func:`mark_sent`; before any, the daily baseline) to the newest kept report (:func:`_diff`), and that report;
    None without a kept report or an older one to compare with."""
    stored = read(fabric_id)
    if stored is None:
        return None
    cache = shared_cache()
    base = cache.get(_key(fabric_id, "validation-sent")) or cache.get(_key(fabric_id, "validation-day"))
    if base is None or base["t"] >= stored["t"]:
        return None
    return _diff(base, stored), stored


def mark_sent(fabric_id: int, stored: dict) -> None:
    """``stored`` (the report :func:`since_sent` compared with) is what the next digest compares with."""
    shared_cache().set(_key(fabric_id, "validation-sent"), stored, timeout=_TTL_S)
