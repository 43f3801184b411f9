"""Slow HTTP clients cut off: a deadline for the request head and a minimum rate for the body (issue 26).

uvicorn times out only an idle keep-alive connection: a client that opens a socket and trickles its
headers a byte at a time, or sends its body at 1 KB/s, holds the socket (and, for the body, the request's
buffers) for as long as it likes; 150 such sockets stayed open for 60 s. :class:`HttpProtocol` is
uvicorn's ``httptools`` protocol (its default) with two timers, as Apache's ``mod_reqtimeout``:

* the head (request line and headers) must be complete ``IBWEB_HEADER_TIMEOUT_S`` (10 s) after the
  connection opens or, on a kept-alive connection, after the next request's first byte;
* the body then gets ``IBWEB_BODY_TIMEOUT_S`` (10 s) of grace plus one second per
  ``IBWEB_BODY_MIN_RATE`` (16 KiB/s) bytes received: a 64 MiB upload needs 128 kbit/s on average.
  Time when the server is not reading (its buffer full, waiting for the app) is not counted.

A client that misses either gets ``408 Request Timeout`` and the connection is closed. nginx's
``client_header_timeout``/``client_body_timeout`` do the same in front of a proxy. Use:
``python -m ibweb.serve ...`` (``--http ibweb.http.timeouts:HttpProtocol``; the launcher adds it).
"""

from __future__ import annotations

import asyncio

from django.conf import settings
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["HttpProtocol", "TICK_S"]

#: How often a body's rate is checked, seconds.
TICK_S = 1.0
_408 = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
        b"connection: close\r\n\r\n%s")


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline for the request head and a minimum body rate."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = settings.IBWEB_HEADER_TIMEOUT_S
        self.body_grace = settings.IBWEB_BODY_TIMEOUT_S
        self.body_min_rate = settings.IBWEB_BODY_MIN_RATE
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._body_bytes = 0
        self._body_active_s = 0.0  # time the body was being read, not waiting for the app
        self._body_tick_at = 0.0

    # ---- the head
    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm_head()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._head_timer is None:  # a kept-alive connection's next request: from its first byte
            self._arm_head()

    def on_headers_complete(self) -> None:
        self._cancel_head()
        super().on_headers_complete()
        if self.scope.get("type") == "http" and self.cycle is not None and self.cycle.scope is self.scope \
                and self.cycle.more_body and not (self.parser.should_upgrade() and self._should_upgrade()):
            self._body_bytes, self._body_active_s = 0, 0.0
            self._body_tick_at = self.loop.time()
            self._body_timer = self.loop.call_later(TICK_S, self._body_tick)

    def _arm_head(self) -> None:
        self._head_timer = self.loop.call_later(self.header_timeout, self._timed_out,
                                                f"request head not complete within {self.header_timeout:g} s")

    def _cancel_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    # ---- the body
    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._cancel_body()
        super().on_message_complete()

    def _body_tick(self) -> None:
        now = self.loop.time()
        waiting = self.flow.read_paused or (self.cycle is not None and self.cycle.response_started)
        if not waiting:
            self._body_active_s += now - self._body_tick_at
        self._body_tick_at = now
        allowed = self.body_grace + self._body_bytes / self.body_min_rate
        if self._body_active_s > allowed:
            self._body_timer = None
            self._timed_out(f"request body slower than {self.body_min_rate:,} bytes/s "
                            f"({self._body_bytes:,} bytes in {self._body_active_s:.0f} s)")
            return
        self._body_timer = self.loop.call_later(TICK_S, self._body_tick)

    def _cancel_body(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    # ---- both
    def _timed_out(self, why: str) -> None:
        self._head_timer = None
        self._cancel_body()
        if self.transport.is_closing():
            return
        peer = f"{self.client[0]}:{self.client[1]}" if self.client else "a connection"
        self.logger.info("closing %s: %s", peer, why)
        if self.cycle is None or self.cycle.response_complete or not self.cycle.response_started:
            text = f"408 Request Timeout: {why}\n".encode()
            self.transport.write(_408 % (len(text), text))
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the app reads http.disconnect; what it sends is dropped
            self.cycle.message_event.set()
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head()
        self._cancel_body()
        super().connection_lost(exc)
