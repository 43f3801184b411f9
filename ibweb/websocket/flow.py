"""What the server holds for each websocket client, and how long it waits for one that stops reading.

Measured for a client that reads nothing (issue 27; the live feed of a 2048-host fabric, 10 frames/s of
186 kB, one reading and one stalled socket, a minute): the transport's write buffer of the stalled socket
stopped at 73 kB (uvicorn's protocol waits for ``resume_writing`` before each message, so the buffer holds
at most the high-water mark and one message), the consumer's channel-layer queue stayed empty, the heap in
use (``mallinfo2``) stayed at 47 MB. The process's RSS still rose by 1-2 MB/s for half a minute: freed
memory that glibc keeps (``fabric_engine.allocator``: 200 MB of the heap free) being touched again at new
addresses, which stops on its own. What the socket itself held did not grow, but nothing said so, and a
stalled socket stayed open, holding its buffer, for as long as the peer kept the connection.

Here, per socket:

- the write buffer's high-water mark is :data:`HIGH_WATER_BYTES`, set on the transport;
- :class:`SocketFlow` is handed to the ASGI application as ``scope["extensions"]["ibweb.flow"]``: the feed
  consumer waits until its socket is below the mark before it picks the frame to send, so the newest frame
  replaces the ones in between and nothing is queued for the socket, and it counts what it sent and skipped;
- a socket whose buffer stays above the mark for ``IBWEB_FEED_STALL_S`` seconds is sent close code
  :data:`CLOSE_TOO_SLOW` and closed; one that has still not taken its buffer :data:`CLOSE_GRACE_S` later is
  aborted, its buffer dropped;
- :func:`feed_socket_stats` sums the sockets of this process (``/metrics``: ``ibweb_feed_*``).
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from dataclasses import dataclass

from websockets.exceptions import InvalidState

__all__ = ["CLOSE_TOO_SLOW", "CLOSE_GRACE_S", "HIGH_WATER_BYTES", "FlowControlled", "SocketFlow", "feed_socket_stats",
           "flow_of"]

#: Bytes of a socket's write buffer above which it is sent nothing more until it drains (asyncio's default).
HIGH_WATER_BYTES = 64 << 10
#: Close code of a socket dropped for not reading (its buffer above the mark for ``IBWEB_FEED_STALL_S``).
CLOSE_TOO_SLOW = 4408
#: Seconds a socket closed for not reading has to take its buffer and the close frame before it is aborted.
CLOSE_GRACE_S = 5.0
#: The key of :class:`SocketFlow` in an ASGI websocket scope's ``extensions``.
SCOPE_KEY = "ibweb.flow"

#: This process's open sockets, and the counts of those gone (so the totals never go down). Written by the
#: event loop's thread, read by ``/metrics`` in a worker thread: under :data:`_LOCK`.
_SOCKETS: set[SocketFlow] = set()
_GONE: Counter = Counter()
_LOCK = threading.Lock()


class SocketFlow:
    """One websocket's flow: its write buffer, whether it is writable, and what the application sent and skipped."""

    def __init__(self, transport: asyncio.Transport, writable: asyncio.Event) -> None:
        self._transport = transport
        self._writable = writable
        self.encoding = ""
        self.deflate = False
        self.backlog = _no_backlog
        self.frames_sent = 0
        self.frames_skipped = 0
        self.closed_stalled = False
        with _LOCK:
            _SOCKETS.add(self)

    def buffered_bytes(self) -> int:
        """Bytes written to the socket and not yet taken by the kernel."""
        return self._transport.get_write_buffer_size()

    def paused(self) -> bool:
        """Whether the buffer is above the high-water mark (the protocol's writable event is clear)."""
        return not self._writable.is_set()

    async def wait_writable(self) -> None:
        """Return once the buffer is below the high-water mark (or the connection is gone)."""
        await self._writable.wait()

    def sent(self, frames_skipped: int) -> None:
        """Count one frame sent, after ``frames_skipped`` newer-than-last frames that the socket never got."""
        self.frames_sent += 1
        self.frames_skipped += max(0, frames_skipped)

    def gone(self) -> None:
        """The connection ended: its counts move to the process totals."""
        with _LOCK:
            if self in _SOCKETS:
                _SOCKETS.discard(self)
                _GONE.update(sent=self.frames_sent, skipped=self.frames_skipped, stalled=int(self.closed_stalled))


def _no_backlog() -> int:
    return 0


def flow_of(scope: dict) -> SocketFlow | None:
    """The :class:`SocketFlow` of a websocket scope, None under a server without it (tests, other ASGI servers)."""
    return (scope.get("extensions") or {}).get(SCOPE_KEY)


@dataclass(frozen=True)
class FeedSocketStats:
    """This process's sockets: per (encoding, deflate) the count, paused count and the largest buffer and backlog."""

    groups: dict[tuple[str, bool], dict[str, int]]
    frames_sent: int
    frames_skipped: int
    stalled_closes: int


def feed_socket_stats() -> FeedSocketStats:
    """The sockets of this process now (those the application gave an encoding: the live feed's)."""
    groups: dict[tuple[str, bool], dict[str, int]] = {}
    with _LOCK:
        flows = list(_SOCKETS)
        sent, skipped, stalled = _GONE["sent"], _GONE["skipped"], _GONE["stalled"]
    for flow in flows:
        sent, skipped, stalled = sent + flow.frames_sent, skipped + flow.frames_skipped, stalled + flow.closed_stalled
        if not flow.encoding:
            continue
        g = groups.setdefault((flow.encoding, flow.deflate),
                              {"sockets": 0, "paused": 0, "buffered_max": 0, "buffered_sum": 0, "backlog_max": 0})
        buffered = flow.buffered_bytes()
        g["sockets"] += 1
        g["paused"] += flow.paused()
        g["buffered_max"] = max(g["buffered_max"], buffered)
        g["buffered_sum"] += buffered
        g["backlog_max"] = max(g["backlog_max"], flow.backlog())
    return FeedSocketStats(groups, sent, skipped, stalled)


class FlowControlled:
    """Mixin for uvicorn's websockets protocol: the high-water mark, :class:`SocketFlow` in the scope, the stall limit.

    Relies on the protocol's ``transport``, ``writable`` (set while below the mark), ``conn`` (websockets'
    sans-I/O connection), ``queue`` (events to the application), ``close_sent``, ``close_timer``,
    ``read_paused``, ``handshake_complete`` and ``scope``.
    """

    flow: SocketFlow | None = None
    _stall_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        transport.set_write_buffer_limits(high=HIGH_WATER_BYTES)
        self.flow = SocketFlow(transport, self.writable)

    def handle_connect(self, event) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None and self.flow is not None:  # the application's task has not started yet
            scope["extensions"][SCOPE_KEY] = self.flow
            self.flow.deflate = bool(self.conn.extensions)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self.flow is not None and self._stall_timer is None:
            self._stall_timer = self.loop.call_later(stall_seconds(), self._stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None

    def connection_lost(self, exc) -> None:
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None
        if self.flow is not None:
            self.flow.gone()
        super().connection_lost(exc)

    def _stalled(self) -> None:
        """Above the mark for the stall limit: close with :data:`CLOSE_TOO_SLOW`; abort if still open after a grace.

        As uvicorn closes for the application: the close frame is written, reading resumes for the peer's
        answer (which closes the transport), and a timer ends the connection if none comes.
        """
        self._stall_timer = None
        self.flow.closed_stalled = True
        if not self.close_sent and self.handshake_complete:
            try:
                self.conn.send_close(CLOSE_TOO_SLOW, "client too slow")
            except InvalidState:  # the connection is closing already
                pass
            else:
                self.transport.write(b"".join(self.conn.data_to_send()))
                self.close_sent = True
                self.queue.put_nowait({"type": "websocket.disconnect", "code": CLOSE_TOO_SLOW})
                if self.read_paused:
                    self.read_paused = False
                    self.transport.resume_reading()
        if self.close_timer is not None:
            self.close_timer.cancel()
        self.close_timer = self.loop.call_later(CLOSE_GRACE_S, self.transport.abort)


def stall_seconds() -> float:
    """Seconds a socket may stay above the high-water mark before it is closed (``IBWEB_FEED_STALL_S``)."""
    from django.conf import settings

    return float(getattr(settings, "IBWEB_FEED_STALL_S", 30))
