"""Stores the alerts a fabric's runner raises and clears: one :class:`Event` per occurrence.

The runner (:class:`ibweb.live.engine.runner.FabricRunner`) sends :data:`ibweb.live.signals.fabric_alerts`
when alerts appear or go away (and on its first tick, with everything it raises); the
receiver (:mod:`ibweb.events.receivers`) hands each signal to this fabric's
:class:`EventRecorder`. A raised alert opens an event (or reopens one cleared less than
:data:`REOPEN_S` ago: a flapping port stays one event); a cleared one closes it and adds the
ticks it was raised to its ``count``. Everything is timed by the ticks' wall time (``raised_at``),
never by sequence numbers: those start again at 1 when an engine restarts without a shared cache.
The recorder keeps the keys of the open events in memory and reloads them from the database after
a restart; on a runner's first tick, events still open from an earlier runner that it does not
raise again are closed (at that tick: when they ended in between is not known).

Writes: each signal becomes intents (raise or clear an alert's key, at a time) queued in order and
written in one transaction; if that fails, each event is written in its own transaction, so one
bad row never drops the others. A write that fails stays queued and is tried again on later ticks
(:meth:`EventRecorder.on_frame`, backing off) up to :data:`MAX_ATTEMPTS` times; every failure is
logged with the event's key and counted (:mod:`ibweb.events.health`: ``/metrics`` and the events
page). Every :data:`RECONCILE_S` the open events are checked against a whole frame's alerts: one no
longer raised (its clear lost) is closed.

Retention: closed events whose ``last_seen`` is older than ``IBWEB_EVENT_RETENTION_DAYS``
(30) are deleted, and a fabric keeps at most ``IBWEB_EVENT_MAX_ROWS`` (100,000) events;
:func:`prune` runs at most hourly from the recorder, from Celery beat and from
``manage.py prune_events``.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import Count

from ibweb.access.alert_objects import FabricNames
from ibweb.db.retry import is_transient, retry_locked

from . import health
from .choices import SEVERITY_RANK
from .facts import AlertFact, alert_key, fact_of
from .models import Event
from .signals import events_changed

__all__ = ["EventRecorder", "recorder_for", "prune", "REOPEN_S", "RETENTION_DAYS", "MAX_ROWS", "MAX_ATTEMPTS",
           "RECONCILE_S"]

#: An event raised again within this many seconds of closing reopens.
REOPEN_S = 60.0
#: A write that fails is tried this many times in all (on later ticks, backing off to 30 s), then given up.
MAX_ATTEMPTS = 8
#: Seconds between checks of the open events against a whole frame's alerts.
RECONCILE_S = 30.0
RETENTION_DAYS = float(getattr(settings, "IBWEB_EVENT_RETENTION_DAYS", 30))
MAX_ROWS = int(getattr(settings, "IBWEB_EVENT_MAX_ROWS", 100_000))
_PRUNE_EVERY_S = 3600.0
_RECORDERS: dict[int, EventRecorder] = {}
log = logging.getLogger("ibweb.events")
_RECORDERS_LOCK = threading.Lock()


def prune(now: datetime | None = None, days: float = RETENTION_DAYS, max_rows: int = MAX_ROWS,
          fabric_id: int | None = None) -> int:
    """Delete closed events older than ``days`` and the oldest closed ones beyond ``max_rows`` per fabric."""
    now = now or datetime.now(tz=UTC)
    qs = Event.objects.all() if fabric_id is None else Event.objects.filter(fabric_id=fabric_id)
    deleted, _ = qs.filter(active=False, last_seen__lt=now - timedelta(days=days)).delete()
    fabrics = [fabric_id] if fabric_id is not None else qs.values_list("fabric_id", flat=True).distinct()
    for fid in fabrics:
        excess = Event.objects.filter(fabric_id=fid).count() - max_rows
        if excess > 0:  # the oldest closed events go first; open ones are never deleted
            oldest = list(Event.objects.filter(fabric_id=fid, active=False).order_by("last_seen", "pk")
                          .values_list("pk", flat=True)[:excess])
            n, _ = Event.objects.filter(pk__in=oldest).delete()
            deleted += n
    return deleted


def recorder_for(fabric_id: int) -> EventRecorder:
    """This process's recorder of a fabric."""
    with _RECORDERS_LOCK:
        if fabric_id not in _RECORDERS:
            _RECORDERS[fabric_id] = EventRecorder(fabric_id)
        return _RECORDERS[fabric_id]


@dataclass
class _Intent:
    """What one signal said of one alert: raised (with its ``fact``) or cleared (``fact`` None) at ``when``.

    ``first``: a runner's first tick, raising the keys ``up`` (every other open event is over).
    """

    key: str
    when: datetime
    fact: AlertFact | None = None
    attempts: int = 0
    up: frozenset[str] | None = None


class EventRecorder:
    """Deduplicating store of one fabric's alerts."""

    def __init__(self, fabric_id: int, reopen_s: float = REOPEN_S) -> None:
        self.fabric_id = fabric_id
        self.reopen_s = reopen_s
        self._open: dict[str, int] | None = None  # key -> pk of the events open in the database
        self._tick_s = 1.0
        self._pending: list[_Intent] = []  # intents not written yet, in the order of their signals
        self._retry_at = 0.0  # monotonic time of the next retry of what is pending
        self._newest_t = 0.0  # tick time of the newest signal recorded
        self._reconciled = time.monotonic()
        self._fabric = None
        self._names: FabricNames | None = None
        self._lock = threading.Lock()
        self._pruned_at = 0.0

    def _names_of(self, fabric) -> FabricNames | None:
        """The :class:`FabricNames` of ``fabric`` (built once per fabric object), or ``None`` without one."""
        if fabric is None:
            return None
        if fabric is not self._fabric:
            self._fabric, self._names = fabric, FabricNames(fabric)
        return self._names

    @property
    def pending(self) -> int:
        """Intents waiting for a write that failed (0 normally)."""
        return len(self._pending)

    def apply(self, raised: list[dict], cleared: list[dict], seq: int, t: float, first: bool = False,
              fabric=None, jobs: list[dict] | None = None) -> list[Event]:
        """Record one signal of the runner; returns the events opened or reopened.

        ``fabric`` (the engine :class:`~fabric_engine.topology.Fabric`) resolves the hosts each alert
        names (:mod:`ibweb.access.alert_objects`), ``jobs`` (the job catalog: ``{"id", "tenant"}``) gives
        each job its tenant. ``seq`` is only logged: a restarted engine numbers its ticks from 1 again.
        """
        tenants = {j["id"]: j.get("tenant") for j in jobs or []}
        names = self._names_of(fabric)
        up = {f.key: f for f in (fact_of(a, tenants, names=names) for a in raised)}
        down = {alert_key(a) for a in cleared} - set(up)
        when = datetime.fromtimestamp(t, tz=UTC)
        with self._lock:
            self._newest_t = max(self._newest_t, t)
            if first:  # a new runner (here or in another process, which may have written since): read them again
                self._open = None
                self._pending.append(_Intent("", when, up=frozenset(up)))
            self._pending += [_Intent(k, when) for k in sorted(down)]
            self._pending += [_Intent(k, when, f) for k, f in up.items()]
            opened = self._flush(f"signal of tick {seq}")
        if time.monotonic() - self._pruned_at > _PRUNE_EVERY_S:
            self._pruned_at = time.monotonic()
            try:  # the events are stored: a prune that fails is tried again within the hour
                prune(when, fabric_id=self.fabric_id)
            except OperationalError as exc:
                self._pruned_at -= _PRUNE_EVERY_S - 60.0
                log.warning("fabric %s: pruning events failed: %s", self.fabric_id, exc)
        return opened

    def on_frame(self, frame: dict) -> None:
        """Each published frame: retry the writes that failed (when due); every :data:`RECONCILE_S`, close the
        open events that ``frame`` no longer raises (a clear that never reached the recorder)."""
        now = time.monotonic()
        if self._pending and now >= self._retry_at:
            with self._lock:
                self._flush("retry")
        t = float(frame.get("t") or 0.0)
        if now - self._reconciled < RECONCILE_S or self._pending or self._open is None or t < self._newest_t:
            return
        self._reconciled = now
        keys = {alert_key(a) for a in frame.get("alerts") or ()}
        with self._lock:
            if t < self._newest_t or self._pending:  # a newer signal was recorded meanwhile
                return
            gone = sorted(set(self._open) - keys)
            if gone:
                log.warning("fabric %s: %d open events no longer raised (their clear was lost), closed: %s",
                            self.fabric_id, len(gone), ", ".join(gone[:5]))
                when = datetime.fromtimestamp(t, tz=UTC)
                self._pending += [_Intent(k, when) for k in gone]
                self._flush("reconcile")

    # ------------------------------------------------------------- writing
    def _flush(self, what: str) -> list[Event]:
        """Write the pending intents (called with the lock held); what fails stays pending. Returns the opened."""
        if self._open is None:
            try:
                self._open, self._tick_s = retry_locked(self._load, what=f"open events of fabric {self.fabric_id}")
            except Exception as exc:  # the database cannot be read: everything stays pending
                ops, self._pending = self._pending, []
                self._failed(ops, exc, what)
                return []
        ops = self._resolve(self._pending)
        self._pending = []
        if not ops:
            return []
        if len({op.key for op in ops}) == len(ops):  # the usual case: all in one transaction
            try:
                changes, opened = retry_locked(self._write, ops, what=f"events of fabric {self.fabric_id}")
            except Exception as exc:
                if is_transient(exc):  # locked past the wait: every write stays pending
                    self._failed(ops, exc, what)
                    return []
                log.warning("fabric %s: writing %d events at once failed (%s); writing each alone",
                            self.fabric_id, len(ops), exc)
            else:
                self._open.update(changes)
                self._open = {k: pk for k, pk in self._open.items() if pk is not None}
                return opened
        return self._write_each(ops, what)

    def _write_each(self, ops: list[_Intent], what: str) -> list[Event]:
        """Each event in its own transaction, its intents in order; a key whose write fails keeps the rest."""
        opened: list[Event] = []
        stuck: set[str] = set()
        for op in ops:
            if op.key in stuck:
                self._pending.append(op)
                continue
            try:
                changes, new = retry_locked(self._write, [op], max_wait_s=30.0,
                                            what=f"event {op.key} of fabric {self.fabric_id}")
            except Exception as exc:
                stuck.add(op.key)
                self._failed([op], exc, what)
                continue
            for key, pk in changes.items():
                if pk is None:
                    self._open.pop(key, None)
                else:
                    self._open[key] = pk
            opened += new
        return opened

    def _failed(self, ops: list[_Intent], exc: BaseException, what: str) -> None:
        """Keep ``ops`` pending (those tried :data:`MAX_ATTEMPTS` times are given up), log and count the failure."""
        kept, dropped = [], []
        for op in ops:
            op.attempts += 1
            (dropped if op.attempts >= MAX_ATTEMPTS else kept).append(op)
        self._pending = kept + self._pending
        names = ", ".join(op.key or "(first tick)" for op in ops[:5])
        log.warning("fabric %s: %s: writing %d events failed (%s), kept to retry: %s", self.fabric_id, what,
                    len(ops), exc, names)
        if dropped:
            log.error("fabric %s: %d event writes given up after %d attempts: %s", self.fabric_id, len(dropped),
                      MAX_ATTEMPTS, ", ".join(op.key or "(first tick)" for op in dropped[:5]))
        health.count_failure(self.fabric_id, len(ops), len(dropped))
        tries = min((op.attempts for op in kept), default=0)
        self._retry_at = time.monotonic() + min(30.0, 2.0 ** max(0, tries - 1))

    def _load(self) -> tuple[dict[str, int], float]:
        from ibweb.fabrics.models import Fabric

        tick_s = Fabric.objects.filter(pk=self.fabric_id).values_list("tick_s", flat=True).first() or 1.0
        return dict(Event.objects.filter(fabric_id=self.fabric_id, active=True).values_list("key", "pk")), tick_s

    def _resolve(self, intents: list[_Intent]) -> list[_Intent]:
        """The intents that change something, given the open events: raise what is not open, clear what is.

        A first tick's intent becomes a clear of every event open then that it does not raise.
        """
        is_open = set(self._open)
        ops: list[_Intent] = []
        for it in intents:
            if it.up is not None:
                ops += [_Intent(k, it.when, attempts=it.attempts) for k in sorted(is_open - it.up)]
                is_open &= it.up
            elif it.fact is None and it.key in is_open:
                ops.append(it)
                is_open.discard(it.key)
            elif it.fact is not None and it.key not in is_open:
                ops.append(it)
                is_open.add(it.key)
        return ops

    def _write(self, ops: list[_Intent]) -> tuple[dict[str, int | None], list[Event]]:
        """Apply ``ops`` (one per key) in one transaction: key -> pk of the events opened, None of those closed."""
        with transaction.atomic():
            closes = [op for op in ops if op.fact is None]
            changes: dict[str, int | None] = {op.key: None for op in closes}
            self._close(closes)
            opened = self._raise([op for op in ops if op.fact is not None])
        changes.update({e.key: e.pk for e in opened})
        # issue 39 (notifications): tell receivers what opened and closed once it is committed
        for _, err in events_changed.send_robust(EventRecorder, fabric_id=self.fabric_id,
                                                 opened=[e.pk for e in opened],
                                                 closed=[self._open[op.key] for op in closes]):
            if isinstance(err, Exception):
                log.error("fabric %s: events_changed receiver failed: %r", self.fabric_id, err)
        return changes, opened

    def _close(self, ops: list[_Intent]) -> None:
        """Close the open events of ``ops``, adding the ticks of their stretch (from wall time) to ``count``."""
        if not ops:
            return
        when = {self._open[op.key]: op.when for op in ops}
        rows = list(Event.objects.filter(pk__in=list(when)).only("pk", "count", "raised_at", "last_seen"))
        for e in rows:
            opened = e.raised_at or e.last_seen
            end = max(when[e.pk], opened)  # a clock set back never makes a stretch negative
            e.count += max(1, round((end - opened).total_seconds() / max(self._tick_s, 1e-3)))
            e.active, e.cleared_at, e.last_seen, e.raised_at = False, end, end, None
        Event.objects.bulk_update(rows, ["count", "active", "cleared_at", "last_seen", "raised_at"], batch_size=500)

    def _raise(self, ops: list[_Intent]) -> list[Event]:
        """Reopen the events of ``ops`` closed within ``reopen_s``; create the others."""
        from ibweb.tenancy.models import Tenant

        if not ops:
            return []
        keys = [op.key for op in ops]
        at = {op.key: op.when for op in ops}
        recent = (Event.objects.filter(fabric_id=self.fabric_id, key__in=keys, active=False,
                                       cleared_at__gte=min(at.values()) - timedelta(seconds=self.reopen_s))
                  .order_by("key", "-cleared_at"))
        reopened: dict[str, Event] = {}
        for event in recent:
            if event.cleared_at >= at[event.key] - timedelta(seconds=self.reopen_s):
                reopened.setdefault(event.key, event)
        for key, event in reopened.items():
            fact = next(op.fact for op in ops if op.key == key)
            event.active, event.cleared_at, event.last_seen, event.raised_at = True, None, at[key], at[key]
            event.message, event.hosts, event.jobs, event.resolved = fact.message, fact.hosts, fact.jobs, fact.resolved
            event.parts = fact.parts
            event.save(update_fields=["active", "cleared_at", "last_seen", "raised_at", "message", "hosts", "jobs",
                                      "resolved", "parts"])
        facts = [op.fact for op in ops if op.key not in reopened]
        fresh = [f.key for f in facts]
        before = dict(Event.objects.filter(fabric_id=self.fabric_id, key__in=fresh).order_by().values("key")
                      .annotate(n=Count("pk")).values_list("key", "n")) if fresh else {}
        slugs = {f.tenant for f in facts if f.tenant}
        tenant_ids = {}
        for pk, slug, name in Tenant.objects.filter(slug__in=slugs).values_list("pk", "slug", "name") if slugs else ():
            tenant_ids[slug] = tenant_ids[name] = pk
        if slugs - set(tenant_ids):  # jobs may name their tenant by name
            for pk, slug, name in Tenant.objects.filter(name__in=slugs).values_list("pk", "slug", "name"):
                tenant_ids[slug] = tenant_ids[name] = pk
        new = Event.objects.bulk_create([
            Event(fabric_id=self.fabric_id, key=f.key, kind=f.kind, severity=f.severity,
                  rank=SEVERITY_RANK.get(f.severity, 1), object_type=f.object_type, object_id=f.object_id,
                  link=f.link, node=f.node[:100], job=f.job[:100], tenant_id=tenant_ids.get(f.tenant),
                  hosts=f.hosts, jobs=f.jobs, resolved=f.resolved, parts=f.parts, message=f.message,
                  details=f.details,
                  first_seen=at[f.key], last_seen=at[f.key], count=0, raised_at=at[f.key],
                  occurrence=before.get(f.key, 0) + 1)
            for f in facts])
        if any(e.pk is None for e in new):  # backends that do not return keys from bulk inserts
            new = list(Event.objects.filter(fabric_id=self.fabric_id, active=True, key__in=[e.key for e in new]))
        return [*reopened.values(), *new]
