"""What permessage-deflate does to the feed's messages at 32,768 GPUs (the figures of :mod:`ibweb.websocket.deflate`).

Builds the messages of :func:`fabric_engine.scenario.loaded_rail_spec` (32,768 GPUs, as
``tests/bench/bench_scale.py``) as the server sends them to an operator's socket (a view that
sees all): the v1 frame (:class:`ibweb.live.feed.encodings.JsonV1`), the snapshot of a v2 socket
(fabric header and topology, ``"frame":null``) and of a v1 socket (the same with the newest v1
frame), and the v2 frame (:class:`ibweb.live.feed.encodings.BinaryV2`). Each is deflated as
:class:`ibweb.websocket.deflate.TextDeflate` deflates a text message: the extension negotiated by the
server's factory (``server_no_context_takeover``, 12 window bits, :data:`COMPRESS_SETTINGS`), a
fresh compressor per message; then again at zlib level 6 for comparison. Per message it prints
the raw and deflated sizes, their ratio, the CPU milliseconds of one deflate (median of
:data:`RUNS`, thread CPU time) and, at level 6, the ratio and the CPU against level 1.

Targets: the v1 frame deflates at least 8x at level 1; deflating a v2 frame (its arrays are
deflated already) saves less than a third of its bytes, so it is sent as it is.
Run: ``python tests/bench/bench_deflate.py`` (part of ``make bench``).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")

import django  # noqa: E402

django.setup()

from websockets.extensions.permessage_deflate import PerMessageDeflate  # noqa: E402
from websockets.frames import Frame, Opcode  # noqa: E402

from fabric_engine.formats.json_format import to_json  # noqa: E402
from fabric_engine.scenario import build_emulator, loaded_rail_spec  # noqa: E402
from ibweb.live.feed.encodings import ENCODINGS  # noqa: E402
from ibweb.live.feed.frame_store import snapshot_message, topology_base, with_ids  # noqa: E402
from ibweb.live.feed.view import FeedView  # noqa: E402
from ibweb.websocket.deflate import COMPRESS_SETTINGS, TextDeflate, TextDeflateFactory  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402

GPUS = 32768
RUNS = 5
#: What a browser offers (``Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits``).
OFFER = [("client_max_window_bits", None)]


def negotiated(level: int) -> TextDeflate:
    """The extension a socket gets from the server's factory, as
    :class:`ibweb.websocket.deflate.WebSocketProtocol` makes it."""
    factory = TextDeflateFactory(server_no_context_takeover=True, server_max_window_bits=12, client_max_window_bits=12,
                                 compress_settings={**COMPRESS_SETTINGS, "level": level})
    _, ext = factory.process_request_params(OFFER, [])
    assert ext.local_no_context_takeover and ext.local_max_window_bits == 12
    return ext


def deflated(ext: TextDeflate, data: bytes) -> bytes:
    """``data`` as the extension's compressor deflates a message (a fresh one per message; no cache, text or binary)."""
    return bytes(PerMessageDeflate.encode(ext, Frame(Opcode.TEXT, data)).data)


def measure(ext: TextDeflate, data: bytes) -> tuple[int, float]:
    """Deflated size and the median CPU ms of :data:`RUNS` deflates of ``data``."""
    cpu = []
    for _ in range(RUNS):
        t = time.thread_time()
        out = deflated(ext, data)
        cpu.append(time.thread_time() - t)
    assert zlib.decompressobj(wbits=-12).decompress(out + b"\x00\x00\xff\xff") == data
    return len(out), statistics.median(cpu) * 1e3


def messages() -> tuple[dict[str, bytes], int]:
    """The feed's messages for a fully loaded 32,768-GPU fabric, as an operator's sockets receive them."""
    t0 = time.perf_counter()
    emu = build_emulator(loaded_rail_spec(GPUS))
    emu.step(now=0.0)
    state = emu.step(now=1.0)
    f = emu.fabric
    print(f"{GPUS:,} GPUs: {f.num_hosts:,} hosts, {f.num_switches:,} switches, {f.num_links:,} links; "
          f"built and ticked in {time.perf_counter() - t0:.0f} s")
    view = FeedView("all", None, None, f)  # an operator's view: header and names as the engine made them
    totals = {"hosts": f.num_hosts, "switches": f.num_switches, "links": f.num_links}  # the emulator adds none
    header = view.header(state.frame_header(totals))
    v1 = ENCODINGS["v1"].frame(header, ENCODINGS["v1"].shared(state))
    v2 = ENCODINGS["v2"].frame(header, ENCODINGS["v2"].shared(state))
    fabric = json.dumps({"slug": "bench", "name": f"{GPUS} GPUs", "mode": "emulated", "tick_s": state.tick_s})
    topology = with_ids(topology_base(to_json(f, as_read=())), *view.node_ids())
    return {"v1 frame": v1.encode(),
            "snapshot, v2 socket (topology)": snapshot_message(fabric, topology, None).encode(),
            "snapshot, v1 socket (+ v1 frame)": snapshot_message(fabric, topology, v1).encode(),
            "v2 frame": v2}, len(state.rate_gbps)


def main() -> int:
    print(machine())
    print(deployed_allocator())
    msgs, links = messages()
    fast, best = negotiated(COMPRESS_SETTINGS["level"]), negotiated(6)
    # What TextDeflate sends: text deflated by that compressor, binary as it is.
    sent = fast.encode(Frame(Opcode.TEXT, msgs["v1 frame"]))
    assert sent.rsv1 and bytes(sent.data) == deflated(fast, msgs["v1 frame"])
    assert fast.encode(Frame(Opcode.BINARY, msgs["v2 frame"])).data == msgs["v2 frame"]
    print(f"{links:,} directed links; zlib level {COMPRESS_SETTINGS['level']} (COMPRESS_SETTINGS {COMPRESS_SETTINGS}), "
          f"12 window bits, a fresh compressor per message; CPU ms: median of {RUNS}")
    print(f"{'message':<34} {'raw MB':>7} {'deflated MB':>12} {'ratio':>6} {'cpu ms':>7} {'L6 ratio':>9} "
          f"{'L6 cpu ms':>10} {'L6/L1 cpu':>10}")
    rows = {}
    for name, data in msgs.items():
        size1, ms1 = measure(fast, data)
        size6, ms6 = measure(best, data)
        rows[name] = (len(data), size1, ms1, size6, ms6)
        print(f"{name:<34} {len(data) / 1e6:>7.2f} {size1 / 1e6:>12.3f} {len(data) / size1:>6.1f} {ms1:>7.1f} "
              f"{len(data) / size6:>9.1f} {ms6:>10.1f} {ms6 / ms1:>10.1f}")
    raw, size1, *_ = rows["v2 frame"]
    print(f"v2 frame deflated again: {1 - size1 / raw:.1%} of its bytes saved")
    raw, size1, *_ = rows["v1 frame"]
    target(f"v1 frame deflated at level {COMPRESS_SETTINGS['level']}, {GPUS:,} GPUs (raw / deflated)", raw / size1,
           8, "x", at_least=True)
    raw, size1, *_ = rows["v2 frame"]
    target(f"v2 frame deflated again, {GPUS:,} GPUs: share of its bytes saved", 1 - size1 / raw, 1 / 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
