"""ASGI lifespan app: runs the engine inside the web process in the embedded default."""

from __future__ import annotations

import asyncio

from django.conf import settings

from ibweb.live.engine.supervisor import EngineSupervisor
from ibweb.live.history import ring


class EngineLifespan:
    """Starts the engine supervisor on ASGI startup and stops it on shutdown."""

    def __init__(self) -> None:
        self.supervisor = EngineSupervisor()

    async def __call__(self, scope, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    if settings.IBWEB_ENGINE_EMBEDDED:
                        await self.supervisor.start()
                except Exception as exc:  # reported to the server, which refuses to start
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.supervisor.stop()
                await asyncio.to_thread(ring.flush_all)  # uvicorn ends on SIGTERM with no atexit
                await send({"type": "lifespan.shutdown.complete"})
                return
