"""The newest frame header of a fabric, as its runner keeps it each tick for snapshots (live.feed.frame_store).

Here so that any app reads it without importing the live app: the overview, the cluster view and the
tenancy page (each job's bandwidth now) read the header; only the live app writes it.
"""

from __future__ import annotations

from django.core.cache import cache

__all__ = ["frame_key", "newest_frame"]


def frame_key(fabric_id: int, part: str) -> str:
    """Cache key of one part (``header_frame``, ``links``, ``seq``, ...) of a fabric's newest frame and feed."""
    return f"ibweb:live:{fabric_id}:{part}"


def newest_frame(fabric_id: int) -> dict | None:
    """The newest frame header of a fabric (every section but the per-link arrays), or None; synchronous."""
    return cache.get(frame_key(fabric_id, "header_frame"))
