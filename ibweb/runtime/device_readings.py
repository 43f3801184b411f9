"""The newest device readings of a fabric (issue 38): switch vitals, host adapter ports, ibdiagnet's node records,
OpenSM's errors, and what ``sminfo`` and ``smpquery pkeys`` answered, in the cache.

One :class:`~fabric_engine.devices.vitals.DeviceReadings` per fabric (the object
:func:`fabric_engine.devices.read_devices` returns, with ``sms``, ``pkeys`` and ``read_at`` filled here):

* the telemetry collector writes ``sms`` and ``pkeys`` on its slower validation interval
  (:mod:`ibweb.telemetry.device_sweep`), each run replacing the last (``replace=("sms", "pkeys")``);
* hosts push ``ibstat``, ``ibv_devinfo -v`` and ``ibswinfo`` output (``POST /api/telemetry/fabrics/<slug>/devices/``,
  :mod:`ibweb.telemetry.api.device_push`);
* pages (the Validation section, device panels) and ``/metrics`` read it with :func:`read`; a reader that polls
  compares :func:`version` (a few bytes) before reading the whole.

Merge (:func:`merge`): a record replaces the older record of the same device or port - switch vitals by node GUID
(else by name), adapter ports by node GUID and port (else node name and port), node info by GUID, P_Key tables by
LID or GUID and port, ``FEC_MODE`` sets and ibdiagnet warnings by the file they came from; SMs are replaced as a
whole (one ``sminfo`` run names every SM it knows); OpenSM's errors accumulate (the newest :data:`MAX_ERRORS`).
Ports seen administratively disabled (``isolated``, :class:`~fabric_engine.devices.vitals.IsolatedPort`: an
adapter port of a push whose physical state is ``Disabled``, or one the collector's iblinkinfo shows so) are
recorded per port (node GUID and port) with the time first seen, and kept through later writes (the newest
:data:`MAX_ISOLATED` ports; no ``replace`` drops them): the isolation advice reads them as its history
(:func:`isolated_history`), so a port isolated once and failing again is flagged. Kept for :data:`TTL_S` after
the last write. The read-merge-write holds the fabric's merge lock of
:mod:`.health_readings` (a process lock, and Redis's across processes when the cache is Redis).

Interface (stable; other modules read through it): :func:`read`, :func:`version`, :func:`write`, :func:`merge`,
:func:`forget`.
"""

from __future__ import annotations

import time
from collections.abc import Collection

from django.core.cache import cache

from fabric_engine.devices.vitals import DeviceReadings, IsolatedPort

from .health_readings import merge_lock

__all__ = ["read", "version", "write", "merge", "forget", "TTL_S", "MAX_ERRORS", "MAX_FILES", "MAX_SKIPPED",
           "LISTS",
           "MAX_ISOLATED", "disabled_ports", "isolated_history"]

#: How long a fabric's device readings are kept after the last write (a day: a push per host per day suffices).
TTL_S = 24 * 3600
#: OpenSM errors kept (the newest), entries of ``files`` and of ``skipped`` kept (the newest).
MAX_ERRORS, MAX_FILES, MAX_SKIPPED = 5_000, 256, 500
#: Ports seen isolated kept (the newest first seen).
MAX_ISOLATED = 10_000
#: The record lists of :class:`DeviceReadings` a write may replace whole (``replace=``).
LISTS = ("vitals", "hca_ports", "nodes_info", "fec_modes", "warnings", "opensm_errors", "sms", "pkeys")


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:telemetry:{fabric_id}:{part}"


def _file_of(source: str) -> str:
    """The file of a ``file:line`` source (a record's origin)."""
    head, _, tail = source.rpartition(":")
    return head if head and tail.isdigit() else source


def _by_key(old: list, new: list, key) -> list:
    """``new``'s records, then ``old``'s whose key no new record has (one pass each: no quadratic search)."""
    if not old:
        return list(new)
    if not new:
        return list(old)
    taken = {key(r) for r in new}
    return [*new, *(r for r in old if key(r) not in taken)]


def _vitals_key(v) -> tuple:
    return ("guid", v.guid) if v.guid is not None else ("name", v.name)


def _port_key(p) -> tuple:
    return ("guid", p.guid, p.port) if p.guid is not None else ("name", p.node, p.port)


def _table_key(t) -> tuple:
    return (t.lid, t.guid, t.port)


def disabled_ports(readings: DeviceReadings, t: float) -> list[IsolatedPort]:
    """The adapter ports of ``readings`` whose physical state is ``Disabled`` (their GUID known), seen at ``t``."""
    return [IsolatedPort(p.guid, p.port, t, p.node, p.source) for p in readings.hca_ports
            if p.phys_state == "Disabled" and p.guid is not None]


def _isolated(old: list[IsolatedPort], new: list[IsolatedPort]) -> list[IsolatedPort]:
    """``old``'s records (a port keeps the time it was first seen isolated), then ``new``'s of other ports."""
    seen = {(r.guid, r.port): r for r in old}
    for r in new:  # one per port seen disabled now
        k = (r.guid, r.port)
        if k not in seen or r.t < seen[k].t:
            seen[k] = r
    return sorted(seen.values(), key=lambda r: r.t)[-MAX_ISOLATED:]


def isolated_history(readings: DeviceReadings | None) -> list[dict]:
    """The ports recorded isolated, as :func:`fabric_engine.validation.advise` takes its ``history``:
    ``[{"guid", "port", "t"}]``."""
    return [{"guid": r.guid, "port": r.port, "t": r.t} for r in getattr(readings, "isolated", None) or ()]


def merge(old: DeviceReadings | None, new: DeviceReadings, *, replace: Collection[str] = (),
          now: float | None = None) -> DeviceReadings:
    """``old`` updated by ``new`` (see the module docstring): ``new``'s records win over ``old``'s of the same device
    or port; the lists named in ``replace`` (of :data:`LISTS`) are ``new``'s alone. ``new.read_at`` is kept as
    given, and every kind ``new`` holds or replaces is stamped ``now`` (default: the time) unless it has a time."""
    unknown = set(replace) - set(LISTS)
    if unknown:
        raise ValueError(f"replace: {', '.join(sorted(unknown))} not among {', '.join(LISTS)}")
    t = time.time() if now is None else float(now)
    old = old if old is not None else DeviceReadings()
    out = DeviceReadings()
    for name in LISTS:  # one merge per kind of record
        mine, theirs = getattr(new, name), [] if name in replace else getattr(old, name)
        if name == "vitals":
            got = _by_key(theirs, mine, _vitals_key)
        elif name == "hca_ports":
            got = _by_key(theirs, mine, _port_key)
        elif name == "nodes_info":
            got = _by_key(theirs, mine, lambda n: n.guid)
        elif name == "pkeys":
            got = _by_key(theirs, mine, _table_key)
        elif name == "fec_modes":
            got = _by_key(theirs, mine, lambda f: f.source)
        elif name == "warnings":
            got = _by_key(theirs, mine, lambda w: _file_of(w.source))
        elif name == "sms":
            got = list(mine) if mine else list(theirs)
        else:  # opensm_errors: a log read from where it stopped adds entries; the same entry twice counts once
            seen = {(e.t, e.code, e.text) for e in mine}
            got = sorted([*(e for e in theirs if (e.t, e.code, e.text) not in seen), *mine],
                         key=lambda e: e.t)[-MAX_ERRORS:]
        setattr(out, name, got)
    out.adapter_types = {**old.adapter_types, **new.adapter_types}
    out.files = [*old.files, *new.files][-MAX_FILES:]
    out.skipped = [*old.skipped, *new.skipped][-MAX_SKIPPED:]
    new_isolated = [*getattr(new, "isolated", ()), *disabled_ports(new, new.read_at.get("hca_ports", t))]
    out.isolated = _isolated(list(getattr(old, "isolated", None) or ()), new_isolated)
    stamped = {name: t for name in LISTS if getattr(new, name) or name in replace}
    if new_isolated:
        stamped["isolated"] = t
    out.read_at = {**old.read_at, **stamped, **new.read_at}
    return out


def write(fabric_id: int, new: DeviceReadings, *, replace: Collection[str] = ()) -> DeviceReadings:
    """Merge ``new`` into the fabric's device readings (:func:`merge`, under the fabric's merge lock) and store
    them; returns what is stored."""
    with merge_lock(fabric_id):
        merged = merge(cache.get(_key(fabric_id, "devices")), new, replace=replace)
        cache.set_many({_key(fabric_id, "devices"): merged, _key(fabric_id, "devices_v"): time.time_ns()}, TTL_S)
    return merged


def read(fabric_id: int) -> DeviceReadings | None:
    """The fabric's device readings (None: nothing read, swept or pushed yet, or expired)."""
    return cache.get(_key(fabric_id, "devices"))


def version(fabric_id: int) -> int | None:
    """Changes with every :func:`write` (None: no readings)."""
    return cache.get(_key(fabric_id, "devices_v"))


def forget(fabric_id: int) -> None:
    """Drop the fabric's device readings (tests, fabric deletion)."""
    cache.delete_many([_key(fabric_id, p) for p in ("devices", "devices_v")])

