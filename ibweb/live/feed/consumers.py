"""The websocket consumer of the live feed.

A socket sees its fabric through its user's access view (:func:`ibweb.access.view_of`): it
joins the channel group of that (view, encoding) pair and registers the pair
(:mod:`ibweb.live.feed.view_registry`), so the fabric's runner encodes one frame per pair and tick, whatever
the number of sockets that share it. The snapshot on connect is composed here from the parts
the runner keeps in the cache, through the same :class:`~ibweb.live.feed.view.FeedView`, with the
view's newest frame: inside it for v1, as a binary message right after it for v2.

Flow (:mod:`ibweb.websocket.flow`): the sender waits until its socket's write buffer is below the high-water
mark before it picks the frame to send, so a client that reads slower than the engine ticks gets the
newest frame and skips the ones in between, and nothing queues for it; handlers of channel-layer events
and client messages never wait for the socket (a ``pong`` goes out through the sender too).

When the user's access changes (tenants, groups, permissions, active flag: see
:mod:`ibweb.live.feed.receivers`) the socket asks again: a socket whose view changed moves to the new
view's group and is sent a new snapshot; one that may no longer see the fabric is closed with 4403.
A script signs in as on the API, with ``Authorization: Token <key>`` on the handshake (the key's user, checked
by :func:`ibweb.accounts.authentication.token_user`); a refused key or another scheme closes the socket with
4401 and the reason, never serves it as an anonymous visitor.
A signed-in socket whose sign-in ended (password changed, user deactivated or deleted, session
ended, token deleted: :mod:`ibweb.live.feed.session_check`) is closed with 4401, on that notice or within
``IBWEB_SESSION_RECHECK_S`` when the change happened where the notice cannot come from (another process).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import NamedTuple
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from rest_framework.exceptions import AuthenticationFailed

from ibweb.access import progress_message, view_from_key, view_of, visible_fabrics
from ibweb.accounts.authentication import token_user
from ibweb.fabrics.models import Fabric
from ibweb.http.json_input import JSONInputError, loads
from ibweb.live.feed import sign_in_watch
from ibweb.live.feed import view_registry as viewreg
from ibweb.live.feed.channel_layer import channel_backlog
from ibweb.live.feed.encodings import ENCODINGS, encoding_of, unpack_arrays, v1_links
from ibweb.live.feed.frame_store import (
    group_name,
    newest_binary_parts,
    newest_parts,
    snapshot_message,
    snapshot_parts,
    starting,
    user_group,
    view_group,
    with_ids,
)
from ibweb.live.feed.session_check import still_signed_in
from ibweb.live.feed.view import FeedView, cached_feed_view
from ibweb.websocket.flow import flow_of

log = logging.getLogger(__name__)

CLOSE_NOT_FOUND = 4404
CLOSE_FORBIDDEN = 4403
CLOSE_UNAVAILABLE = 4503
CLOSE_BAD_MESSAGE = 4400
#: The handshake's credentials were refused, or the socket's sign-in ended (password changed, deactivated,
#: signed out, token deleted): sign in again. The close frame's reason says which.
CLOSE_SIGNED_OUT = 4401
CLOSE_UNSUPPORTED_DATA = 1003
#: At most one snapshot per this many seconds because frames name another version of the socket's view.
RESYNC_S = 2.0
#: Channel-layer events whose handlers reach the database only through ``database_sync_to_async`` (which
#: closes stale connections itself): dispatched without channels' per-message connection check.
FAN_OUT_EVENTS = frozenset({"fabric.frame", "fabric.snapshot", "fabric.progress"})
#: Seconds a socket waits for an engine that has not yet said it is starting (a server just up, a
#: leader not yet elected) before it is closed with 4503.
START_GRACE_S = 10.0
#: Pings answered at most while the socket cannot take the pongs (more are dropped: a client that pings
#: and never reads must not grow the server).
MAX_PENDING_PONGS = 8


class Snapshot(NamedTuple):
    """A snapshot message and, for a binary encoding, the ``(seq, message)`` of the newest frame sent after it."""

    text: str
    frame: tuple[int, bytes] | None = None


class LiveConsumer(AsyncWebsocketConsumer):
    """Sends a snapshot on connect, then the newest frame of its view whenever one is published.

    Frames are coalesced: a handler only records the newest message; a sender task
    writes it when the socket is below its high-water mark, so a slow client skips frames
    instead of growing a queue.
    """

    async def connect(self) -> None:
        self.fabric_id = None
        self.view_key: str | None = None
        self._groups: list[str] = []
        self._tasks: list[asyncio.Task] = []
        self._pongs = 0
        self._wake = asyncio.Event()
        self.flow = flow_of(self.scope)
        slug = self.scope["url_route"]["kwargs"]["slug"]
        await self.accept()
        self.encoding = encoding_of(parse_qs(self.scope.get("query_string", b"").decode("latin-1")))
        if self.encoding is None:
            await self.close(code=CLOSE_BAD_MESSAGE)
            return
        if not await self._authenticate():
            return
        access = await self._access(slug)
        if access is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        view_key, row = access
        if row is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.row = row
        self.fabric_id = row.pk
        if self.flow is not None:
            self.flow.encoding = self.encoding
            self.flow.backlog = lambda: channel_backlog(self.channel_layer, self.channel_name)
        self._latest: tuple[int, str | bytes, str] | None = None
        self._view_version = ""
        self._next_resync = 0.0
        self._resnapshot = False
        self._progress: dict[tuple, dict] = {}
        self._last_seq = -1
        await self._join(group_name(self.fabric_id))
        user = self.scope.get("user")
        if user is not None and user.is_authenticated:
            await self._join(user_group(user.pk))
        await self._enter_view(view_key)
        snapshot = await self._snapshot()
        self._has_snapshot = snapshot is not None
        if snapshot is not None:
            await self._send_snapshot(snapshot)
        else:
            progress = await self._await_engine()
            if progress is None:  # no engine runs this fabric
                await self.close(code=CLOSE_UNAVAILABLE)
                return
            if isinstance(progress, Snapshot):
                await self._send_snapshot(progress)
                self._has_snapshot = True
            else:
                await self.send(text_data=json.dumps({"v": 1, "type": "progress", **progress}))
        self._tasks = [asyncio.create_task(self._send_newest()), asyncio.create_task(self._keep_registered())]
        if user is not None and user.is_authenticated:
            sign_in_watch.watch(self)

    async def dispatch(self, message) -> None:
        """Frames, snapshots and progress go straight to their handler.

        channels runs ``close_old_connections`` in its one thread-sensitive worker thread before every
        message it dispatches: for a frame sent to every socket of a process that is a thread hop per
        socket, one after the other, on the path of every frame. These handlers do not need it.
        """
        if message.get("type") in FAN_OUT_EVENTS:
            await getattr(self, get_handler_name(message))(message)
        else:
            await super().dispatch(message)

    async def _await_engine(self) -> dict | Snapshot | None:
        """The engine's start-up progress, or the snapshot once published, within :data:`START_GRACE_S`.

        None: no engine said anything in that time (none runs this fabric).
        """
        deadline = time.monotonic() + START_GRACE_S
        while True:
            progress = await starting(self.fabric_id)
            if progress is not None:
                return progress
            snapshot = await self._snapshot()
            if snapshot is not None:
                return snapshot
            if time.monotonic() >= deadline:
                return None
            await asyncio.sleep(0.25)

    # ------------------------------------------------------------ access
    async def _authenticate(self) -> bool:
        """With an ``Authorization`` header the socket is its token's user (as the API); a refused one closes it
        with 4401 and the reason (False). Without one, the session's user (or anonymous) stays."""
        header = dict(self.scope.get("headers") or []).get(b"authorization")
        if header is None:
            return True
        try:
            user, token = await database_sync_to_async(token_user)(header)
        except AuthenticationFailed as exc:
            await self.close(code=CLOSE_SIGNED_OUT, reason=str(exc.detail)[:120])
            return False
        self.scope["user"], self.scope["token"] = user, token
        return True

    @database_sync_to_async
    def _access(self, slug: str) -> tuple[str, Fabric | None] | None:
        """``(view key, fabric row)`` of this socket's user now (row None: no such fabric); None: not allowed.

        The user is read again from the database, so a changed grant or active flag counts at once.
        """
        user = self.scope.get("user")
        if user is not None and user.is_authenticated:
            from django.contrib.auth import get_user_model

            user = get_user_model().objects.filter(pk=user.pk).first()
            if user is None or not user.is_active:  # deleted or deactivated: the socket's session is over
                return None
        view = view_of(user)
        if not view.may_view:
            return None
        return view.key, visible_fabrics(view).filter(slug=slug).first()

    async def _join(self, group: str) -> None:
        await self.channel_layer.group_add(group, self.channel_name)
        self._groups.append(group)

    async def _leave(self, group: str) -> None:
        await self.channel_layer.group_discard(group, self.channel_name)
        self._groups.remove(group)

    async def _enter_view(self, view_key: str) -> None:
        """Receive the frames of ``view_key`` (leaving the previous view's group)."""
        if self.view_key is not None:
            await self._leave(view_group(self.fabric_id, self.view_key, self.encoding))
            await viewreg.release(self.fabric_id, self.view_key, self.encoding)
        self.view_key = view_key
        self._latest = None
        await self._join(view_group(self.fabric_id, view_key, self.encoding))
        await viewreg.register(self.fabric_id, view_key, self.encoding)

    async def access_changed(self, event: dict) -> None:
        """The user changed: close with 4401 if the sign-in ended; else move to the new view (with a new
        snapshot), or close with 4403."""
        if not await database_sync_to_async(still_signed_in)(self.scope):
            await self.close(code=CLOSE_SIGNED_OUT)
            return
        access = await self._access(self.row.slug)
        if access is None or access[1] is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        if access[0] != self.view_key:
            await self._enter_view(access[0])
            self._resnapshot = True
            self._wake.set()

    async def sign_in_ended(self) -> None:
        """The process's sign-in watch (:mod:`ibweb.live.feed.sign_in_watch`) found this socket's sign-in ended."""
        await self.close(code=CLOSE_SIGNED_OUT)

    async def _keep_registered(self) -> None:
        while True:
            await asyncio.sleep(viewreg.REFRESH_S)
            await viewreg.register(self.fabric_id, self.view_key, self.encoding, keep_alive=True)

    # ------------------------------------------------------------ snapshot
    async def _snapshot(self, expect: str | None = None) -> Snapshot | None:
        """The snapshot of this socket's view now, with the newest frame (in it for v1, after it for v2)."""
        parts = await snapshot_parts(self.fabric_id)
        if parts is None:
            return None
        header, base = parts
        fv, names, guids = await self._feed_view(expect)
        if fv is None:
            return None
        self._view_version = fv.version
        frame = after = None
        if self.encoding == "v1":
            frame_header, links = await newest_parts(self.fabric_id)
            if frame_header is not None:
                frame = await asyncio.to_thread(_v1_frame, fv, frame_header, links)
        else:  # a binary frame cannot go inside the JSON snapshot: it follows it, filtered as the runner filters
            frame_header, arrays = await newest_binary_parts(self.fabric_id, self.encoding)
            if frame_header is not None:
                payload = await asyncio.to_thread(ENCODINGS[self.encoding].frame, fv.header(frame_header), arrays)
                after = (int(frame_header["seq"]), payload)
        text = await asyncio.to_thread(lambda: snapshot_message(header, with_ids(base, names, guids), frame))
        return Snapshot(text, after)

    async def _send_snapshot(self, snapshot: Snapshot) -> None:
        """Send ``snapshot``, then (binary encodings) its newest frame, which the group's copy does not repeat."""
        await self.send(text_data=snapshot.text)
        if snapshot.frame is not None:
            self._last_seq = max(self._last_seq, snapshot.frame[0])
            await self.send(bytes_data=snapshot.frame[1])

    @database_sync_to_async
    def _feed_view(self, expect: str | None = None) -> tuple[FeedView | None, list, list]:
        return cached_feed_view(self.view_key, self.row, expect)

    # ------------------------------------------------------------ events
    async def fabric_frame(self, event: dict) -> None:
        self._latest = (event["seq"], event.get("text", event.get("bytes")), event.get("view", ""))
        self._wake.set()

    async def fabric_snapshot(self, event: dict) -> None:
        self._resnapshot = True
        self._wake.set()

    async def fabric_progress(self, event: dict) -> None:
        payload = progress_message(view_from_key(self.view_key), event["payload"])
        self._progress[(payload.get("task"), payload.get("id"))] = payload
        self._wake.set()

    async def _send_newest(self) -> None:
        while True:
            await self._wake.wait()
            if self.flow is not None:
                await self.flow.wait_writable()  # meanwhile newer frames replace the pending one
                if self.flow.closed_stalled:
                    return
            self._wake.clear()
            while self._pongs:
                self._pongs -= 1
                await self.send(text_data=json.dumps({"v": 1, "type": "pong"}))
            while self._progress:
                _, payload = self._progress.popitem()
                await self.send(text_data=json.dumps({"v": 1, "type": "progress", **payload}))
            if self._resnapshot:
                self._resnapshot = False
                snapshot = await self._snapshot()
                if snapshot is not None:
                    await self._send_snapshot(snapshot)
                    self._has_snapshot = True
            if self._latest is None or not self._has_snapshot:
                continue
            seq, message, version = self._latest
            if version and version != self._view_version and time.monotonic() > self._next_resync:
                # the view changed since the snapshot (a partition's members, a tenant): a new snapshot first
                self._next_resync = time.monotonic() + RESYNC_S
                snapshot = await self._snapshot(expect=version)
                if snapshot is not None:
                    await self._send_snapshot(snapshot)
            if seq > self._last_seq:
                if self.flow is not None:
                    self.flow.sent(seq - self._last_seq - 1 if self._last_seq >= 0 else 0)
                self._last_seq = seq
                if isinstance(message, bytes):
                    await self.send(bytes_data=message)
                else:
                    await self.send(text_data=message)

    async def receive(self, text_data=None, bytes_data=None) -> None:
        """Clients may only send ``{"type": "ping"}`` (answered with ``pong``); anything else closes the socket.

        A message is read by :func:`ibweb.http.json_input.loads` (nesting and size checked before it is parsed);
        one that is not a ping closes the socket with 4400 and one short log line, never its text (issue 26).
        The pong goes out through the sender task: this handler never waits for the socket to take it.
        """
        if getattr(self, "_refused", False):  # messages already on their way when the socket was closed
            return
        if text_data is None:
            self._refused = True
            await self.close(code=CLOSE_UNSUPPORTED_DATA)
            return
        try:
            message, why = loads(text_data), "not a ping"
        except JSONInputError as exc:
            message, why = None, str(exc)
        if isinstance(message, dict) and message.get("type") == "ping":
            self._pongs = min(self._pongs + 1, MAX_PENDING_PONGS)
            self._wake.set()
        else:
            self._refused = True
            log.info("feed socket of fabric %s closed with %d: %s", self.fabric_id, CLOSE_BAD_MESSAGE, why[:120])
            await self.close(code=CLOSE_BAD_MESSAGE)

    async def disconnect(self, code) -> None:
        sign_in_watch.unwatch(self)
        for task in self._tasks:
            task.cancel()
        for group in list(self._groups):
            await self._leave(group)
        if self.view_key is not None:
            await viewreg.release(self.fabric_id, self.view_key, self.encoding)
            self.view_key = None


def _v1_frame(fv: FeedView, header: dict, links: str | bytes | None) -> str | None:
    """The v1 frame text of the newest frame as ``fv`` sees it (for a snapshot)."""
    if links is None:
        return None
    text = links if isinstance(links, str) else v1_links(unpack_arrays(links))
    return ENCODINGS["v1"].frame(fv.header(header), text)
