"""A fabric leader's runtime record (:mod:`ibweb.runtime.record`): published when the source's fabric or jobs change.

:class:`RecordPublisher` remembers which versions of the source the record holds (topology, job catalog) and
which record version the frames read; the runner asks it whether the record must be published again (the
source changed, or the record in the cache is no longer this runner's).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref

from fabric_engine.routing import Routing, quality
from ibweb.live.engine.publishing import TopologyChange
from ibweb.runtime import record

__all__ = ["RecordPublisher", "routing_report", "RECORD_CHECK_S"]

log = logging.getLogger("ibweb.live")

#: Seconds between checks that the runtime record in the cache is still the one this runner published.
RECORD_CHECK_S = 5.0

_reports: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_reports_lock = threading.Lock()


def routing_report(routing: Routing) -> dict:
    """The JSON-ready report of ``routing`` (:func:`fabric_engine.routing.quality.report`), once per routing object.

    A record published again for the same routing (a new leader, a lost record) reuses it:
    at 32,768 GPUs the report takes seconds.
    """
    with _reports_lock:
        done = _reports.get(routing)
    if done is None:
        done = quality.report(routing).to_dict()
        with _reports_lock:
            _reports[routing] = done
    return done


class RecordPublisher:
    """Publishes one fabric row's runtime record from its source.

    Attributes
    ----------
    version : str | None
        The newest record version this runner published.
    fabric_version : str | None
        The record version whose fabric and LFTs the newest record reads (what frames and history refer to).
    published_version, catalog_version
        The source's topology and catalog versions behind the record (None: publish it).
    """

    def __init__(self, row) -> None:
        self.row = row
        self.fabric_id = row.pk
        self.slug = row.slug
        self.mode = row.mode
        self.version: str | None = None
        self.fabric_version: str | None = None
        self.published_version = None
        self.catalog_version = None
        self.checked = time.monotonic()

    def topology_stale(self, source) -> bool:
        """Whether the source's fabric or routing changed since the record was published."""
        return source.fabric is not None and source.topology_version != self.published_version

    def jobs_stale(self, source) -> bool:
        """Whether the source's job catalog changed since the record was published."""
        return source.fabric is not None and source.catalog_version != self.catalog_version

    async def lost(self) -> bool:
        """Whether the record in the cache is no longer this runner's (a Redis restart, another writer).

        Read at most every :data:`RECORD_CHECK_S`; False in between.
        """
        if self.version is None or time.monotonic() - self.checked <= RECORD_CHECK_S:
            return False
        self.checked = time.monotonic()
        h = await asyncio.to_thread(record.head, self.fabric_id, record.row_identity(self.row))
        return h is None or h["version"] != self.version

    async def publish(self, source, announce: bool | None = True) -> TopologyChange:
        """Publish the source's fabric, routing, report and job catalog as a new record version.

        ``announce`` None: whether the record before was routed by another engine is read first
        (:attr:`TopologyChange.rerouted`).
        """
        fabric, routing = source.fabric, source.routing
        self.published_version = source.topology_version
        self.catalog_version = source.catalog_version
        catalog = source.catalog

        def build() -> tuple[str, dict | None]:
            before = record.head(self.fabric_id) if announce is None else None  # the record clients may know
            version = record.publish(self.fabric_id, record.row_identity(self.row), fabric, routing,
                                     catalog(routing), {"source": self.mode}, report=self._report(routing))
            return version, before

        self.version, before = await asyncio.to_thread(build)
        self.fabric_version = self.version
        engine_before = before.get("engine") if before is not None else None  # None: not routed (a spec record)
        rerouted = engine_before is not None and routing is not None and engine_before != routing.engine
        return TopologyChange(self.version, fabric, announce, rerouted)

    async def publish_jobs(self, source) -> bool:
        """Publish the source's new job catalog as a new record version that keeps the fabric and its LFTs.

        What a scheduler's job start or end costs the tick: the catalog, one small cache part and
        a head (:func:`ibweb.runtime.record.publish_jobs`); no snapshot. False: the cache no longer
        holds this runner's version, the whole record must be published instead.
        """
        routing, base = source.routing, self.version
        self.catalog_version = source.catalog_version
        catalog = source.catalog
        version = await asyncio.to_thread(lambda: record.publish_jobs(self.fabric_id, base, catalog(routing)))
        if version is None:
            return False
        self.version = version
        return True

    def reset(self) -> None:
        """Publish the record again from the next source (a cold standby drops its source)."""
        self.published_version = self.catalog_version = None

    def _report(self, routing) -> dict | None:
        """The routing report of ``routing`` for the record (computed once per routing: :func:`routing_report`)."""
        if routing is None:
            return None
        try:
            return routing_report(routing)
        except Exception:  # a report that cannot be made costs the report, not the record
            log.exception("fabric %s: routing report failed", self.slug)
            return None
