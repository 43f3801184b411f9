"""Fifty clients that read nothing: what the server holds for them and how its memory moves (issue 27).

Starts the server (uvicorn, the websocket protocol of ``ibweb.websocket.deflate``, the embedded default) with a
2048-host fabric at 10 frames/s, and measures two windows of ``BENCH_SECONDS`` (default 60) side by side:
one reading client alone, then the same client beside ``BENCH_STALLED`` (default 50) sockets that read
nothing, with the stall limit raised so that they stay open through the window. Reports the server's RSS
slope in each window (fitted to a sample a second), the rate the stalled sockets are offered (their share of
the frames at the reading client's frame size), and what the server says it holds for them (``/metrics``).

Run: ``.venv/bin/python tests/bench/bench_slow_clients.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import websockets

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from ibweb.websocket.flow import HIGH_WATER_BYTES  # noqa: E402
from tests.bench.targets import machine, target  # noqa: E402
from tests.support.server import running_server  # noqa: E402
from tests.support.slow_clients import FAST, feed_metrics, stalled_socket, total  # noqa: E402

STALLED = int(os.environ.get("BENCH_STALLED", "50"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "60"))


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Reader:
    """A client that reads every message as it comes, in the background: frames counted, largest message kept."""

    def __init__(self, ws) -> None:
        self.ws, self.frames, self.frame_bytes, self.largest = ws, 0, 0, 0
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            text = await self.ws.recv()
            self.largest = max(self.largest, len(text))
            if json.loads(text)["type"] == "frame":
                self.frames += 1
                self.frame_bytes += len(text)


async def window(server, reader: Reader, seconds: float) -> tuple[float, int, int]:
    """Sample the server's RSS each second for ``seconds``: (RSS slope KiB/s, frames read, their bytes)."""
    rss, frames, frame_bytes = [], reader.frames, reader.frame_bytes
    start = time.monotonic()
    while time.monotonic() < start + seconds:
        rss.append((time.monotonic() - start, rss_kib(server.proc.pid)))
        await asyncio.sleep(1.0)
    slope = float(np.polyfit(*np.array(rss, dtype=float).T, 1)[0])
    return slope, reader.frames - frames, reader.frame_bytes - frame_bytes


async def scenario(server):
    url = f"{server.ws_url}/ws/fabrics/fast/live/"
    async with websockets.connect(url, max_size=None) as ws:
        reader = Reader(ws)
        await asyncio.sleep(20)  # the history ring (120 ticks) full, arenas allocated
        alone = await window(server, reader, SECONDS)
        stalled = [await stalled_socket(url + ("?v=2" if k % 2 else ""), server.port, k % 4 < 2)
                   for k in range(STALLED)]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until every stalled socket is above the mark
            paused = total(await asyncio.to_thread(feed_metrics, server), "ibweb_feed_sockets_paused")
            if paused >= STALLED:
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(10)  # the memory of their connections' snapshots settled
        beside = await window(server, reader, SECONDS)
        metrics = await asyncio.to_thread(feed_metrics, server)
        reader.task.cancel()
        for sock in stalled:
            sock.transport.abort()
    return alone, beside, paused, metrics, reader.largest


def main() -> int:
    print(machine())
    env = {"IBWEB_HISTORY_TICKS": "120", "IBWEB_FEED_STALL_S": str(int(SECONDS * 3))}
    with tempfile.TemporaryDirectory() as tmp, running_server(Path(tmp), fabrics=[FAST], extra_env=env) as server:
        alone, beside, paused, metrics, largest = asyncio.run(scenario(server))
    (slope0, frames0, _), (slope1, frames1, frame_bytes) = alone, beside
    offered = STALLED * frame_bytes / 1024 / SECONDS
    held = total(metrics, "ibweb_feed_buffered_bytes")
    held_max = max(value for name, _, value in metrics if name == "ibweb_feed_socket_buffered_bytes_max")
    print(f"reading client alone: {frames0 / SECONDS:.1f} frames/s, "
          f"server RSS slope {slope0:+.0f} KiB/s over {SECONDS:.0f} s")
    print(f"beside {STALLED} stalled sockets ({paused:.0f} above the mark): {frames1 / SECONDS:.1f} frames/s, "
          f"server RSS slope {slope1:+.0f} KiB/s; offered to the stalled sockets {offered:.0f} KiB/s "
          f"({frame_bytes / max(frames1, 1) / 1024:.0f} kB a frame)")
    print(f"held for them: {held / 1024:.0f} KiB in all, at most {held_max / 1024:.0f} KiB one socket "
          f"(mark {HIGH_WATER_BYTES / 1024:.0f} KiB); ratio of RSS slope to offered rate {slope1 / offered:.4f}")
    ok = target("RSS slope with stalled sockets / rate they are offered", slope1 / offered, 0.05)
    ok &= target("bytes held for one stalled socket / (mark + one message)", held_max / (HIGH_WATER_BYTES + largest),
                 1.0)
    ok &= target("frames/s of the reading client beside them / alone", frames1 / max(frames0, 1), 0.8, at_least=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
