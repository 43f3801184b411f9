"""Stores the alerts a fabric's runner raises and clears: one :class:`Event` per occurrence.

The runner (:class:`ibweb.live.runner.FabricRunner`) sends :data:`ibweb.live.signals.fabric_alerts`
when alerts appear or go away (and on its first tick, with everything it raises); the
receiver (:mod:`ibweb.events.receivers`) hands each signal to this fabric's
:class:`EventRecorder`. A raised alert opens an event (or reopens one cleared less than
:data:`REOPEN_S` ago: a flapping port stays one event); a cleared one closes it and adds the
ticks it was raised to its ``count``. The recorder keeps the keys of the open events in
memory and reloads them from the database after a restart; on a runner's first tick,
events still open from an earlier runner that it does not raise again are closed.

Retention: closed events whose ``last_seen`` is older than ``IBWEB_EVENT_RETENTION_DAYS``
(30) are deleted, and a fabric keeps at most ``IBWEB_EVENT_MAX_ROWS`` (100,000) events;
:func:`prune` runs at most hourly from the recorder, from Celery beat and from
``manage.py prune_events``.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import Count, F

from .choices import SEVERITY_RANK
from .facts import AlertFact, fact_of
from .models import Event
from .objects import FabricNames

__all__ = ["EventRecorder", "recorder_for", "prune", "REOPEN_S", "RETENTION_DAYS", "MAX_ROWS"]

#: An event raised again within this many seconds of closing reopens.
REOPEN_S = 60.0
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


class EventRecorder:
    """Deduplicating store of one fabric's alerts."""

    def __init__(self, fabric_id: int, reopen_s: float = REOPEN_S) -> None:
        self.fabric_id = fabric_id
        self.reopen_s = reopen_s
        self._open: dict[str, int] | None = None
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

    def apply(self, raised: list[dict], cleared: list[dict], seq: int, t: float, first: bool = False,
              fabric=None, jobs: list[dict] | None = None) -> list[Event]:
        """Record one signal of the runner; returns the events opened or reopened.

        ``fabric`` (the engine :class:`~fabric_engine.topology.Fabric`) resolves the hosts each alert
        names (:mod:`ibweb.events.objects`), ``jobs`` (the job catalog: ``{"id", "tenant"}``) gives
        each job its tenant.
        """
        tenants = {j["id"]: j.get("tenant") for j in jobs or []}
        names = self._names_of(fabric)
        up = {f.key: f for f in (fact_of(a, tenants, names=names) for a in raised)}
        down = {fact_of(a).key for a in cleared} - set(up)
        when = datetime.fromtimestamp(t, tz=UTC)
        with self._lock:
            try:
                with transaction.atomic():
                    if self._open is None:
                        self._open = dict(Event.objects.filter(fabric_id=self.fabric_id, active=True)
                                          .values_list("key", "pk"))
                    if first:  # what an earlier runner left open and this one does not raise is over
                        down |= set(self._open) - set(up)
                    self._close([k for k in down if k in self._open], seq, when)
                    opened = self._raise([f for k, f in up.items() if k not in self._open], seq, when)
            except BaseException:
                self._open = None  # rolled back: the open events are read again (the call may be retried)
                raise
        if time.monotonic() - self._pruned_at > _PRUNE_EVERY_S:
            self._pruned_at = time.monotonic()
            try:  # the events are stored: a prune that fails is tried again within the hour
                prune(when, fabric_id=self.fabric_id)
            except OperationalError as exc:
                self._pruned_at -= _PRUNE_EVERY_S - 60.0
                log.warning("fabric %s: pruning events failed: %s", self.fabric_id, exc)
        return opened

    def _close(self, keys: list[str], seq: int, when: datetime) -> None:
        if not keys:
            return
        pks = [self._open.pop(k) for k in keys]
        Event.objects.filter(pk__in=pks, raised_seq__isnull=False).update(
            count=F("count") + (seq - F("raised_seq")))
        Event.objects.filter(pk__in=pks).update(active=False, cleared_at=when, last_seen=when, raised_seq=None)

    def _raise(self, facts: list[AlertFact], seq: int, when: datetime) -> list[Event]:
        """Reopen the events of ``facts`` closed within ``reopen_s``; create the others."""
        from ibweb.tenancy.models import Tenant

        if not facts:
            return []
        keys = [f.key for f in facts]
        recent = (Event.objects.filter(fabric_id=self.fabric_id, key__in=keys, active=False,
                                       cleared_at__gte=when - timedelta(seconds=self.reopen_s))
                  .order_by("key", "-cleared_at"))
        reopened: dict[str, Event] = {}
        for event in recent:
            reopened.setdefault(event.key, event)
        for key, event in reopened.items():
            fact = next(f for f in facts if f.key == key)
            event.active, event.cleared_at, event.last_seen = True, None, when
            event.raised_seq, event.message = seq, fact.message
            event.hosts, event.jobs, event.resolved = fact.hosts, fact.jobs, fact.resolved
            event.save(update_fields=["active", "cleared_at", "last_seen", "raised_seq", "message", "hosts", "jobs",
                                      "resolved"])
        fresh = [f.key for f in facts if f.key not in reopened]
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
                  hosts=f.hosts, jobs=f.jobs, resolved=f.resolved, message=f.message, details=f.details,
                  first_seen=when, last_seen=when, count=0, raised_seq=seq, occurrence=before.get(f.key, 0) + 1)
            for f in facts if f.key not in reopened])
        if any(e.pk is None for e in new):  # backends that do not return keys from bulk inserts
            new = list(Event.objects.filter(fabric_id=self.fabric_id, active=True, first_seen=when,
                                            key__in=[e.key for e in new]))
        opened = [*reopened.values(), *new]
        for event in opened:
            self._open[event.key] = event.pk
        return opened
