"""The history ring and one-minute rollups at ~200k directed links (32,768 GPUs), embedded default (issue 35).

Records one minute of ticks (``--ticks``, default 60) of ``--links`` directed links (random
identities of one topology, a cable cut half-way: the second half of the minute runs on a topology
without ``--cut`` cables, some links without counters) into the ring in local memory, then rolls the
minute up as the removed rollup task did (:func:`ibweb.live.history.reads.ticks` then
:func:`tests.bench.sql_rollups.rollup_minute`, the baseline of issue 40; no database write). Prints per-tick record
ms, the read ms, the rollup ms and the rollup cost per tick (rollup / ticks). Run:
``.venv/bin/python tests/bench/bench_rollup.py [--links 200000] [--ticks 60]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.pop("REDIS_URL", None)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")
os.environ.setdefault("IBWEB_HISTORY_DIR", tempfile.mkdtemp(prefix="bench-rollup-"))

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from ibweb.live.history import layout, reads, ring  # noqa: E402
from ibweb.live.history.link_identity import IDENTITY, LinkIdentities  # noqa: E402
from tests.bench.sql_rollups import rollup_minute  # noqa: E402


def topology(n: int, rng: np.random.Generator) -> LinkIdentities:
    keys = np.empty(n, dtype=IDENTITY)
    keys["tx_guid"] = np.arange(n, dtype=np.uint64) // 64 + 1
    keys["tx_port"] = np.arange(n) % 64 + 1
    keys["rx_guid"] = rng.integers(1, 2**40, n, dtype=np.uint64)
    keys["rx_port"] = rng.integers(1, 64, n)
    guids = np.unique(np.concatenate([keys["tx_guid"], keys["rx_guid"]]))
    return LinkIdentities(keys, guids, np.zeros(len(guids), bool), np.array([f"n{g}" for g in guids], dtype=object))


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--links", type=int, default=200_000)
    p.add_argument("--ticks", type=int, default=60)
    p.add_argument("--cut", type=int, default=64)
    a = p.parse_args()
    rng = np.random.default_rng(1)
    full = topology(a.links, rng)
    cut = LinkIdentities(full.keys[a.cut:], full.node_guid, full.node_host, full.node_name)
    fid, t0 = 4242, float(int(time.time() // 60) * 60 - 120)
    ring.clear(fid)
    for v, ids in (("full", full), ("cut", cut)):  # as record() stores them
        ring.store().set(layout.topo_key(fid, v), ids.encode(), 3600)

    class Fake:  # record() checks the topology's size only
        def __init__(self, n: int) -> None:
            self.num_links = n // 2

    spent = []
    for i in range(a.ticks + 1):
        ids = full if i < a.ticks // 2 else cut
        rate = rng.random(len(ids.keys), dtype=np.float32) * 400
        rate[::97] = np.nan  # links without counters
        start = time.perf_counter()
        await ring.record(fid, i + 1, t0 + i, rate, rate / 400, topology="full" if ids is full else "cut",
                          fabric=Fake(len(ids.keys)))
        spent.append(time.perf_counter() - start)
    start = time.perf_counter()
    parts = reads.ticks(fid, t0, t0 + 60)
    read = time.perf_counter() - start
    start = time.perf_counter()
    rows = rollup_minute(fid, int(t0 // 60), parts)
    roll = time.perf_counter() - start
    print(f"links {a.links}, ticks {a.ticks}: record {1000 * float(np.median(spent)):.1f} ms/tick (median), "
          f"read {1000 * read:.0f} ms, rollup {1000 * roll:.0f} ms ({1000 * roll / a.ticks:.1f} ms per tick), "
          f"{len(rows)} rows")
    ring.clear(fid)


if __name__ == "__main__":
    asyncio.run(main())
