"""Websocket clients that read nothing, and the server's own account of its feed sockets (``ibweb_feed_*``).

Used by ``tests/ibweb/websocket/test_slow_client.py`` and ``tests/bench/bench_slow_clients.py``.
"""

from __future__ import annotations

import asyncio
import re
import socket
import urllib.request

import websockets

from ibweb.websocket.flow import CLOSE_GRACE_S

#: A 2048-host fabric at 10 frames/s (v1 frames of about 186 kB).
FAST = {"name": "Fast 2048", "slug": "fast", "tick_s": 0.1,
        "spec": {"topology": {"generator": "fat_tree", "hosts": 2048, "radix": 64},
                 "jobs": [{"name": "big", "tenant": "acme", "hosts": 1024, "placement": "scattered"}],
                 "background": {"fraction": 0.5, "gbps": 50}}}
SAMPLE = re.compile(r'^(ibweb_feed_\w+)\{([^}]*)\} (\S+)$')


def feed_metrics(server) -> list[tuple[str, dict, float]]:
    """The ``ibweb_feed_*`` samples of the server's ``/metrics?process=1`` (as the operator): its own series alone,
    not every fabric's counters rendered four times a second while the sockets' close grace runs."""
    request = urllib.request.Request(server.url + "/metrics?process=1", headers={"Cookie": server.cookie})
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    samples = []
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            samples.append((m.group(1), labels, float(m.group(3))))
    return samples


def by_kind(samples, name: str) -> dict[tuple[str, bool], float]:
    """Per (encoding, deflate on) the value of the per-kind gauge ``name``."""
    return {(labels["encoding"], labels["deflate"] == "on"): value for metric, labels, value in samples
            if metric == name}


def total(samples, name: str) -> float:
    """The sum of ``name`` over its labels."""
    return sum(value for metric, _, value in samples if metric == name)


async def stalled_socket(url: str, port: int, deflate: bool):
    """A websocket that reads nothing: a 4 kB receive buffer (so the server's fills in seconds), no keep-alive."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    return await websockets.connect(url, sock=sock, max_size=None, max_queue=1, ping_interval=None,
                                    compression="deflate" if deflate else None)


async def drain(ws) -> int | None:
    """Read ``ws`` until it closes: the close code the server sent, None if the connection ended without one."""
    try:
        while True:
            await asyncio.wait_for(ws.recv(), CLOSE_GRACE_S)
    except websockets.ConnectionClosed as exc:
        return exc.rcvd.code if exc.rcvd is not None else None
