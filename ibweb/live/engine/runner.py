"""The fabric runner: one loop for every kind of fabric, driving its source once per tick.

The source (:mod:`ibweb.live.engine.sources`: emulated, telemetry, ...) only turns a fabric into
states. The runner does everything else, the same way for every kind:

* **leadership**: with ``REDIS_URL`` several processes may run the same fabric; only the
  holder of its leader lock publishes, a standby takes over when the lock expires and
  continues the sequence numbers;
* **sequence numbers**: one per published frame, continuing across restarts and leaders (the
  runner is their one owner: a source numbers a state with the ``seq`` it is given);
* **policy**: the fabric's partitions and QoS reach the source within one tick of a change, and
  each tenant's hosts reach the runtime record (what every process redacts with);
* **publishing**: the topology and the runtime record when the source's topology changes,
  one frame per tick (to the feed and the cache), the history ring, minute rollups,
  ``/metrics`` counters, and the :mod:`ibweb.live.signals` of raised and cleared alerts;
* **progress**: clients that connect while the source starts are told how far it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import threading
import time
import weakref

from asgiref.sync import sync_to_async
from django.conf import settings

from fabric_engine.allocator import release_freed_memory
from fabric_engine.errors import FabricEngineError
from fabric_engine.formats.json_format import to_json
from fabric_engine.policy import Policy
from fabric_engine.routing import Routing, quality
from fabric_engine.state import FabricState
from ibweb.access import tenant_host_sets
from ibweb.db_retry import retry_locked
from ibweb.live.engine.leader import LeaderLock, NoLock
from ibweb.live.engine.policy_watch import PolicyVersionWatch
from ibweb.live.engine.share import FabricShare
from ibweb.live.engine.sources import source_for
from ibweb.live.feed import view_registry as viewreg
from ibweb.live.feed.encodings import ENCODINGS, link_arrays, pack_arrays
from ibweb.live.feed.frame_store import (
    broadcast_progress,
    broadcast_snapshot,
    broadcast_view_frame,
    last_seq,
    set_starting,
    snapshot_parts,
    store_newest,
    store_newest_shared,
    store_topology,
    topology_base,
)
from ibweb.live.feed.view import FeedView, feed_view
from ibweb.live.history import ring as history
from ibweb.live.signals import ONE_SHOT_KINDS, fabric_alerts, frame_published, topology_published
from ibweb.runtime import record
from ibweb.runtime.metrics import CounterRecorder
from ibweb.tenancy.engine_policy import policy_data

__all__ = ["FabricRunner", "AUTO_ROLLUP"]

log = logging.getLogger("ibweb.live")

#: Start the rollup of finished minutes when a tick enters a new minute (off where a Celery beat runs it).
AUTO_ROLLUP = bool(getattr(settings, "IBWEB_HISTORY_AUTO_ROLLUP", True))
#: Seconds between checks that the runtime record in the cache is still the one this runner published.
RECORD_CHECK_S = 5.0
#: Fields that tell one alert from another across ticks (their message and counts may change).
_ALERT_KEY = ("kind", "job", "link", "port", "counter", "node", "a", "b", "partition", "action")


async def _unannounced(fraction: float, message: str, status: str = "running") -> None:
    """Start-up progress nobody is told of (a standby starting while another process leads)."""


def _alert_key(alert: dict) -> tuple:
    key = tuple(str(alert.get(k)) for k in _ALERT_KEY)
    return key + (str(alert.get("t")), str(alert.get("message"))) if alert.get("kind") in ONE_SHOT_KINDS else key


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


class FabricRunner:
    """Runs one fabric row: starts its source, then ticks until cancelled.

    Parameters
    ----------
    row : ibweb.fabrics.models.Fabric
        The fabric; its ``mode`` chooses the source (:func:`~ibweb.live.engine.sources.source_for`).
    """

    def __init__(self, row, share: FabricShare | None = None) -> None:
        self.row = row
        self.share = share  # the process's place among engine processes on Redis (None: it leads alone)
        self._free_since: float | None = None  # when this standby first saw the fabric's lock free
        self.fabric_id = row.pk
        self.slug = row.slug
        self.name = row.name
        self.mode = row.mode
        self.tick_s = row.tick_s
        self.source = source_for(row.mode)(row)
        self.seq = 0
        self.policy_version: tuple | None = None
        self.policy_watch = PolicyVersionWatch(self.fabric_id)
        self.published_version: int | None = None  # the source's topology version behind the record
        self.record_version: str | None = None
        self.fabric_version: str | None = None  # the record version whose fabric and LFTs the record reads
        self.catalog_version = None  # the source's catalog version behind the record
        self.counters = CounterRecorder(self.fabric_id)
        self._alerts: dict[tuple, dict] = {}
        self._alerts_first = True
        self.views: dict[str, FeedView] = {}
        self._views_stamp: tuple | None = None
        self._frame_sender: asyncio.Task | None = None
        self._record_checked = time.monotonic()
        self._step_ms: float | None = None  # the engine's last step, wall time (frames' totals.step_ms)
        self._stopping = False
        self._signal_tail: asyncio.Task | None = None  # the newest signal being sent (the next waits for it)
        self._background: set[asyncio.Task] = set()

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
        kept = await asyncio.to_thread(history.last_seq, self.fabric_id)
        self.seq = max(self.seq, await last_seq(self.fabric_id), kept)
        published = publish and self.source.fabric is not None
        if published:
            await progress(0.8, "publishing the fabric")
            await self.publish_topology(announce=False)
        await progress(1.0, "running", status="done")
        log.info("fabric %s: engine started%s", self.slug, "" if announce else " (another process leads or led it)")
        if published:
            await broadcast_snapshot(self.fabric_id)

    async def publish_topology(self, announce: bool | None = True) -> None:
        """Publish the source's runtime record and topology, and send connected clients a new snapshot.

        ``announce``: True always, False never, None only when the topology or header differs
        from what clients were sent, or the record before was routed by another engine (not
        for a new leader taking over an unchanged fabric).
        """
        fabric, routing = self.source.fabric, self.source.routing
        self.published_version = self.source.topology_version

        self.catalog_version = self.source.catalog_version

        def build() -> tuple[str, str, dict | None]:
            before = record.head(self.fabric_id) if announce is None else None  # the record clients may know
            version = record.publish(self.fabric_id, record.row_identity(self.row), fabric, routing,
                                     self.source.catalog(routing), {"source": self.mode}, report=self._report(routing))
            # The feed carries the graph; what a capture said besides (warnings, descriptions) is for operators.
            return version, topology_base(to_json(fabric, as_read=())), before

        self.record_version, topology, before = await asyncio.to_thread(build)
        self.fabric_version = self.record_version
        header = json.dumps({"slug": self.slug, "name": self.name, "mode": self.mode, "tick_s": self.tick_s})
        if announce is None:  # clients were shown another fabric or header, or it was routed otherwise (a changed row)
            engine_before = before.get("engine") if before is not None else None  # None: not routed (a spec record)
            rerouted = engine_before is not None and routing is not None and engine_before != routing.engine
            announce = rerouted or await snapshot_parts(self.fabric_id) != (header, topology)
        await store_topology(self.fabric_id, header, topology)
        self.policy_version = None  # the policy names GUIDs of this fabric: build it again
        if announce:
            await broadcast_snapshot(self.fabric_id)
        self._signal(topology_published, version=self.record_version, hosts=fabric.num_hosts,
                     switches=fabric.num_switches, links=fabric.num_links)

    async def publish_jobs(self) -> None:
        """Publish the source's new job catalog as a new record version that keeps the fabric and its LFTs.

        What a scheduler's job start or end costs the tick: the catalog, one small cache part and
        a head (:func:`ibweb.runtime.record.publish_jobs`); no snapshot. The whole record is
        published instead when the cache no longer holds this runner's version.
        """
        routing, base = self.source.routing, self.record_version
        self.catalog_version = self.source.catalog_version
        catalog = self.source.catalog
        version = await asyncio.to_thread(lambda: record.publish_jobs(self.fabric_id, base, catalog(routing)))
        if version is None:
            await self.publish_topology(announce=None)
            return
        self.record_version = version

    def _report(self, routing) -> dict | None:
        """The routing report of ``routing`` for the record (computed once per routing: :func:`routing_report`)."""
        if routing is None:
            return None
        try:
            return routing_report(routing)
        except Exception:  # a report that cannot be made costs the report, not the record
            log.exception("fabric %s: routing report failed", self.slug)
            return None

    # ----------------------------------------------------------------- policy
    async def apply_policy_changes(self) -> None:
        """Hand the fabric's partitions and QoS to the source when they changed since the last tick."""
        current = await self.policy_watch.current()  # never holds the tick on a database that does not answer
        version = (current, self.published_version)
        if current is None or version == self.policy_version or self.source.fabric is None:
            return
        await self.publish_tenant_hosts(version[0])
        data = await sync_to_async(policy_data)(self.row)
        try:
            policy = await asyncio.to_thread(Policy.from_dict, self.source.fabric, data)
        except FabricEngineError as exc:  # e.g. a member GUID the discovered fabric does not have (yet)
            log.warning("fabric %s: policy not applied: %s", self.slug, exc)
            self.policy_version = version  # tried again on the next change, not every tick
            return
        await asyncio.to_thread(self.source.apply_policy, policy)
        self.policy_version = version
        log.info("fabric %s: policy version %d applied", self.slug, version[0])

    async def publish_tenant_hosts(self, policy: int) -> None:
        """Store each tenant's hosts on the published fabric in the record, as of policy version ``policy``.

        Read after ``policy`` (a change bumps the version once committed), so the sets are never
        older than the version they carry.
        """
        if self.record_version is None:
            return
        sets = await sync_to_async(tenant_host_sets)(self.row, self.source.fabric)
        await asyncio.to_thread(record.publish_tenants, self.fabric_id, self.record_version, policy, sets)

    # ------------------------------------------------------------------- tick
    async def tick(self) -> int:
        """Apply policy changes, then compute and publish one frame; returns its sequence number (0: none)."""
        if self.record_version is not None and time.monotonic() - self._record_checked > RECORD_CHECK_S:
            self._record_checked = time.monotonic()  # the record lost (a Redis restart) or replaced: publish again
            h = await asyncio.to_thread(record.head, self.fabric_id, record.row_identity(self.row))
            if h is None or h["version"] != self.record_version:
                await self.publish_topology()
        await self.apply_policy_changes()
        seq = self.seq + 1
        started = time.perf_counter()
        state = await self.source.step(seq, time.time())
        self._step_ms = (time.perf_counter() - started) * 1000
        if self.source.fabric is not None and self.source.topology_version != self.published_version:
            await self.publish_topology()
            await self.apply_policy_changes()  # the new record's tenant host sets, on this tick
        elif self.source.fabric is not None and self.source.catalog_version != self.catalog_version:
            await self.publish_jobs()  # new jobs: a new record version of the same fabric, no new snapshot
            await self.apply_policy_changes()
        if state is None:
            return 0
        self.seq = seq
        await self.publish(state)
        return seq

    async def publish(self, state: FabricState) -> None:
        """Send ``state`` to the feed, the history ring and ``/metrics``; signal alert changes.

        The feed gets one message per (view, encoding) pair that has sockets
        (:mod:`ibweb.live.feed.view_registry`): the per-link arrays encoded once per encoding, the
        header filtered once per view (:class:`~ibweb.live.feed.view.FeedView`).
        """
        f = self.source.fabric
        totals = {"hosts": f.num_hosts, "switches": f.num_switches, "links": f.num_links, **self.source.totals()}
        if self._step_ms is not None:
            totals["step_ms"] = round(self._step_ms, 1)
        measured = self.source.counters()
        pairs = sorted(await viewreg.active(self.fabric_id))
        await self.refresh_views({key for key, _ in pairs})
        views = dict(self.views)

        def encode():  # one worker thread per tick for the CPU work
            self.counters.add(f, state, measured, self.fabric_version)
            header = state.frame_header(totals)
            shared = {name: ENCODINGS[name].shared(state) for name in sorted({e for _, e in pairs})}
            seen: dict[str, dict] = {}
            out = []
            for key, name in pairs:  # one filter per view, one encode per (view, encoding)
                if key not in views:
                    continue
                if key not in seen:
                    seen[key] = views[key].header(header)
                out.append((key, name, views[key].version, ENCODINGS[name].frame(seen[key], shared[name])))
            links = shared["v1"] if "v1" in shared else pack_arrays(link_arrays(state))
            binary = {name: part for name, part in shared.items() if ENCODINGS[name].binary}
            return header, links, binary, out

        header, links, binary, out = await asyncio.to_thread(encode)
        await store_newest(self.fabric_id, state.seq, header, links)
        for name, part in binary.items():  # a new socket of a binary encoding gets this tick's frame after its snapshot
            await store_newest_shared(self.fabric_id, state.seq, name, part)
        for key, name, version, payload in out:
            await broadcast_view_frame(self.fabric_id, key, name, state.seq, payload, version)
        if await history.record(self.fabric_id, state.seq, state.t, state.rate_gbps, state.util,
                                topology=self.fabric_version, fabric=f, tick_s=state.tick_s,
                                missing=state.stale) and AUTO_ROLLUP:
            self._start_rollup()
        self._diff_alerts(state)
        self._frame_published(header, f)

    async def refresh_views(self, keys: set[str]) -> None:
        """Have a :class:`FeedView` for every view key in ``keys``; after a policy or topology change, recompute.

        Frames carry their view's version: a socket whose snapshot shows another version of the
        view (its hosts or tenants changed) takes a new snapshot before the frame.
        """
        stamp = (self.fabric_version, self.policy_version)  # a new job catalog alone changes no view
        stale = stamp != self._views_stamp
        if stale:  # every view in use is computed again; views without sockets are dropped
            self.views = {k: v for k, v in self.views.items() if k in keys}
            todo = set(keys)
        else:
            todo = set(keys) - set(self.views)
        self._views_stamp = stamp
        if not todo:
            return
        fabric = self.source.fabric
        for key in sorted(todo):  # a handful of views: all, fabric, one per tenant combination
            try:
                self.views[key] = await sync_to_async(feed_view)(key, self.row, fabric)
            except ValueError:  # not a view key
                continue

    def _frame_published(self, header: dict, fabric) -> None:
        """Send :data:`~ibweb.live.signals.frame_published` (one at a time: a slow receiver skips frames), after the
        alert signals of this tick and those before: a frame never reaches the events recorder ahead of the clears
        that lead to it (its check of the open events took a clear still on its way for a lost one)."""
        if not frame_published.receivers:
            return
        if self._frame_sender is not None and not self._frame_sender.done():
            return
        loop = asyncio.get_running_loop()
        before = self._signal_tail
        if before is not None and (before.done() or before.get_loop() is not loop):
            before = None

        def send() -> None:
            for receiver, result in frame_published.send_robust(sender=FabricRunner, fabric_id=self.fabric_id,
                                                                frame=header, fabric=fabric):
                if isinstance(result, Exception):
                    log.error("fabric %s: %s failed: %s", self.slug, receiver, result)

        async def after_the_signals() -> None:
            if before is not None:
                await asyncio.wait([before])
            await asyncio.to_thread(send)

        self._frame_sender = loop.create_task(after_the_signals())

    def _diff_alerts(self, state: FabricState) -> None:
        now = {_alert_key(a): a for a in state.alerts}
        raised = [a for k, a in now.items() if k not in self._alerts]
        cleared = [a for k, a in self._alerts.items() if k not in now]
        first, self._alerts_first = self._alerts_first, False
        self._alerts = now
        if raised or cleared or first:
            self._signal(fabric_alerts, seq=state.seq, t=state.t, raised=raised, cleared=cleared, first=first)

    def _signal(self, signal, **kwargs) -> None:
        """Send ``signal`` from a worker thread (receivers may use the database), without waiting for it.

        Signals are sent one after the other, in the order of the ticks that made them: a receiver that
        waits for a locked database delays the next signal (a clear never overtakes its raise).
        """
        if not signal.receivers:
            return
        loop = asyncio.get_running_loop()
        before = self._signal_tail
        if before is not None and (before.done() or before.get_loop() is not loop):
            before = None  # nothing to wait for (or a task of a loop that has ended)

        def send() -> None:
            for receiver, result in signal.send_robust(sender=FabricRunner, fabric_id=self.fabric_id, **kwargs):
                if isinstance(result, Exception):
                    log.error("fabric %s: %s failed: %s", self.slug, receiver, result)

        async def after_the_last() -> None:
            if before is not None:
                await asyncio.wait([before])
            await asyncio.to_thread(send)

        self._signal_tail = loop.create_task(after_the_last())
        self._background.add(self._signal_tail)
        self._signal_tail.add_done_callback(self._background.discard)

    def _start_rollup(self) -> None:
        """Roll up the finished minutes of the history ring (in a thread; with Celery workers only queued)."""
        from ibweb.live.tasks import rollup_history

        def run() -> None:
            try:  # eager (embedded default): rolled up here, waiting out a locked database
                retry_locked(rollup_history.delay, self.fabric_id, what=f"rollups of fabric {self.slug}")
            except Exception:
                log.exception("fabric %s: history rollup failed", self.slug)

        self._in_background(asyncio.to_thread(run))

    def _in_background(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

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
                        async with self._renewing(lock):
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

    @contextlib.asynccontextmanager
    async def _renewing(self, lock):
        """Renew the held lock every half second (at most a third of its expiry) while the body runs.

        A build, or a tick, takes seconds on a large fabric and longer on a loaded machine (several planes
        of 16,384 hosts in one process on two cores: a tick took over the lock's 3 s). Renewed only between
        ticks, the lock lapsed meanwhile, and the other processes took a fabric that was still led.
        """
        if not isinstance(lock, LeaderLock):
            yield
            return
        done = asyncio.Event()

        async def renew() -> None:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done.wait(), min(0.5, lock.ttl_ms / 3000))
                    return
                try:
                    if not await lock.hold():
                        return
                except Exception:
                    log.exception("fabric %s: cannot renew its leader lock", self.slug)

        # Ended by the event, never cancelled: a cancellation landing inside a redis-py call can be lost, and
        # the runner waited for ever on a renewal that never ended (a plane's frames stopped, nothing logged).
        renewing = asyncio.get_running_loop().create_task(renew())
        try:
            yield
        finally:
            done.set()
            await asyncio.wait({renewing}, timeout=lock.ttl_ms / 1000)

    async def _start_holding(self, lock: LeaderLock) -> None:
        """Build the source while holding the fabric's lock: the others see the fabric led and wait, rather
        than take it as left free and build it too."""
        async with self._renewing(lock):
            await self._start_under(lock)

    async def _go_cold(self) -> None:
        """Drop the source and what was derived from it, as a cold standby that never led holds nothing.

        The next time this process is assigned the fabric it builds it again (what a takeover costs anyway).
        """
        await self.source.stop()
        self.source = source_for(self.mode)(self.row)
        self.views, self._views_stamp, self._alerts, self._alerts_first = {}, None, {}, True
        self.policy_version = self.published_version = self.catalog_version = None
        self.counters = CounterRecorder(self.fabric_id)
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
