"""Failed event writes, made visible: counted per fabric in the cache, shown on ``/metrics`` and the events page.

The recorder (:mod:`ibweb.events.recorder`) counts every write that failed (and was kept to retry) and every
write it gave up; the counts live in the cache shared by the engine and web processes (Redis, or the one
process's memory in the embedded default), so a web process reports what an engine process saw. They start
from zero with the cache, as a Prometheus counter does with a restarted exporter.
"""

from __future__ import annotations

import contextlib
import logging

from django.core.cache import cache

__all__ = ["count_failure", "write_failures", "render_event_metrics"]

log = logging.getLogger("ibweb.events")
_FAMILIES = (
    ("ibweb_event_write_failures_total", "Event writes that failed (each kept and tried again).", "failed"),
    ("ibweb_event_writes_dropped_total", "Event writes given up after their last attempt.", "dropped"),
)


def _key(fabric_id: int, what: str) -> str:
    return f"ibweb:events:writes:{what}:{fabric_id}"


def count_failure(fabric_id: int, failed: int, dropped: int = 0) -> None:
    """Add ``failed`` failed and ``dropped`` given-up writes to the fabric's counts (never raises)."""
    for what, n in (("failed", failed), ("dropped", dropped)):
        if n <= 0:
            continue
        try:
            cache.add(_key(fabric_id, what), 0, None)
            cache.incr(_key(fabric_id, what), n)
        except Exception as exc:  # the cache down too: the log line is what is left
            log.warning("fabric %s: cannot count failed event writes: %s", fabric_id, exc)


def write_failures(fabric_id: int) -> dict[str, int]:
    """``{"failed": n, "dropped": n}`` of a fabric (zeros when the cache does not answer)."""
    with contextlib.suppress(Exception):
        got = cache.get_many([_key(fabric_id, "failed"), _key(fabric_id, "dropped")])
        return {w: int(got.get(_key(fabric_id, w), 0)) for w in ("failed", "dropped")}
    return {"failed": 0, "dropped": 0}


def render_event_metrics(fabrics) -> str:
    """The ``ibweb_event_write*`` counter families of the fabric rows ``fabrics`` (Prometheus text)."""
    counts = [(f.slug, write_failures(f.pk)) for f in fabrics]
    lines: list[str] = []
    for name, text, what in _FAMILIES:
        lines += [f"# HELP {name} {text}", f"# TYPE {name} counter"]
        lines += [f'{name}{{fabric="{slug}"}} {n[what]}' for slug, n in counts]
    return "\n".join(lines) + "\n"
