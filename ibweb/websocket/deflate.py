"""permessage-deflate where it pays: text messages compressed, binary messages sent as they are.

Measured by ``make bench`` (``tests/bench/bench_deflate.py``: the fully loaded 32,768-GPU fabric of
``tests/bench/bench_scale.py``, messages as an operator's socket gets them, each deflated by the
negotiated extension's compressor at zlib level 1, a fresh one per message; CPU of one deflate, median
of five, on the 2-core reference machine):

================================  =========  ==========  =======
message, 32,768 GPUs              size       deflated    CPU
================================  =========  ==========  =======
v1 frame                          5.5 MB     0.44 MB     15 ms
snapshot, v2 socket (topology)    5.4 MB     0.35 MB     12 ms
snapshot, v1 socket (+ v1 frame)  10.9 MB    0.79 MB     28 ms
v2 frame                          0.24 MB    0.21 MB     7.5 ms
================================  =========  ==========  =======

JSON text (v1 frames, snapshots) deflates twelve- to sixteenfold; a v2 frame's arrays are
already deflated once per tick for all its sockets, so compressing it again per socket buys an
eighth of its bytes (13 %) for 7.5 ms of CPU per socket and tick. RFC 7692 lets a sender leave any
message uncompressed (RSV1 clear), so one negotiated extension serves both. Level 1 keeps most of
the gain (v1 frame: 12x at level 1, 19.5x at level 6 for 2.4 times the CPU).

A process sends the same frame to every socket of a view, so a text message is deflated once per
process, not once per socket: the server negotiates ``server_no_context_takeover`` (RFC 7692
7.1.1.1: its choice alone), which makes a message's deflated bytes depend on the message and the
window size only, and :class:`DeflatedCache` keeps the last few results. The price is the
cross-message history, worth nothing for messages a hundred times the 4 kB window.

Why not the library alone (a functional reason): this module is websockets' own
``PerMessageDeflate`` with one method overridden; negotiation, decompression and framing stay the
library's. What the library (websockets 17.4, which uvicorn's ``--ws-per-message-deflate`` uses)
does not do is choose per message: its ``PerMessageDeflate.encode`` compresses every data frame,
binary ones included, each connection with its own compressor, and offers no option to send a message
uncompressed or to reuse the bytes another connection deflated. :meth:`TextDeflate.encode` adds
those two choices.

Use: ``uvicorn ... --ws ibweb.websocket.deflate:WebSocketProtocol`` (the Makefile, Dockerfile and
compose.yaml do).
"""

from __future__ import annotations

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.extensions.permessage_deflate import PerMessageDeflate, ServerPerMessageDeflateFactory
from websockets.frames import CTRL_OPCODES, Frame, Opcode

from .flow import FlowControlled

__all__ = ["TextDeflate", "TextDeflateFactory", "WebSocketProtocol", "COMPRESS_SETTINGS", "DeflatedCache"]

#: zlib settings of the server's compressor (level 1: see the module docstring; memLevel 5 as websockets advises).
COMPRESS_SETTINGS = {"level": 1, "memLevel": 5}


class DeflatedCache:
    """The deflated frames of the last ``size`` text messages of this process, by content and window size.

    A hit needs equal bytes, never only an equal key: sockets of different access views must never
    receive each other's message. The key is the length and the first and last bytes (a frame's
    sequence number and time lead it), not a hash of the whole message: every socket brings its own
    copy of the bytes, and hashing a 256 kB copy per socket cost a fifth of a web worker's time in the
    500-client bench; messages that share a key each keep their entry and are told apart by comparison.
    """

    EDGE = 256

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._entries: list[tuple[tuple, bytes, Frame]] = []  # oldest first; a few, so scanned
        self.hits = 0
        self.misses = 0

    def _key(self, data: bytes, wbits: int) -> tuple:
        return len(data), wbits, data[:self.EDGE], data[-self.EDGE:]

    def get(self, data: bytes, wbits: int) -> Frame | None:
        key = self._key(data, wbits)
        for i, (k, stored, frame) in enumerate(self._entries):
            if k == key and stored == data:
                self._entries.append(self._entries.pop(i))
                self.hits += 1
                return frame
        self.misses += 1
        return None

    def put(self, data: bytes, wbits: int, frame: Frame) -> None:
        key = self._key(data, wbits)
        kept = [e for e in self._entries if not (e[0] == key and e[1] == data)]
        self._entries = [*kept[max(0, len(kept) - self.size + 1):], (key, data, frame)]


#: Deflated text messages of this process, shared by its sockets.
DEFLATED = DeflatedCache()


class TextDeflate(PerMessageDeflate):
    """permessage-deflate that compresses text messages and sends binary messages uncompressed.

    With ``local_no_context_takeover`` a text message in one frame is deflated once per process
    (:data:`DEFLATED`); otherwise per socket, with its history.
    """

    _raw = False

    def encode(self, frame: Frame) -> Frame:
        if frame.opcode in CTRL_OPCODES:
            return frame
        if frame.opcode is not Opcode.CONT:  # the first frame of a message says what the message is
            self._raw = frame.opcode is Opcode.BINARY
        if self._raw:
            return frame
        if not (self.local_no_context_takeover and frame.fin and frame.opcode is Opcode.TEXT
                and isinstance(frame.data, bytes)):
            return super().encode(frame)
        done = DEFLATED.get(frame.data, self.local_max_window_bits)
        if done is None:
            done = super().encode(frame)
            done = Frame(done.opcode, bytes(done.data), done.fin, done.rsv1, done.rsv2, done.rsv3)
            DEFLATED.put(frame.data, self.local_max_window_bits, done)
        return done


class TextDeflateFactory(ServerPerMessageDeflateFactory):
    """Negotiates permessage-deflate as websockets does, with :class:`TextDeflate` as the extension."""

    def process_request_params(self, params, accepted_extensions):
        response, ext = super().process_request_params(params, accepted_extensions)
        return response, TextDeflate(ext.remote_no_context_takeover, ext.local_no_context_takeover,
                                     ext.remote_max_window_bits, ext.local_max_window_bits, ext.compress_settings)


class WebSocketProtocol(FlowControlled, WebSocketsSansIOProtocol):
    """uvicorn's websockets protocol (sans-I/O, its default) with :class:`TextDeflateFactory` and flow control.

    Flow control (:mod:`ibweb.websocket.flow`): a high-water mark on the write buffer, the socket's flow in the scope,
    stalled sockets closed.

    Window bits as uvicorn's (12: 4 kB of history per socket and direction), no server context takeover (one
    deflate per text message and process); only when ``--ws-per-message-deflate`` is on (the default).
    """

    def __init__(self, config, server_state, app_state, _loop=None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        if config.ws_per_message_deflate:
            self.conn.available_extensions = [TextDeflateFactory(server_no_context_takeover=True,
                                                                 server_max_window_bits=12, client_max_window_bits=12,
                                                                 compress_settings=dict(COMPRESS_SETTINGS))]
