"""Group names, cache keys and the ``broadcast_*`` helpers of the live feed.

The engine publishes each frame once, already encoded as JSON text, to the
channel group of its fabric; consumers forward that text unchanged. The newest
snapshot parts (topology, frame) are kept in the cache so that any web process
can greet a new client.
"""

from __future__ import annotations

from channels.layers import get_channel_layer
from django.core.cache import cache

#: Topology texts this process published, kept to restore them if the cache loses them (a Redis restart).
_published: dict[int, tuple[str, str]] = {}
FRAME_EVENT = "fabric.frame"
SNAPSHOT_EVENT = "fabric.snapshot"
PROGRESS_EVENT = "fabric.progress"
_TTL_S = 24 * 3600


def group_name(fabric_id: int) -> str:
    """Channel group of a fabric's feed."""
    return f"fabric.{fabric_id}"


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:live:{fabric_id}:{part}"


async def broadcast_frame(fabric_id: int, seq: int, text: str) -> None:
    """Store the newest frame and send it to every client of the fabric.

    If the cache lost the topology since this process stored it, it is stored again,
    so that new clients can be greeted after a Redis restart.
    """
    if fabric_id in _published and await cache.aget(_key(fabric_id, "topology")) is None:
        await store_topology(fabric_id, *_published[fabric_id])
    await cache.aset_many({_key(fabric_id, "frame"): text, _key(fabric_id, "seq"): seq}, _TTL_S)
    await get_channel_layer().group_send(group_name(fabric_id), {"type": FRAME_EVENT, "seq": seq, "text": text})


async def broadcast_snapshot(fabric_id: int) -> None:
    """Tell every client of the fabric to take a new snapshot (the topology or engine changed)."""
    await get_channel_layer().group_send(group_name(fabric_id), {"type": SNAPSHOT_EVENT})


def newest_frame(fabric_id: int) -> dict | None:
    """The newest published frame of a fabric, parsed (``None`` before the first); for synchronous views."""
    import json

    text = cache.get(_key(fabric_id, "frame"))
    return json.loads(text) if text else None


async def last_seq(fabric_id: int) -> int:
    """Sequence number of the newest frame published for the fabric (0 before the first)."""
    return int(await cache.aget(_key(fabric_id, "seq"), 0))


async def store_topology(fabric_id: int, header: str, topology: str) -> None:
    """Store the snapshot's fabric header and topology (JSON texts) for new clients."""
    _published[fabric_id] = (header, topology)
    await cache.aset_many({_key(fabric_id, "header"): header, _key(fabric_id, "topology"): topology}, _TTL_S)


async def snapshot_text(fabric_id: int) -> str | None:
    """The ``snapshot`` message for a new client, or None while the engine has not started."""
    parts = await cache.aget_many([_key(fabric_id, p) for p in ("header", "topology", "frame")])
    header = parts.get(_key(fabric_id, "header"))
    topology = parts.get(_key(fabric_id, "topology"))
    if header is None or topology is None:
        return None
    frame = parts.get(_key(fabric_id, "frame"), "null")
    return f'{{"v": 1, "type": "snapshot", "fabric": {header}, "topology": {topology}, "frame": {frame}}}'


async def broadcast_progress(fabric_id: int, payload: dict) -> None:
    """Send a ``progress`` message (protocol v1) about a long operation to every client of the fabric.

    ``payload`` carries ``task`` (``"engine"``, ``"analysis"``, ...), ``fraction`` (0..1), ``status`` and a
    ``message``; clients keep the newest payload per ``(task, id)``.
    """
    await get_channel_layer().group_send(group_name(fabric_id), {"type": PROGRESS_EVENT, "payload": payload})


async def set_starting(fabric_id: int, payload: dict | None) -> None:
    """Record (or clear, with None) that the fabric's engine is starting, and tell waiting clients."""
    if payload is None:
        await cache.adelete(_key(fabric_id, "starting"))
        return
    await cache.aset(_key(fabric_id, "starting"), payload, 600)
    await broadcast_progress(fabric_id, payload)


async def starting(fabric_id: int) -> dict | None:
    """The engine's start-up progress, while it is starting."""
    return await cache.aget(_key(fabric_id, "starting"))
