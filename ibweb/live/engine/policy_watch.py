"""A fabric's policy version as its runner sees it: read from the database without holding the tick.

The version is a database column (:func:`ibweb.tenancy.engine_policy.policy_version`), and a
runner reads it every tick. A database that stops answering (a failover, a paused proxy) must
not stop the frames, so the read runs on a thread of its own and the tick waits for it at most
:data:`WAIT_S`: a read still pending leaves the last version known, and the tick goes on; it is
not started again until it ended. One thread (and so one connection) per process serves every
runner's reads; a connection an error broke is closed, and the next read opens another.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from django.db import DatabaseError, connection

from ibweb.tenancy.engine_policy import policy_version

__all__ = ["PolicyVersionWatch", "WAIT_S"]

log = logging.getLogger("ibweb.live")

#: How long a tick waits for the read (a primary-key query answers in a millisecond).
WAIT_S = 0.25

_reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ibweb-policy-version")


def _read(fabric_id: int) -> int:
    try:
        return policy_version(fabric_id)
    except DatabaseError:
        connection.close()
        raise


class PolicyVersionWatch:
    """The newest policy version of one fabric that the database gave (``None`` before the first answer)."""

    def __init__(self, fabric_id: int) -> None:
        self.fabric_id = fabric_id
        self.known: int | None = None
        self._pending: asyncio.Future | None = None

    async def current(self) -> int | None:
        """The version now, or the last one known while the database has not answered within :data:`WAIT_S`."""
        loop = asyncio.get_running_loop()
        if self._pending is not None and self._pending.get_loop() is not loop:
            self._pending = None  # a read of an event loop that ended (the runner started again)
        if self._pending is None:
            self._pending = loop.run_in_executor(_reader, _read, self.fabric_id)
        done, _ = await asyncio.wait({self._pending}, timeout=WAIT_S)
        if not done:
            return self.known
        read, self._pending = self._pending, None
        try:
            self.known = read.result()
        except DatabaseError as exc:
            log.warning("fabric %s: policy version not read (%s); keeping version %s", self.fabric_id, exc, self.known)
        return self.known
