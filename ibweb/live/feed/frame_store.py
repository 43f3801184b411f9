"""Group names, cache keys and the ``broadcast_*`` helpers of the live feed.

Channel groups, per fabric:

* ``fabric.<id>``: every socket of the fabric (new snapshot, progress);
* ``fabric.<id>.<view key>.<encoding>``: the sockets that see the fabric through one access
  view (:attr:`ibweb.access.View.key`) in one encoding; each tick the runner sends each such
  group its frame, encoded once (:mod:`ibweb.live.feed.encodings`);
* ``user.<id>``: the sockets of one user (their access changed: see :mod:`ibweb.live.feed.receivers`).

The newest parts a new client is greeted with are kept in the cache so that any web process
can compose its snapshot: the fabric header, the topology (node names and GUIDs left out: each
view names them its own way), the newest frame's header (every job and alert; filtered per view
when a snapshot is made) and its per-link arrays as a v1 text fragment, and, for each binary
encoding in use, that tick's encoded per-link arrays (the frame a new socket gets after its snapshot).
Other apps read the newest frame header through :func:`ibweb.runtime.frames.newest_frame` (re-exported here).
"""

from __future__ import annotations

import asyncio
import hashlib
import json

from channels.layers import get_channel_layer
from django.core.cache import cache

from ibweb.runtime.frames import frame_key as _key
from ibweb.runtime.frames import newest_frame as newest_frame  # re-exported: its home is ibweb.runtime.frames

#: Topology texts this process published, kept to restore them if the cache loses them (a Redis restart).
_published: dict[int, tuple[str, str]] = {}
FRAME_EVENT = "fabric.frame"
SNAPSHOT_EVENT = "fabric.snapshot"
PROGRESS_EVENT = "fabric.progress"
ACCESS_EVENT = "access.changed"
#: Where a topology's node names and GUIDs go (``"name":[...],"guid":[...]`` of the view).
IDS_PLACEHOLDER = '"@@ids@@":0'
_TTL_S = 24 * 3600


def forget_all() -> None:
    """Forget the topologies this process published (tests)."""
    _published.clear()


def group_name(fabric_id: int) -> str:
    """Channel group of every socket of a fabric's feed."""
    return f"fabric.{fabric_id}"


def view_group(fabric_id: int, view_key: str, encoding: str) -> str:
    """Channel group of the sockets of one (view, encoding) of a fabric (names stay under Channels' 100 chars)."""
    if len(view_key) > 60:
        view_key = "h-" + hashlib.sha256(view_key.encode()).hexdigest()[:24]
    return f"fabric.{fabric_id}.{view_key}.{encoding}"


def user_group(user_id: int) -> str:
    """Channel group of one user's sockets (told when the user's access changes)."""
    return f"user.{user_id}"


# ------------------------------------------------------------------ per tick
async def store_newest(fabric_id: int, seq: int, header: dict, links: str | bytes) -> None:
    """Keep the newest frame's header (every job and alert) and its per-link arrays for snapshots.

    ``links``: the v1 text fragment when this tick encoded one, else the packed arrays
    (:func:`ibweb.live.feed.encodings.pack_arrays`) a new v1 client's snapshot is rendered from.

    If the cache lost the topology since this process stored it, it is stored again, so that
    new clients can be greeted after a Redis restart.
    """
    if fabric_id in _published and await cache.aget(_key(fabric_id, "topology")) is None:
        await store_topology(fabric_id, *_published[fabric_id])
    parts = {_key(fabric_id, "header_frame"): header, _key(fabric_id, "seq"): seq,
             _key(fabric_id, "links"): (seq, links)}
    await asyncio.to_thread(cache.set_many, parts, _TTL_S)  # one pipeline (aset_many: a round trip per key)


async def store_newest_shared(fabric_id: int, seq: int, encoding: str, shared: object) -> None:
    """Keep what every view's frame of tick ``seq`` shares in a binary ``encoding`` (its encoded per-link arrays).

    A new socket of that encoding is sent the newest frame right after its snapshot, assembled
    from this and its view's header, as the runner assembles each tick's frames.
    """
    await cache.aset(_key(fabric_id, f"shared:{encoding}"), (seq, shared), _TTL_S)


async def newest_binary_parts(fabric_id: int, encoding: str) -> tuple[dict | None, object]:
    """The newest frame header and the shared part of its ``encoding`` (see :func:`store_newest_shared`), or Nones.

    When that tick stored no shared part of ``encoding`` (no socket used it yet), it is encoded
    here from the per-link arrays kept for snapshots.
    """
    from ibweb.live.feed.encodings import ENCODINGS, stored_arrays

    keys = [_key(fabric_id, "header_frame"), _key(fabric_id, f"shared:{encoding}"), _key(fabric_id, "links")]
    got = await cache.aget_many(keys)
    header, shared, links = (got.get(k) for k in keys)
    if header is None:
        return None, None
    if shared is not None and shared[0] == header.get("seq"):
        return header, shared[1]
    if not links or links[0] != header.get("seq"):
        return None, None
    return header, ENCODINGS[encoding].shared_of(stored_arrays(links[1]))


async def broadcast_view_frame(fabric_id: int, view_key: str, encoding: str, seq: int, payload: str | bytes,
                               view_version: str = "") -> None:
    """Send one (view, encoding)'s frame of tick ``seq``, filtered for view version ``view_version``, to its sockets."""
    event = {"type": FRAME_EVENT, "seq": seq, "view": view_version}
    event["bytes" if isinstance(payload, bytes) else "text"] = payload
    await get_channel_layer().group_send(view_group(fabric_id, view_key, encoding), event)


async def broadcast_snapshot(fabric_id: int, groups: list[str] | None = None) -> None:
    """Tell the sockets of the fabric (or of ``groups`` only) to take a new snapshot."""
    layer = get_channel_layer()
    for group in groups or [group_name(fabric_id)]:
        await layer.group_send(group, {"type": SNAPSHOT_EVENT})


async def broadcast_access_changed(user_id: int) -> None:
    """Tell the sockets of a user that what they may see changed (each one asks again)."""
    await get_channel_layer().group_send(user_group(user_id), {"type": ACCESS_EVENT})


async def newest_parts(fabric_id: int) -> tuple[dict | None, str | bytes | None]:
    """The newest frame header and its per-link arrays (see :func:`store_newest`), or Nones."""
    got = await cache.aget_many([_key(fabric_id, "header_frame"), _key(fabric_id, "links")])
    header = got.get(_key(fabric_id, "header_frame"))
    links = got.get(_key(fabric_id, "links"))
    if header is None or not links or links[0] != header.get("seq"):
        return None, None
    return header, links[1]


async def last_seq(fabric_id: int) -> int:
    """Sequence number of the newest frame published for the fabric (0 before the first)."""
    return int(await cache.aget(_key(fabric_id, "seq"), 0))


# ------------------------------------------------------------------ topology
def topology_base(topology: dict) -> str:
    """The topology's JSON text with its node names and GUIDs replaced by :data:`IDS_PLACEHOLDER`."""
    nodes = {k: v for k, v in topology["nodes"].items() if k not in ("name", "guid")}
    nodes["@@ids@@"] = 0
    return json.dumps({**topology, "nodes": nodes}, separators=(",", ":"))


def with_ids(base: str, names: list[str], guids: list[str]) -> str:
    """A topology text of :func:`topology_base` with a view's node ``names`` and ``guids`` put back."""
    ids = json.dumps({"name": names, "guid": guids}, separators=(",", ":"))[1:-1]
    return base.replace(IDS_PLACEHOLDER, ids, 1)


async def store_topology(fabric_id: int, header: str, topology: str) -> None:
    """Store the snapshot's fabric header and topology base (:func:`topology_base`) for new clients."""
    _published[fabric_id] = (header, topology)
    await cache.aset_many({_key(fabric_id, "header"): header, _key(fabric_id, "topology"): topology}, _TTL_S)


async def snapshot_parts(fabric_id: int) -> tuple[str, str] | None:
    """``(fabric header, topology base)`` for a new client, or None while the engine has not started."""
    parts = await cache.aget_many([_key(fabric_id, p) for p in ("header", "topology")])
    header = parts.get(_key(fabric_id, "header"))
    topology = parts.get(_key(fabric_id, "topology"))
    return (header, topology) if header is not None and topology is not None else None


def snapshot_message(header: str, topology: str, frame: str | None) -> str:
    """The v1 ``snapshot`` message (``frame``: the view's newest v1 frame text, or None)."""
    return f'{{"v":1,"type":"snapshot","fabric":{header},"topology":{topology},"frame":{frame or "null"}}}'


# ------------------------------------------------------------------ progress
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
