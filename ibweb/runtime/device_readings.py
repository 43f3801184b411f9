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
LID, GUID and port, ``FEC_MODE`` sets and ibdiagnet warnings by the file they came from, SMs by GUID or LID (a push
names its own host's ports and SMs: it never drops another's); only the collector's own full sweep replaces the SMs
and P_Key tables as a whole (``replace``; SMs that stopped answering are kept, marked, see below); OpenSM's errors
accumulate (the newest :data:`MAX_ERRORS`). Every
other list is capped too (:data:`CAPS`, sized for a 32,768-GPU fabric; the newest kept), and :func:`check_caps`
refuses a push larger than a cap before it is stored.
SMs: a write that replaces ``sms`` (the collector's round, when at least one SM answered) keeps the SMs of the
earlier rounds that did not answer this one (a standby whose ``sminfo <lid>`` failed, or that ``saquery`` no longer
lists) for :data:`SM_KEPT_S` after they last answered: the stored readings (:class:`StoredReadings`) hold when each
SM last answered (``sm_seen``) and when the collector's last round was (``sm_round``); an SM that last answered
before that round is not answering (:func:`ibweb.live.validation.sm_silent.split_sms`): the validation report
names it.
Ports seen administratively disabled (``isolated``, :class:`~fabric_engine.devices.vitals.IsolatedPort`: an
adapter port of a push whose physical state is ``Disabled``, or one the collector's iblinkinfo shows so) are
recorded per port (node GUID and port) with the time first seen, and kept through later writes (the newest
:data:`MAX_ISOLATED` ports; no ``replace`` drops them): the isolation advice reads them as its history
(:func:`isolated_history`), so a port isolated once and failing again is flagged. Kept for :data:`TTL_S` after
the last write. The read-merge-write holds the fabric's merge lock of
:mod:`.health_readings` (a process lock, and Redis's across processes when the cache is Redis).

Isolations are also kept in the database (:func:`record_isolations`, the live app's
:class:`~ibweb.live.validation.isolations.PortIsolation`): a port seen disabled is isolated until a write shows it
enabled again (an adapter port of a push no longer ``Disabled``, or the collector's discovery), whatever the cache
keeps.

Interface (stable; other modules read through it): :func:`read`, :func:`version`, :func:`write`, :func:`merge`,
:func:`forget`.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from django.apps import apps
from django.core.cache import cache
from django.db import transaction

from fabric_engine.devices.vitals import DeviceReadings, IsolatedPort
from ibweb.db.guids import signed
from ibweb.db.retry import retry_locked

from .health_readings import merge_lock

__all__ = ["read", "version", "write", "merge", "forget", "TTL_S", "MAX_ERRORS", "MAX_FILES", "MAX_SKIPPED",
           "LISTS",
           "MAX_ISOLATED", "disabled_ports", "isolated_history", "CAPS", "cap", "check_caps", "MAX_VITALS",
           "MAX_HCA_PORTS", "MAX_ADAPTERS", "MAX_NODES_INFO", "MAX_PKEYS", "MAX_SMS", "MAX_FEC_MODES", "MAX_WARNINGS",
           "StoredReadings", "SM_KEPT_S", "record_isolations"]

#: How long a fabric's device readings are kept after the last write (a day: a push per host per day suffices).
TTL_S = 24 * 3600
#: OpenSM errors kept (the newest), entries of ``files`` and of ``skipped`` kept (the newest).
MAX_ERRORS, MAX_FILES, MAX_SKIPPED = 5_000, 256, 500
#: Ports seen isolated kept (the newest first seen).
MAX_ISOLATED = 10_000
#: Records kept per list (the newest), sized for a 32,768-GPU fabric: switch vitals (its ~2,560 radix-64 switches
#: in three tiers, with room for unmanaged ones), adapter ports and their adapters' types (a port per GPU and as
#: many again for storage and hosts), ibdiagnet node records (every CA and switch), P_Key tables (both ends of its
#: 65,536 switch-to-CA cables, twice over), SMs, ``FEC_MODE`` sets and ibdiagnet warnings (a few per port).
MAX_VITALS, MAX_HCA_PORTS, MAX_ADAPTERS, MAX_NODES_INFO = 8_192, 65_536, 65_536, 131_072
MAX_PKEYS, MAX_SMS, MAX_FEC_MODES, MAX_WARNINGS = 131_072, 128, 256, 262_144
#: The cap (its constant's name) of each list a write may not exceed (:func:`check_caps`).
CAPS = {"vitals": "MAX_VITALS", "hca_ports": "MAX_HCA_PORTS", "adapter_types": "MAX_ADAPTERS",
        "nodes_info": "MAX_NODES_INFO", "pkeys": "MAX_PKEYS", "sms": "MAX_SMS", "fec_modes": "MAX_FEC_MODES",
        "warnings": "MAX_WARNINGS"}
#: How long an SM that stopped answering the collector's rounds is kept (a week: then it counts as removed).
SM_KEPT_S = 7 * 24 * 3600
#: The record lists of :class:`DeviceReadings` a write may replace whole (``replace=``).
LISTS = ("vitals", "hca_ports", "nodes_info", "fec_modes", "warnings", "opensm_errors", "sms", "pkeys")


@dataclass
class StoredReadings(DeviceReadings):
    """The device readings as this store keeps them: ``sm_seen``, when each SM (by GUID) last answered, and
    ``sm_round``, when the collector's last SM round was (None: never)."""

    sm_seen: dict[int, float] = field(default_factory=dict)
    sm_round: float | None = None


def _round_sms(old: list, new: list, seen: dict[int, float], t: float) -> list:
    """A collector round's SMs: as :func:`_sms` merges them, of ``old`` only those that last answered within
    :data:`SM_KEPT_S` of ``t``."""
    return _sms([s for s in old if t - seen.get(s.guid, t) < SM_KEPT_S], new)


def cap(name: str) -> int:
    """The most records of list ``name`` (of :data:`CAPS`) kept."""
    return globals()[CAPS[name]]


def check_caps(readings: DeviceReadings) -> None:
    """Raise :class:`ValueError` naming the first list of ``readings`` longer than its cap (``hca_ports: 70,000
    records exceed MAX_HCA_PORTS (65,536)``): a write that large is refused, not cut. Reads lengths only."""
    for name, const in CAPS.items():  # a few lists
        n, most = len(getattr(readings, name)), cap(name)
        if n > most:
            raise ValueError(f"{name}: {n:,} records exceed {const} ({most:,})")


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


def _sms(old: list, new: list) -> list:
    """``new``'s SMs, then ``old``'s whose GUID and LID no new SM has (a push names the SMs its host asked: the
    master alone for a plain ``sminfo``; the standbys another push named stay)."""
    guids, lids = {s.guid for s in new}, {s.lid for s in new}
    return [*new, *(s for s in old if s.guid not in guids and s.lid not in lids)]


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
    or port; the lists named in ``replace`` (of :data:`LISTS`) are ``new``'s alone (``sms``: with the SMs of earlier
    rounds that did not answer this one, :func:`_round_sms`). ``new.read_at`` is kept as
    given, and every kind ``new`` holds or replaces is stamped ``now`` (default: the time) unless it has a time."""
    unknown = set(replace) - set(LISTS)
    if unknown:
        raise ValueError(f"replace: {', '.join(sorted(unknown))} not among {', '.join(LISTS)}")
    t = time.time() if now is None else float(now)
    old = old if old is not None else DeviceReadings()
    out = StoredReadings()
    sms_t = float(new.read_at.get("sms", t))
    old_seen = dict(getattr(old, "sm_seen", None) or {})
    for sm in old.sms:  # SMs stored before their answers were timed: as of their last read
        old_seen.setdefault(sm.guid, float(old.read_at.get("sms", t)))
    for name in LISTS:  # one merge per kind of record
        mine = getattr(new, name)
        theirs = [] if name in replace and name != "sms" else getattr(old, name)
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
            got = _round_sms(theirs, mine, old_seen, sms_t) if "sms" in replace else _sms(theirs, mine)
        else:  # opensm_errors: a log read from where it stopped adds entries; the same entry twice counts once
            seen = {(e.t, e.code, e.text) for e in mine}
            got = sorted([*(e for e in theirs if (e.t, e.code, e.text) not in seen), *mine],
                         key=lambda e: e.t)[-MAX_ERRORS:]
        setattr(out, name, got[:cap(name)] if name in CAPS else got)  # new records first: the newest kept
    kept = {k: v for k, v in old.adapter_types.items() if k not in new.adapter_types}
    kept.update(new.adapter_types)
    out.adapter_types = dict(list(kept.items())[-MAX_ADAPTERS:]) if len(kept) > MAX_ADAPTERS else kept
    out.files = [*old.files, *new.files][-MAX_FILES:]
    out.skipped = [*old.skipped, *new.skipped][-MAX_SKIPPED:]
    new_isolated = [*getattr(new, "isolated", ()), *disabled_ports(new, new.read_at.get("hca_ports", t))]
    out.isolated = _isolated(list(getattr(old, "isolated", None) or ()), new_isolated)
    stamped = {name: t for name in LISTS if getattr(new, name) or name in replace}
    if new_isolated:
        stamped["isolated"] = t
    out.read_at = {**old.read_at, **stamped, **new.read_at}
    answered = {**old_seen, **{sm.guid: sms_t for sm in new.sms}}
    out.sm_seen = {sm.guid: answered[sm.guid] for sm in out.sms if sm.guid in answered}
    out.sm_round = sms_t if "sms" in replace else getattr(old, "sm_round", None)
    return out


def write(fabric_id: int, new: DeviceReadings, *, replace: Collection[str] = (),
          enabled: tuple[np.ndarray, np.ndarray] | None = None) -> DeviceReadings:
    """Merge ``new`` into the fabric's device readings (:func:`merge`, under the fabric's merge lock) and store
    them; returns what is stored. The ports ``new`` shows disabled, and those it shows enabled (its adapter ports,
    and ``enabled``: node GUIDs and port numbers a discovery saw not disabled), update the fabric's isolation
    records (:func:`record_isolations`)."""
    t = time.time()
    with merge_lock(fabric_id):
        merged = merge(cache.get(_key(fabric_id, "devices")), new, replace=replace, now=t)
        cache.set_many({_key(fabric_id, "devices"): merged, _key(fabric_id, "devices_v"): time.time_ns()}, TTL_S)
    disabled = [*new.isolated, *disabled_ports(new, new.read_at.get("hca_ports", t))]
    up = [(p.guid, p.port) for p in new.hca_ports if p.phys_state != "Disabled" and p.guid is not None]
    if disabled or up or enabled is not None:
        guids = np.array([g for g, _ in up], np.uint64)
        ports = np.array([p for _, p in up], np.int64)
        if enabled is not None:
            guids = np.concatenate([guids, np.asarray(enabled[0], np.uint64)])
            ports = np.concatenate([ports, np.asarray(enabled[1], np.int64)])
        record_isolations(fabric_id, disabled, (guids, ports), t)
    return merged


def record_isolations(fabric_id: int, disabled: Collection[IsolatedPort], enabled: tuple[np.ndarray, np.ndarray],
                      now: float) -> None:
    """Keep the fabric's isolations in the database (the live app's ``PortIsolation``, by model name: the runtime
    imports no app): each port of ``disabled`` opens one (first seen at its ``t``) or is seen still disabled
    (``last_seen_at``); each open one whose port ``enabled`` names (node GUIDs and port numbers, any number) and
    ``disabled`` does not is closed at ``now`` (``enabled_at``). Nothing when the live app is not installed."""
    if not apps.is_installed("ibweb.live"):
        return
    model = apps.get_model("live", "PortIsolation")
    at = datetime.fromtimestamp(now, UTC)
    down = {(signed(int(r.guid)), int(r.port)): r for r in disabled}

    def update() -> None:
        with transaction.atomic():
            if not apps.get_model("fabrics", "Fabric").objects.filter(pk=fabric_id).exists():
                return  # readings of a fabric without its row (deleted meanwhile): nothing to keep
            open_rows = {(r.guid, r.port): r for r in model.objects.select_for_update().filter(
                fabric_id=fabric_id, enabled_at__isnull=True)}  # the ports isolated now: a few
            guids, ports = enabled
            # the enabled ports of the open rows' nodes (one vectorized look-up over what the discovery saw)
            nodes = np.array([k[0] for k in open_rows], np.int64).astype(np.uint64)
            hit = np.isin(np.asarray(guids, np.uint64), nodes)
            seen_up = {(signed(int(g)), int(p)) for g, p in
                       zip(np.asarray(guids, np.uint64)[hit].tolist(), np.asarray(ports)[hit].tolist(), strict=True)}
            for key, row in open_rows.items():  # the open isolations
                if key in down:
                    row.last_seen_at = at
                    row.save(update_fields=["last_seen_at"])
                elif key in seen_up:
                    row.enabled_at = at
                    row.save(update_fields=["enabled_at"])
            model.objects.bulk_create([
                model(fabric_id=fabric_id, guid=k[0], port=k[1], node=r.node[:200], source=r.source[:300],
                      isolated_at=datetime.fromtimestamp(min(r.t, now), UTC), last_seen_at=at)
                for k, r in down.items() if k not in open_rows], ignore_conflicts=True)  # a writer meanwhile: its row

    retry_locked(update, what=f"isolations of fabric {fabric_id}")


def read(fabric_id: int) -> DeviceReadings | None:
    """The fabric's device readings (None: nothing read, swept or pushed yet, or expired)."""
    return cache.get(_key(fabric_id, "devices"))


def version(fabric_id: int) -> int | None:
    """Changes with every :func:`write` (None: no readings)."""
    return cache.get(_key(fabric_id, "devices_v"))


def forget(fabric_id: int) -> None:
    """Drop the fabric's device readings (tests, fabric deletion)."""
    cache.delete_many([_key(fabric_id, p) for p in ("devices", "devices_v")])

