"""The runtime record at 32,768 GPUs on the real Redis: publish, size, path queries cold and warm (issue 13).

Builds the fabric the scale benches run (:func:`fabric_engine.scenario.loaded_rail_spec`: a
rail-optimized 3-level NDR fabric, 8 GPUs a node, 32 nodes a scalable unit, radix 64; minhop
routing; 128 jobs of 256 GPUs in 8 tenants), then, on Redis (``BENCH_RECORD_REDIS_URL``,
default db 13 of 127.0.0.1:6379, flushed before and after) as the cache every process shares:

* publish: :func:`ibweb.runtime.record.publish` of the fabric, its LFTs, job catalog and
  routing report (what the leader does on a topology change), and
  :func:`~ibweb.runtime.record.publish_tenants` of the 8 tenants' host sets, seconds;
* jobs-only publish: :func:`~ibweb.runtime.record.publish_jobs` of a new job catalog (what the
  leader does when a scheduler starts or ends a job: no fabric, LFT or report again), ms;
* size: the record's keys in Redis (``MEMORY USAGE``), MiB;
* path query from a cold reader (this process's decode memo cleared before each query: the
  head, the fabric and the LFT chunks of the switches crossed are read and decoded) and from a
  warm one (the fabric decoded, the chunks of earlier queries held): ``record.routing(...).trace``
  of random host pairs, median and worst, ms.

Targets: publish <= 1 s; jobs-only publish <= 100 ms; size <= 32 MiB; cold path query <= 100 ms, warm <= 20 ms
(medians).
Run: ``.venv/bin/python tests/bench/bench_record.py [--gpus 32768] [--queries 40]`` (needs Redis).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
REDIS_URL = os.environ.get("BENCH_RECORD_REDIS_URL", "redis://127.0.0.1:6379/13")
os.environ["REDIS_URL"] = REDIS_URL
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
import redis  # noqa: E402

from fabric_engine.routing import quality  # noqa: E402
from fabric_engine.scenario import build_emulator, loaded_rail_spec  # noqa: E402
from ibweb.runtime import record  # noqa: E402
from ibweb.runtime.catalog import job_catalog  # noqa: E402
from tests.bench.targets import machine, target  # noqa: E402

FABRIC_ID = 990_001  # no row: the record is keyed by this number only
ROW = "bench:record"


def tenant_sets(f, catalog: list[dict]) -> dict[int, dict]:
    """The host sets of the catalog's tenants (as :func:`ibweb.access.tenant_host_sets` would give them)."""
    by_tenant: dict[str, set[int]] = {}
    for job in catalog:
        by_tenant.setdefault(job["tenant"], set()).update(job["hosts"])
    out = {}
    for k, (slug, hosts) in enumerate(sorted(by_tenant.items())):
        nodes = np.array(sorted(hosts), dtype=np.int64)
        out[k + 1] = {"slug": slug, "name": slug.title(), "nodes": nodes.tolist(),
                      "guids": [int(g) for g in f.guid[nodes]]}
    return out


def query(routing_of, src: int, dst: int) -> float:
    t = time.perf_counter()
    routing = routing_of()
    hops = routing.trace(src, dst)
    elapsed = time.perf_counter() - t
    assert hops and hops[-1]["node"] == dst, (src, dst, hops)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=32768)
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args()
    print(machine())
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as exc:
        print(f"bench_record: no Redis at {REDIS_URL}: {exc}", file=sys.stderr)
        return 1
    client.flushdb()
    try:
        t = time.perf_counter()
        emu = build_emulator(loaded_rail_spec(args.gpus))
        routing = emu.routing
        f = routing.fabric
        catalog = job_catalog(emu.jobs, routing)
        report = quality.report(routing).to_dict()
        sets = tenant_sets(f, catalog)
        print(f"{args.gpus:,} GPUs: {f.num_hosts:,} hosts, {f.num_switches:,} switches, {f.num_links:,} links; "
              f"LFTs {routing.lft.shape[0]:,} x {routing.lft.shape[1]:,} = {routing.lft.nbytes / 2**20:.0f} MiB; "
              f"{len(catalog)} jobs; built in {time.perf_counter() - t:.1f} s")

        publishes = []
        for _ in range(3):  # each publish is a new version; the previous one's parts expire a minute later
            t = time.perf_counter()
            version = record.publish(FABRIC_ID, ROW, f, routing, catalog, {"source": "emulated"}, report=report)
            publishes.append(time.perf_counter() - t)
        t = time.perf_counter()
        assert record.publish_tenants(FABRIC_ID, version, 1, sets)
        tenants_s = time.perf_counter() - t
        h = record.head(FABRIC_ID, ROW)
        keys = [k for k in client.scan_iter(match=f"*ibweb:rt:{FABRIC_ID}:{version}:*", count=1000)]
        keys += list(client.scan_iter(match=f"*ibweb:rt:{FABRIC_ID}:head", count=10))
        size = sum(client.memory_usage(k) or 0 for k in keys)
        lft_keys = [k for k in keys if b":lft:" in k]
        chunk = statistics.median(client.strlen(k) for k in lft_keys)
        publish_s = statistics.median(publishes)
        runs = ", ".join(f"{p:.3f}" for p in publishes)
        print(f"publish: median {publish_s:.3f} s of {len(publishes)} (runs {runs}); "
              f"tenant host sets ({len(sets)} tenants, {sum(len(s['nodes']) for s in sets.values()):,} hosts) "
              f"{tenants_s * 1000:.1f} ms")
        print(f"size in Redis: {size / 2**20:.2f} MiB in {len(keys)} keys ({len(lft_keys)} LFT chunks, "
              f"median {chunk / 1024:.1f} KiB each)")

        rng = np.random.default_rng(1)
        hosts = f.hosts
        pairs = [(int(a), int(b)) for a, b in rng.choice(hosts, size=(args.queries, 2)) if a != b]

        def routing_of():
            return record.routing(FABRIC_ID, record.head(FABRIC_ID, ROW))

        cold = []
        for src, dst in pairs:
            record.forget_memo()  # as a process that never read this record
            cold.append(query(routing_of, src, dst))
        record.forget_memo()
        query(routing_of, *pairs[0])  # this process has now decoded the fabric
        warm = [query(routing_of, src, dst) for src, dst in pairs]
        print(f"path query, cold reader: median {statistics.median(cold) * 1000:.1f} ms, "
              f"worst {max(cold) * 1000:.1f} ms; warm: median {statistics.median(warm) * 1000:.2f} ms, "
              f"worst {max(warm) * 1000:.1f} ms ({len(pairs)} random host pairs)")
        assert h is not None and h["version"] == version

        jobs_publishes = []
        for k in range(3):  # a job ends, then another: each a new version on the same base
            t = time.perf_counter()
            assert record.publish_jobs(FABRIC_ID, record.head(FABRIC_ID, ROW)["version"], catalog[k + 1:])
            jobs_publishes.append(time.perf_counter() - t)
        assert record.fabric_version(record.head(FABRIC_ID, ROW)) == version
        jobs_s = statistics.median(jobs_publishes)
        print(f"jobs-only publish ({len(catalog) - 2} jobs): median {jobs_s * 1000:.1f} ms of {len(jobs_publishes)} "
              f"(runs {', '.join(f'{p * 1000:.1f}' for p in jobs_publishes)} ms)")

        ok = target(f"record publish at {args.gpus:,} GPUs (fabric, LFTs, catalog, report)", publish_s, 1.0, "s")
        ok &= target(f"jobs-only record publish at {args.gpus:,} GPUs (catalog; fabric and LFTs kept)",
                     jobs_s * 1000, 100, "ms")
        ok &= target(f"record size in Redis at {args.gpus:,} GPUs", size / 2**20, 32, "MiB")
        ok &= target(f"path query from a cold reader at {args.gpus:,} GPUs (median)",
                     statistics.median(cold) * 1000, 100, "ms")
        ok &= target(f"path query from a warm reader at {args.gpus:,} GPUs (median)",
                     statistics.median(warm) * 1000, 20, "ms")
        return 0 if ok else 1
    finally:
        client.flushdb()


if __name__ == "__main__":
    sys.exit(main())
