"""Every signed-in feed socket of a process asked again, all at once, every ``IBWEB_SESSION_RECHECK_S``.

One watch per event loop holds the process's signed-in sockets and, every period, asks the database about all
of them in one :func:`~ibweb.live.feed.session_check.signed_out` call (a few queries, not a round trip per
socket: 500 sockets at 5 s were 100 checks a second); each socket whose sign-in ended is told through its
``sign_in_ended()``. The watch runs while it has sockets and stops with the last.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Protocol

from channels.db import database_sync_to_async
from django.conf import settings

from ibweb.live.feed.session_check import signed_out

__all__ = ["watch", "unwatch"]

log = logging.getLogger(__name__)


class Watched(Protocol):
    scope: dict

    async def sign_in_ended(self) -> None: ...


class _Watch:
    def __init__(self) -> None:
        self.sockets: dict[Watched, None] = {}  # insertion-ordered set
        self.task: asyncio.Task | None = None

    def add(self, socket: Watched) -> None:
        self.sockets[socket] = None
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self.sockets:
            await asyncio.sleep(settings.IBWEB_SESSION_RECHECK_S)
            sockets = list(self.sockets)
            if not sockets:
                return
            try:
                ended = await database_sync_to_async(signed_out)([s.scope for s in sockets])
            except Exception:  # the database away: ask again next period, close nobody on no answer
                log.warning("feed sign-in recheck of %d sockets failed; asking again in %s s", len(sockets),
                            settings.IBWEB_SESSION_RECHECK_S, exc_info=True)
                continue
            for i in ended:  # loop over the sockets whose sign-in ended
                self.sockets.pop(sockets[i], None)
                try:
                    await sockets[i].sign_in_ended()
                except Exception:  # one socket that cannot be closed (gone meanwhile) must not stop the others
                    log.warning("closing a signed-out feed socket failed", exc_info=True)


_watches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Watch] = weakref.WeakKeyDictionary()


def watch(socket: Watched) -> None:
    """Ask about ``socket``'s sign-in with the others of this event loop, every ``IBWEB_SESSION_RECHECK_S``."""
    loop = asyncio.get_running_loop()
    if loop not in _watches:
        _watches[loop] = _Watch()
    _watches[loop].add(socket)


def unwatch(socket: Watched) -> None:
    """Stop asking about ``socket`` (it closed)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    w = _watches.get(loop)
    if w is not None:
        w.sockets.pop(socket, None)
