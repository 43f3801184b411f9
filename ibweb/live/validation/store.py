"""Each fabric's validation report in the shared cache, recomputed at most every ``IBWEB_VALIDATION_INTERVAL_S``
(default 300 s: slower than link health, its inputs change on the collectors' slower interval), or as soon as the
fabric's device readings were written again (:func:`ibweb.runtime.device_readings.version`).

:func:`current` answers the kept report while it is younger than the interval and of the fabric's record version
in use, else computes it again (one process at a time per fabric: a cache lock; the others answer the kept one,
or wait for the first). :func:`refresh` computes it now: the Celery task (:mod:`.tasks`) runs it for every fabric
on a schedule, an operator's "recompute" in the API on demand. Keys: ``ibweb:validation:<fabric id>`` (the newest
report, :func:`ibweb.live.validation.build.build_report` plus ``version``) and ``ibweb:validation-day:<fabric
id>`` (the report the daily digest compares with: one to two days before the newest, :func:`_kept_for_digest`).
"""

from __future__ import annotations

import time

from django.conf import settings

from fabric_engine.validation import diff_reports
from ibweb.runtime import device_readings
from ibweb.runtime.cache import shared_cache

from .build import build_report
from .inputs import gather

__all__ = ["interval_s", "read", "refresh", "current", "digest", "forget", "DAY_S"]

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
                                 _key(fabric_id, "validation-day-next"), _key(fabric_id, "validation-lock")])


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
    """Compute ``row``'s report now and keep it; None while its engine has published no fabric."""
    devices_v = device_readings.version(row.pk)  # before the read: a write meanwhile makes it stale
    inputs = gather(row)
    if inputs is None:
        return None
    stored = build_report(inputs.fabric, plan=inputs.plan, devices=inputs.devices, port_grade=inputs.port_grade,
                          score=inputs.score, history=device_readings.isolated_history(inputs.devices), t=time.time(),
                          inputs={"graded_t": inputs.graded_t, "notes": list(inputs.notes),
                                  "read_at": dict(getattr(inputs.devices, "read_at", None) or {})})
    stored["version"] = inputs.version
    stored["devices_v"] = devices_v
    shared_cache().set(_key(row.pk), stored, timeout=_TTL_S)
    _kept_for_digest(row.pk, stored)
    return stored


def _fresh(stored: dict | None, version: str | None, max_age_s: float, fabric_id: int) -> bool:
    """Kept, of record version ``version``, younger than ``max_age_s`` and of the device readings written last."""
    return (stored is not None and stored.get("version") == version and time.time() - stored["t"] < max_age_s
            and stored.get("devices_v") == device_readings.version(fabric_id))


def current(row, version: str | None, max_age_s: float | None = None, wait_s: float = 30.0) -> dict | None:
    """``row``'s report of record version ``version``: the kept one while fresh (see the module docstring), else
    computed again by this process or, while another computes it, the kept one (waiting up to ``wait_s`` when
    none is kept)."""
    max_age_s = interval_s() if max_age_s is None else max_age_s
    stored = read(row.pk)
    if _fresh(stored, version, max_age_s, row.pk):
        return stored
    cache = shared_cache()
    lock = _key(row.pk, "validation-lock")
    deadline = time.monotonic() + wait_s
    while not cache.add(lock, 1, timeout=_LOCK_S):
        if stored is not None and stored.get("version") == version:
            return stored  # another process computes it: the kept one meanwhile
        if time.monotonic() > deadline:
            return stored
        time.sleep(0.1)
        stored = read(row.pk)
        if _fresh(stored, version, max_age_s, row.pk):
            return stored
    try:
        return refresh(row)
    finally:
        cache.delete(lock)


def digest(fabric_id: int, stored: dict) -> dict | None:
    """What changed since the digest's baseline (:func:`fabric_engine.validation.diff_reports`: findings new,
    resolved and changed, each KPI before and after) with the baseline's time ``since``; None when ``stored`` is
    the baseline."""
    day = shared_cache().get(_key(fabric_id, "validation-day"))
    if day is None or day["t"] >= stored["t"]:
        return None
    return {"since": day["t"], **diff_reports(day["report"], stored["report"])}
