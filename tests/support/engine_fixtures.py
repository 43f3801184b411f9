"""Start a fabric's runner in a synchronous test, so that its runtime record and snapshot are published."""

from __future__ import annotations

import asyncio
import json

from ibweb.live.engine.runner import FabricRunner


def published(row) -> FabricRunner:
    """A started :class:`FabricRunner` of ``row`` (its source built, its record and topology published)."""
    runner = FabricRunner(row)
    asyncio.run(runner.start())
    return runner


async def settled_tick(runner: FabricRunner) -> None:
    """One tick, and the receivers it signalled (events, in worker threads) done: their writes would lock SQLite."""
    await runner.tick()
    await asyncio.gather(*runner.pending())


def newest_v1_frame(fabric_id: int) -> dict | None:
    """The newest frame of a fabric as the ``ALL`` view's v1 message carries it (header and per-link arrays)."""
    from ibweb.live.feed.encodings import ENCODINGS, unpack_arrays, v1_links
    from ibweb.live.feed.frame_store import newest_parts

    header, links = asyncio.run(newest_parts(fabric_id))
    if header is None:
        return None
    text = links if isinstance(links, str) else v1_links(unpack_arrays(links))
    return json.loads(ENCODINGS["v1"].frame(header, text))
