"""A fabric leader's feed: its topology and snapshot, and each tick's frame, per view and encoding, to its sockets.

The feed gets one message per (view, encoding) pair that has sockets (:mod:`ibweb.live.feed.view_registry`): the
per-link arrays encoded once per encoding, the header filtered once per view (:class:`~ibweb.live.feed.view.FeedView`).
The newest frame is stored too (:mod:`ibweb.live.feed.frame_store`), for a socket that connects before the next one.
"""

from __future__ import annotations

import asyncio
import json

from asgiref.sync import sync_to_async

from fabric_engine.formats.json_format import to_json
from ibweb.live.engine.publishing import Tick, TopologyChange
from ibweb.live.feed import view_registry as viewreg
from ibweb.live.feed.encodings import ENCODINGS, link_arrays, pack_arrays
from ibweb.live.feed.frame_store import (
    broadcast_snapshot,
    broadcast_view_frame,
    snapshot_parts,
    store_newest,
    store_newest_shared,
    store_topology,
    topology_base,
)
from ibweb.live.feed.view import FeedView, feed_view

__all__ = ["FeedPublisher"]


class FeedPublisher:
    """Publishes one fabric row's topology and frames to its feed (a :class:`~ibweb.live.engine.publishing.Publisher`).

    ``views``: a :class:`FeedView` per view key with sockets, computed again after a policy or topology change.
    """

    def __init__(self, row) -> None:
        self.row = row
        self.fabric_id = row.pk
        self.views: dict[str, FeedView] = {}
        self._views_stamp: tuple | None = None

    async def topology_changed(self, change: TopologyChange) -> None:
        """Store the new topology and header; send connected clients a new snapshot if ``change`` says so."""
        # The feed carries the graph; what a capture said besides (warnings, descriptions) is for operators.
        topology = await asyncio.to_thread(lambda: topology_base(to_json(change.fabric, as_read=())))
        row = self.row
        header = json.dumps({"slug": row.slug, "name": row.name, "mode": row.mode, "tick_s": row.tick_s})
        announce = change.announce
        if announce is None:  # clients were shown another fabric or header, or it was routed otherwise (a changed row)
            announce = change.rerouted or await snapshot_parts(self.fabric_id) != (header, topology)
        await store_topology(self.fabric_id, header, topology)
        if announce:
            await broadcast_snapshot(self.fabric_id)

    async def publish(self, version: str | None, tick: Tick) -> None:
        """Store the tick's frame and send it to every (view, encoding) pair with sockets."""
        state = tick.state
        pairs = sorted(await viewreg.active(self.fabric_id))
        await self.refresh_views({key for key, _ in pairs}, (version, tick.policy), tick.fabric)
        views = dict(self.views)

        def encode():  # one worker thread per tick for the CPU work
            header = tick.header
            shared = {name: ENCODINGS[name].shared(state) for name in sorted({e for _, e in pairs})}
            seen: dict[str, dict] = {}
            out = []
            for key, name in pairs:  # one filter per view, one encode per (view, encoding)
                if key not in views:
                    continue
                if key not in seen:
                    seen[key] = views[key].header(header)
                out.append((key, name, views[key].version, ENCODINGS[name].frame(seen[key], shared[name])))
            links = shared["v1"] if "v1" in shared else pack_arrays(link_arrays(state))
            binary = {name: part for name, part in shared.items() if ENCODINGS[name].binary}
            return header, links, binary, out

        header, links, binary, out = await asyncio.to_thread(encode)
        await store_newest(self.fabric_id, state.seq, header, links)
        for name, part in binary.items():  # a new socket of a binary encoding gets this tick's frame after its snapshot
            await store_newest_shared(self.fabric_id, state.seq, name, part)
        for key, name, view_version, payload in out:
            await broadcast_view_frame(self.fabric_id, key, name, state.seq, payload, view_version)

    async def refresh_views(self, keys: set[str], stamp: tuple, fabric) -> None:
        """Have a :class:`FeedView` for every view key in ``keys``; when ``stamp`` changed, recompute them.

        ``stamp``: the record version of the fabric and the policy version (a new job catalog alone changes
        no view). Frames carry their view's version: a socket whose snapshot shows another version of the
        view (its hosts or tenants changed) takes a new snapshot before the frame.
        """
        stale = stamp != self._views_stamp
        if stale:  # every view in use is computed again; views without sockets are dropped
            self.views = {k: v for k, v in self.views.items() if k in keys}
            todo = set(keys)
        else:
            todo = set(keys) - set(self.views)
        self._views_stamp = stamp
        if not todo:
            return
        for key in sorted(todo):  # a handful of views: all, fabric, one per tenant combination
            try:
                self.views[key] = await sync_to_async(feed_view)(key, self.row, fabric)
            except ValueError:  # not a view key
                continue

    def reset(self) -> None:
        self.views, self._views_stamp = {}, None

    def pending(self) -> list[asyncio.Task]:
        return []
