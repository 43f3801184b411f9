"""This web process's live-feed sockets in the Prometheus text format (``ibweb_feed_*`` in ``/metrics``).

Per (encoding, deflate) of the sockets open now: how many, how many paused (write buffer above the
high-water mark), the largest and the summed write buffer, the largest channel-layer backlog; and the
process's totals of frames sent, frames skipped (a slow client gets the newest frame, not the ones in
between) and sockets closed for not reading. Each web process reports its own sockets; with several
workers behind one port, a scrape sees the worker that answered it (the ``pid`` label says which).
"""

from __future__ import annotations

import os

from ibweb.websocket.flow import HIGH_WATER_BYTES, FeedSocketStats

__all__ = ["render_feed_metrics"]

#: (name, type, help, key of a group's figures) of the per-group gauges, in exposition order.
_GAUGES = (
    ("ibweb_feed_sockets", "Live-feed websockets open in this process.", "sockets"),
    ("ibweb_feed_sockets_paused", "Sockets whose write buffer is above the high-water mark.", "paused"),
    ("ibweb_feed_socket_buffered_bytes_max", "Largest write buffer of one socket, bytes.", "buffered_max"),
    ("ibweb_feed_buffered_bytes", "Write buffers of all sockets, bytes.", "buffered_sum"),
    ("ibweb_feed_socket_backlog_max", "Largest count of channel-layer messages waiting for one socket.",
     "backlog_max"),
)


def render_feed_metrics(stats: FeedSocketStats) -> str:
    """The ``ibweb_feed_*`` families of ``stats``, each with one ``# HELP`` and ``# TYPE``."""
    pid = os.getpid()
    lines = ["# HELP ibweb_feed_high_water_bytes Write buffer above which a socket is sent nothing, bytes.",
             "# TYPE ibweb_feed_high_water_bytes gauge",
             f'ibweb_feed_high_water_bytes{{pid="{pid}"}} {HIGH_WATER_BYTES}']
    for name, text, key in _GAUGES:
        lines += [f"# HELP {name} {text}", f"# TYPE {name} gauge"]
        for (encoding, deflate), figures in sorted(stats.groups.items()):
            labels = f'pid="{pid}",encoding="{encoding}",deflate="{"on" if deflate else "off"}"'
            lines.append(f"{name}{{{labels}}} {figures[key]}")
    for name, text, value in (
            ("ibweb_feed_frames_sent_total", "Frames sent to live-feed sockets.", stats.frames_sent),
            ("ibweb_feed_frames_skipped_total", "Frames a slow socket skipped (it was sent a newer one).",
             stats.frames_skipped),
            ("ibweb_feed_stalled_closes_total", "Sockets closed for keeping their buffer above the mark too long.",
             stats.stalled_closes)):
        lines += [f"# HELP {name} {text}", f"# TYPE {name} counter", f'{name}{{pid="{pid}"}} {value}']
    return "\n".join(lines) + "\n"
