"""A fabric leader's :mod:`ibweb.live.signals`: ``topology_published``, ``fabric_alerts``, then ``frame_published``.

Receivers run in worker threads (they may use the database), never holding the tick. Signals are sent one after
the other, in the order of the ticks that made them: a receiver that waits for a locked database delays the next
signal (a clear never overtakes its raise), and a frame reaches its receivers only after the alert signals of its
tick and those before.
"""

from __future__ import annotations

import asyncio
import logging

from ibweb.live.engine.alerts import AlertDiff
from ibweb.live.engine.publishing import Tick, TopologyChange
from ibweb.live.signals import fabric_alerts, frame_published, topology_published

__all__ = ["SignalsPublisher"]

log = logging.getLogger("ibweb.live")


class SignalsPublisher:
    """Sends one fabric's signals (a :class:`~ibweb.live.engine.publishing.Publisher`).

    Parameters
    ----------
    fabric_id, slug
        The fabric the signals are of (``slug`` for the log).
    sender
        The signals' ``sender`` (the runner's class).
    """

    def __init__(self, fabric_id: int, slug: str, sender: type) -> None:
        self.fabric_id = fabric_id
        self.slug = slug
        self.sender = sender
        self.alerts = AlertDiff()
        self._tail: asyncio.Task | None = None  # the newest signal being sent (the next waits for it)
        self._frame_sender: asyncio.Task | None = None
        self._background: set[asyncio.Task] = set()

    async def topology_changed(self, change: TopologyChange) -> None:
        f = change.fabric
        self._signal(topology_published, version=change.version, hosts=f.num_hosts, switches=f.num_switches,
                     links=f.num_links)

    async def publish(self, version: str | None, tick: Tick) -> None:
        """Signal the alerts the tick raised and cleared, then its frame."""
        changed = self.alerts.diff(tick.state.alerts)
        if changed is not None:
            raised, cleared, first = changed
            self._signal(fabric_alerts, seq=tick.state.seq, t=tick.state.t, raised=raised, cleared=cleared,
                         first=first)
        self._frame_published(tick.header, tick.fabric)

    def reset(self) -> None:
        self.alerts.reset()

    def pending(self) -> list[asyncio.Task]:
        return [*self._background, *[t for t in (self._frame_sender,) if t is not None]]

    def _after_the_tail(self, send) -> asyncio.Task:
        """A task that runs ``send`` in a worker thread once the newest signal being sent was sent."""
        loop = asyncio.get_running_loop()
        before = self._tail
        if before is not None and (before.done() or before.get_loop() is not loop):
            before = None  # nothing to wait for (or a task of a loop that has ended)

        async def after_the_last() -> None:
            if before is not None:
                await asyncio.wait([before])
            await asyncio.to_thread(send)

        return loop.create_task(after_the_last())

    def _sender(self, signal, **kwargs):
        def send() -> None:
            for receiver, result in signal.send_robust(sender=self.sender, fabric_id=self.fabric_id, **kwargs):
                if isinstance(result, Exception):
                    log.error("fabric %s: %s failed: %s", self.slug, receiver, result)

        return send

    def _signal(self, signal, **kwargs) -> None:
        """Send ``signal`` from a worker thread, after the signals before it, without waiting for it."""
        if not signal.receivers:
            return
        self._tail = self._after_the_tail(self._sender(signal, **kwargs))
        self._background.add(self._tail)
        self._tail.add_done_callback(self._background.discard)

    def _frame_published(self, header: dict, fabric) -> None:
        """Send :data:`~ibweb.live.signals.frame_published` (one at a time: a slow receiver skips frames), after the
        alert signals of this tick and those before: a frame never reaches the events recorder ahead of the clears
        that lead to it (its check of the open events took a clear still on its way for a lost one)."""
        if not frame_published.receivers:
            return
        if self._frame_sender is not None and not self._frame_sender.done():
            return
        self._frame_sender = self._after_the_tail(self._sender(frame_published, frame=header, fabric=fabric))
