"""The websocket consumer of the live feed."""

from __future__ import annotations

import asyncio
import json

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from ibweb.fabrics.models import Fabric
from ibweb.permissions import can_view
from ibweb.tenancy.access import visible_hosts, visible_tenant_slugs

from .groups import group_name, snapshot_text, starting
from .tenant_view import filter_snapshot_text, filter_text

CLOSE_NOT_FOUND = 4404
CLOSE_FORBIDDEN = 4403
CLOSE_UNAVAILABLE = 4503
CLOSE_BAD_MESSAGE = 4400
CLOSE_UNSUPPORTED_DATA = 1003


class LiveConsumer(AsyncWebsocketConsumer):
    """Sends a snapshot on connect, then the newest frame whenever one is published.

    Frames are coalesced: a handler only records the newest text; a sender task
    writes it when the socket is ready, so a slow client skips frames instead of
    growing a queue.
    """

    async def connect(self) -> None:
        self.fabric_id = None
        self._sender = None
        slug = self.scope["url_route"]["kwargs"]["slug"]
        await self.accept()
        if not can_view(self.scope.get("user")):
            await self.close(code=CLOSE_FORBIDDEN)
            return
        fabric_id = await self._visible_fabric(slug)
        if fabric_id is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self._latest: tuple[int, str] | None = None
        self._resnapshot = False
        self._progress: dict[tuple, dict] = {}
        self._last_seq = -1
        self._wake = asyncio.Event()
        self._tenants, self._hosts = await self._tenant_view(fabric_id)
        await self.channel_layer.group_add(group_name(fabric_id), self.channel_name)
        self.fabric_id = fabric_id
        snapshot = await self._snapshot()
        self._has_snapshot = snapshot is not None
        if snapshot is not None:
            await self.send(text_data=snapshot)
        else:
            progress = await starting(fabric_id)
            if progress is None:  # no engine runs this fabric
                await self.close(code=CLOSE_UNAVAILABLE)
                return
            await self.send(text_data=json.dumps({"v": 1, "type": "progress", **progress}))
        self._sender = asyncio.create_task(self._send_newest())

    async def _snapshot(self) -> str | None:
        text = await snapshot_text(self.fabric_id)
        if text is not None and self._tenants is not None:
            text = await asyncio.to_thread(filter_snapshot_text, text, self._tenants, self._hosts)
        return text

    @database_sync_to_async
    def _tenant_view(self, fabric_id: int) -> tuple[set[str] | None, set[int] | None]:
        """The tenants whose jobs and the hosts whose names this user sees (``None``: all)."""
        user = self.scope.get("user")
        tenants = visible_tenant_slugs(user)
        if tenants is None:
            return None, None
        hosts = visible_hosts(user, Fabric.objects.get(pk=fabric_id))
        return tenants, {int(h) for h in hosts}

    @database_sync_to_async
    def _visible_fabric(self, slug: str) -> int | None:
        return Fabric.objects.restrict(self.scope.get("user")).filter(slug=slug).values_list("pk", flat=True).first()

    async def fabric_frame(self, event: dict) -> None:
        self._latest = (event["seq"], event["text"])
        self._wake.set()

    async def fabric_snapshot(self, event: dict) -> None:
        self._resnapshot = True
        self._wake.set()

    async def fabric_progress(self, event: dict) -> None:
        payload = event["payload"]
        self._progress[(payload.get("task"), payload.get("id"))] = payload
        self._wake.set()

    async def _send_newest(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._progress:
                _, payload = self._progress.popitem()
                await self.send(text_data=json.dumps({"v": 1, "type": "progress", **payload}))
            if self._resnapshot:
                self._resnapshot = False
                snapshot = await self._snapshot()
                if snapshot is not None:
                    await self.send(text_data=snapshot)
                    self._has_snapshot = True
            if self._latest is None or not self._has_snapshot:
                continue
            seq, text = self._latest
            if seq > self._last_seq:
                self._last_seq = seq
                if self._tenants is not None:  # a tenant's user sees only its tenants' jobs
                    text = await asyncio.to_thread(filter_text, text, self._tenants)
                await self.send(text_data=text)

    async def receive(self, text_data=None, bytes_data=None) -> None:
        """Clients may only send ``{"type": "ping"}`` (answered with ``pong``); anything else closes the socket."""
        if text_data is None:
            await self.close(code=CLOSE_UNSUPPORTED_DATA)
            return
        try:
            message = json.loads(text_data)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("type") == "ping":
            await self.send(text_data=json.dumps({"v": 1, "type": "pong"}))
        else:
            await self.close(code=CLOSE_BAD_MESSAGE)

    async def disconnect(self, code) -> None:
        if self._sender is not None:
            self._sender.cancel()
        if self.fabric_id is not None:
            await self.channel_layer.group_discard(group_name(self.fabric_id), self.channel_name)
