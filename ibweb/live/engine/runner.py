"""The fabric runner: one loop for every kind of fabric, leading it and driving its source once per tick.

The source (:mod:`ibweb.live.engine.sources`: emulated, telemetry, ...) only turns a fabric into
states. The runner does the rest, the same way for every kind:

* **leadership**: with ``REDIS_URL`` several processes may run the same fabric; only the
  holder of its leader lock publishes, a standby takes over when the lock expires and
  continues the sequence numbers;
* **sequence numbers**: one per published frame, continuing across restarts and leaders (the
  runner is their one owner: a source numbers a state with the ``seq`` it is given);
* **the runtime record and policy**: the record is published again when the source's topology or
  jobs change (:mod:`~ibweb.live.engine.record_publisher`), the fabric's partitions and QoS reach the
  source within one tick of a change (:mod:`~ibweb.live.engine.policy`);
* **publishing**: each new record and each state go to its publishers
  (:class:`~ibweb.live.engine.publishing.Publisher`), in this order: ``/metrics`` counters
  (:mod:`~ibweb.live.engine.metrics_publisher`), link health (:mod:`~ibweb.live.engine.health_publisher`: its
  alerts join the tick's), the feed (:mod:`ibweb.live.feed.publisher`), the history ring and its rollups
  (:mod:`ibweb.live.history.publisher`), the :mod:`ibweb.live.signals` (:mod:`ibweb.live.signals_publisher`);
* **progress**: clients that connect while the source starts are told how far it is.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

from django.conf import settings

from fabric_engine.allocator import release_freed_memory
from fabric_engine.state import FabricState
from ibweb.live.engine.health_publisher import HealthPublisher
from ibweb.live.engine.leader import LeaderLock, NoLock
from ibweb.live.engine.metrics_publisher import MetricsPublisher
from ibweb.live.engine.policy import PolicyApplier
from ibweb.live.engine.publishing import Publisher, Tick
from ibweb.live.engine.record_publisher import RecordPublisher
from ibweb.live.engine.renewal import renewing
from ibweb.live.engine.share import FabricShare
from ibweb.live.engine.sources import source_for
from ibweb.live.feed.frame_store import broadcast_progress, broadcast_snapshot, last_seq, set_starting
from ibweb.live.feed.publisher import FeedPublisher
from ibweb.live.history import ring
from ibweb.live.history.publisher import HistoryPublisher
from ibweb.live.history.tsdb_publisher import TsdbPublisher
from ibweb.live.signals_publisher import SignalsPublisher

__all__ = ["FabricRunner"]

log = logging.getLogger("ibweb.live")


async def _unannounced(fraction: float, message: str, status: str = "running") -> None:
    """Start-up progress nobody is told of (a standby starting while another process leads)."""


class FabricRunner:
    """Runs one fabric row: starts its source, then ticks until cancelled.

    Parameters
    ----------
    row : ibweb.fabrics.models.Fabric
        The fabric; its ``mode`` chooses the source (:func:`~ibweb.live.engine.sources.source_for`).
    share : FabricShare, optional
        The process's place among engine processes on Redis (None: it leads alone).
    """

    def __init__(self, row, share: FabricShare | None = None) -> None:
        self.row = row
        self.share = share
        self._free_since: float | None = None  # when this standby first saw the fabric's lock free
        self.fabric_id = row.pk
        self.slug = row.slug
        self.mode = row.mode
        self.tick_s = row.tick_s
        self.source = source_for(row.mode)(row)
        self.seq = 0
        self.records = RecordPublisher(row)
        self.policy = PolicyApplier(row)
        # link health before the feed and the signals: its conditions' alerts join the tick's
        self.publishers: list[Publisher] = [MetricsPublisher(self.fabric_id),
                                            HealthPublisher(self.fabric_id, lambda: self.source), FeedPublisher(row),
                                            HistoryPublisher(self.fabric_id, self.slug),
                                            TsdbPublisher(row),
                                            SignalsPublisher(self.fabric_id, self.slug, sender=FabricRunner)]
        self._step_ms: float | None = None  # the engine's last step, wall time (frames' totals.step_ms)
        self._stopping = False

    @property
    def record_version(self) -> str | None:
        """The newest runtime record version this runner published."""
        return self.records.version

    @property
    def fabric_version(self) -> str | None:
        """The record version whose fabric and LFTs the newest record reads (what frames refer to)."""
        return self.records.fabric_version

    def pending(self) -> list[asyncio.Task]:
        """Tasks the publishers started that may still run (signals being sent, rollups)."""
        return [task for publisher in self.publishers for task in publisher.pending()]

    # ------------------------------------------------------------------ start
    async def _progress(self, fraction: float, message: str, status: str = "running") -> None:
        payload = {"task": "engine", "id": self.fabric_id, "fraction": fraction, "status": status, "message": message}
        await set_starting(self.fabric_id, payload if status == "running" else None)
        if status != "running":
            await broadcast_progress(self.fabric_id, payload)

    async def start(self, publish: bool = True, announce: bool = True) -> None:
        """Start the source and (``publish``) publish its topology; a standby publishes once it leads.

        ``announce``: clients that connect meanwhile are sent ``progress`` messages, then the snapshot.
        Not while another process leads: its clients watch a live fabric, not this start.
        """
        progress = self._progress if announce else _unannounced
        await progress(0.01, "starting the engine")
        await self.source.start(progress)
        # a restart continues the sequence (the embedded default's ring on disk remembers it)
        kept = await asyncio.to_thread(ring.last_seq, self.fabric_id)
        self.seq = max(self.seq, await last_seq(self.fabric_id), kept)
        published = publish and self.source.fabric is not None
        if published:
            await progress(0.8, "publishing the fabric")
            await self.publish_topology(announce=False)
        await progress(1.0, "running", status="done")
        routing = self.source.routing
        log.info("fabric %s: engine started%s%s", self.slug, "" if announce else " (another process leads or led it)",
                 f", routing in use: {routing.engine_used}" if routing is not None else "")
        if published:
            await broadcast_snapshot(self.fabric_id)

    # ---------------------------------------------------------- record, policy
    async def publish_topology(self, announce: bool | None = True) -> None:
        """Publish the source's runtime record, then hand it to the publishers (topology, snapshot, signal).

        ``announce``: True always, False never, None only when the topology or header differs
        from what clients were sent, or the record before was routed by another engine (not
        for a new leader taking over an unchanged fabric).
        """
        change = await self.records.publish(self.source, announce)
        self.policy.reset()  # the policy names GUIDs of this fabric: build it again
        for publisher in self.publishers:
            await publisher.topology_changed(change)

    async def publish_jobs(self) -> None:
        """Publish the source's new job catalog as a new record version that keeps the fabric and its LFTs
        (no snapshot); the whole record when the cache no longer holds this runner's version."""
        if not await self.records.publish_jobs(self.source):
            await self.publish_topology(announce=None)

    async def apply_policy_changes(self) -> None:
        """Hand the fabric's partitions and QoS to the source when they changed since the last tick."""
        await self.policy.apply(self.source, self.records.version, self.records.published_version)

    # ------------------------------------------------------------------- tick
    async def tick(self) -> int:
        """Apply policy changes, then compute and publish one frame; returns its sequence number (0: none)."""
        if await self.records.lost():  # the record lost (a Redis restart) or replaced: publish again
            await self.publish_topology()
        await self.apply_policy_changes()
        seq = self.seq + 1
        started = time.perf_counter()
        state = await self.source.step(seq, time.time())
        self._step_ms = (time.perf_counter() - started) * 1000
        if self.records.topology_stale(self.source):
            await self.publish_topology()
            await self.apply_policy_changes()  # the new record's tenant host sets, on this tick
        elif self.records.jobs_stale(self.source):
            await self.publish_jobs()  # new jobs: a new record version of the same fabric, no new snapshot
            await self.apply_policy_changes()
        if state is None:
            return 0
        self.seq = seq
        await self.publish(state)
        return seq

    async def publish(self, state: FabricState) -> None:
        """Hand ``state`` to the publishers, in order: ``/metrics``, link health, the feed, the history ring, the
        signals."""
        f = self.source.fabric
        totals = {"hosts": f.num_hosts, "switches": f.num_switches, "links": f.num_links, **self.source.totals()}
        if self._step_ms is not None:
            totals["step_ms"] = round(self._step_ms, 1)
        tick = Tick(state, f, totals, self.source.counters(), self.policy.version, self.source.cables_down())
        for publisher in self.publishers:
            await publisher.publish(self.fabric_version, tick)

    # -------------------------------------------------------------------- run
    async def run(self) -> None:
        """Tick on a fixed schedule until cancelled (or :meth:`request_stop`), while this process leads the fabric.

        A standby polls for leadership every tick; on taking over it continues the
        sequence numbers where the previous leader stopped. A failed tick (or a
        Redis outage) is logged and retried, never fatal.
        """
        lock = LeaderLock(settings.REDIS_URL, self.fabric_id, ttl_s=max(3.0, 3 * self.tick_s),
                          namespace=settings.REDIS_NAMESPACE) if settings.REDIS_URL else NoLock()
        # Sharing fabrics with other engine processes, a runner builds its source only once the fabric is its
        # to lead (a cold standby: each process holds its share in memory, not every fabric).
        started = False
        if self.share is None or not isinstance(lock, LeaderLock):
            await self._start_under(lock)
            started = True
        next_at = time.monotonic()
        try:
            while not self._stopping:
                try:
                    was_leader = lock.held
                    may_lead = await self._may_lead(lock)
                    if was_leader and not lock.held and started and self.share is not None:
                        await self._go_cold()  # handed over: hold only this process's share in memory
                        started = False
                    if may_lead and not started:  # not before the members settled: a share may still move
                        may_lead = self.share.settled() and await lock.hold()
                        if may_lead:
                            await self._start_holding(lock)
                            started = True
                    if may_lead and await lock.hold():
                        async with renewing(lock, self.slug):
                            if not was_leader and isinstance(lock, LeaderLock):
                                self.seq = max(self.seq, await last_seq(self.fabric_id))
                                log.info("fabric %s: this process leads from seq %d", self.slug, self.seq)
                                if self.source.fabric is not None:  # this leader's record (no new snapshot)
                                    await self.publish_topology(announce=None)
                            await self.tick()
                except Exception:
                    log.exception("fabric %s: tick failed", self.slug)
                next_at = max(next_at + self.tick_s, time.monotonic() - self.tick_s)
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        finally:
            await asyncio.shield(self.stop(lock))

    async def _start_holding(self, lock: LeaderLock) -> None:
        """Build the source while holding the fabric's lock: the others see the fabric led and wait, rather
        than take it as left free and build it too."""
        async with renewing(lock, self.slug):
            await self._start_under(lock)

    async def _go_cold(self) -> None:
        """Drop the source and what was derived from it, as a cold standby that never led holds nothing.

        The next time this process is assigned the fabric it builds it again (what a takeover costs anyway).
        """
        await self.source.stop()
        self.source = source_for(self.mode)(self.row)
        self.records.reset()
        self.policy.reset()
        for publisher in self.publishers:
            publisher.reset()
        await asyncio.to_thread(lambda: (gc.collect(), release_freed_memory()))
        log.info("fabric %s: dropped after the hand-over (a cold standby)", self.slug)

    async def _start_under(self, lock) -> None:
        """Start the source; its clients are told of the start unless another process leads or led the fabric."""
        try:
            standby = await lock.led_elsewhere() or (self.share is not None and await last_seq(self.fabric_id) > 0)
        except Exception:  # Redis unreachable: say that this start is under way
            log.exception("fabric %s: cannot read its leader lock", self.slug)
            standby = False
        await self.start(publish=isinstance(lock, NoLock), announce=not standby)

    async def _may_lead(self, lock) -> bool:
        """Whether to hold the lock this tick, with engine processes sharing the fabrics (see engine.share).

        Yes when it is held and still assigned here, or assigned here, or left free by everyone for longer
        than a member's beat can lapse (the process it is assigned to does not take it). A held lock of a
        fabric now assigned elsewhere is handed over once the assignment has settled.
        """
        share = self.share
        if share is None or not isinstance(lock, LeaderLock):
            return True
        if lock.held:
            if share.mine(self.fabric_id) or not share.settled():
                return True
            await lock.resign()
            self._free_since = None
            log.info("fabric %s: handed over to engine process %s at seq %d", self.slug,
                     share.assignment.get(self.fabric_id), self.seq)
            return False
        if share.mine(self.fabric_id):
            return True
        if not share.settled() or await lock.led_elsewhere():
            self._free_since = None
            return False
        now = time.monotonic()
        self._free_since = self._free_since or now
        return now - self._free_since >= share.ttl_s + 2 * share.beat_s

    def request_stop(self) -> None:
        """End :meth:`run` after the current tick, even if a library swallowed the task's cancellation.

        Seen on Redis: a cancelled runner ticked on, its task "cancelling" for ever (a call
        under it dropped the cancellation; Python 3.11's ``asyncio.wait_for``, which redis-py
        uses, can drop one that arrives as its inner call finishes).
        """
        self._stopping = True

    async def stop(self, lock=None) -> None:
        """Release the leader lock and what the source holds."""
        try:
            await self.source.stop()
        finally:
            if lock is not None:
                await lock.release()
