"""Per-port history for 90 days (issue 40) at 16,384 and 32,768 GPUs, side by side with the SQL rollups it replaced.

The fabrics are the loaded rail-optimized fabrics of the scale benches (:func:`fabric_engine.scenario.
loaded_rail_spec`); one row per directed link's out port (2 x links ports). Per size (``--gpus``, default 16,384
and 32,768), in one run:

1. **The time-series store (embedded default)**, as the leader writes it (:mod:`ibweb.live.history.tsdb_publisher`:
   the tick's copy, ``port_sweep`` with the graded health and every error counter's rate from measured counters, the
   store's write): 61 sweeps 10 s apart, packing a 10-minute span; ingest CPU per write and per 1 s tick, bytes per
   stored sample (the packed span's blobs over its samples), the rollup endpoints' reads of those 10 minutes (a
   port's, the fabric's: what replaced the SQL rollups' rows), disk per day (pages per port per day from ``--day-ports``
   ports written through a whole day, times the ports) at steady state (raw 2 days, 1-minute and 1-hour tiers 90
   days).
2. **The SQL rollups ibweb wrote before** (the baseline; ibweb no longer writes them: the rollup endpoints read the
   store) of the same links (:mod:`ibweb.live.history.ring` and :func:`tests.bench.sql_rollups.rollup_minute`, every
   link busy): the ring's record per tick, the minute's rollup and its insert into SQLite with the removed
   ``LinkRollup``'s table and indexes (as Django created them); ingest CPU per tick, rows a minute, bytes per row and
   per stored value (mean and peak utilization, mean rate), disk per day (24 hours kept).
3. **Queries** at that many ports (90 days backfilled as compaction leaves them at its fullest): a port's 90-day chart
   at 1,000 and 4,000 points (< 200 ms), the top-20 ports over 7 days (< 2 s), a switch's 64 ports over 7 days; CPU
   time (one thread: its latency on an idle core), wall time beside it.
4. **A real Prometheus** (Debian's ``prometheus``, ``tests.support.prometheus.running_prometheus``) discovering the
   ``/metrics`` targets through ``http_sd_configs`` and scraping each once: parts of ``IBWEB_METRICS_TARGET_PORTS`` =
   2,048 ports rendered per request as the ``/metrics`` view renders them
   (:func:`fabric_engine.telemetry.prometheus.metric_families`, emulated counters), served by a stand-in HTTP server
   with ibweb's target list format; the largest target's size and Prometheus' own ``scrape_duration_seconds`` of it.
5. **VictoriaMetrics ingest** (``--victoria-gpus``, default 32,768; skipped without ``victoria-metrics``): remote-write
   encode + send per sweep (client) and the server's CPU per sweep (``/proc/<pid>/stat``), 6 sweeps a request.

Targets: embedded write and VictoriaMetrics ingest < 5% of a core at 10 s sweeps; 90-day chart < 200 ms; top-20 over
7 days < 2 s; the largest ``/metrics`` target <= 10 MB and scraped in <= 1 s.
Run: ``.venv/bin/python tests/bench/bench_tsdb.py [--gpus 16384 32768] [--skip prometheus victoria ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
_TMP = Path(tempfile.mkdtemp(prefix="bench-tsdb-"))
os.environ.pop("REDIS_URL", None)  # the ring in local memory, as the embedded default keeps it
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")
os.environ.setdefault("IBWEB_HISTORY_DIR", str(_TMP / "history"))
os.environ["DATABASE_URL"] = f"sqlite:///{_TMP / 'django.sqlite3'}"  # settings need one; nothing is written

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from ibweb.tsdb.codec import encode_rows  # noqa: E402
from ibweb.tsdb.embedded import BLOCK, DAY, PART, EmbeddedStore, Tier, default_tiers  # noqa: E402
from ibweb.tsdb.series import PORT_ID, SERIES  # noqa: E402
from tests.bench.targets import machine, target  # noqa: E402

STEP = 10
DAY_STEP = 60  # the day's sweeps: the raw tier at a minute, not 10 s (noisier: more bytes, if anything)
WEEK = 7 * DAY
ROLLUP_PG = "issue 40, PostgreSQL: 66,522 rows a minute, 24 MB a minute, 35 GB a day at 16,384 GPUs"
#: Ports per /metrics target (IBWEB_METRICS_TARGET_PORTS' default).
PORTS_PER_TARGET = 2048


def fabric_ports(n: int) -> np.ndarray:
    ports = np.empty(n, dtype=PORT_ID)
    ports["guid"] = 0x0002C90300000000 + np.arange(n, dtype=np.uint64) // 64
    ports["port"] = np.arange(n) % 64 + 1
    return ports


class Sweeps:
    """Synthetic sweeps of ``n`` ports: per-port levels drawn once, noise per sweep."""

    def __init__(self, n: int, seed: int = 1) -> None:
        self.n, self.rng = n, np.random.default_rng(seed)
        r = self.rng
        self.level = r.beta(0.6, 1.2, n)
        self.erring = r.random(n) < 0.001
        self.down = r.random(n) < 0.0001
        self.ber = 10.0 ** r.uniform(-15, -10, n)
        self.temp = r.uniform(40, 70, n)
        self.power = r.uniform(-3, 1, n)

    def values(self) -> dict[str, np.ndarray]:
        r, n = self.rng, self.n
        util = np.clip(self.level + r.normal(0, 0.05, n), 0, 1)
        zeros = np.zeros(n)
        out = {"utilization": util, "tx_bytes_per_s": util * 50e9,
               "rx_bytes_per_s": np.clip(self.level + r.normal(0, 0.05, n), 0, 1) * 50e9,
               "xmit_wait_per_s": util ** 4 * r.uniform(0, 1e6, n), "link_up": np.where(self.down, 0.0, 1.0),
               "effective_ber": self.ber * (1 + r.normal(0, 0.1, n)), "symbol_ber": self.ber * 0.01,
               "module_temperature_c": self.temp + r.normal(0, 0.1, n),
               "module_rx_power_dbm": self.power + r.normal(0, 0.01, n)}
        for name in SERIES:
            if name.startswith("error_"):
                out[name] = np.where(self.erring, r.poisson(0.5, n) / STEP, zeros)
        return out


def bench_day(n: int, workdir: Path) -> dict[int, float]:
    """Bytes per port per day of each tier, from a day of sweeps of ``n`` ports (also printed)."""
    path = workdir / "day.sqlite3"
    store = EmbeddedStore(path, tiers=(Tier(DAY_STEP, 600, 2 * DAY),) + default_tiers()[1:])
    ports, sweeps, t0 = fabric_ports(n), Sweeps(n, 2), float(int(time.time() // DAY) * DAY - 2 * DAY)
    start = time.process_time()
    for i in range(DAY // DAY_STEP + 1):
        store.write(1, t0 + DAY_STEP * i + 1, ports, sweeps.values())
    spent = time.process_time() - start
    db = store._db
    pages = dict(db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall())
    packed_pages = pages.get("packed", 0) + pages.get("packed_start", 0)
    blob = dict(db.execute("SELECT tier, SUM(LENGTH(data)) FROM packed GROUP BY tier").fetchall())
    scale = packed_pages / max(sum(blob.values()), 1)
    per = {0: blob.get(0, 0) * scale / n, 1: blob.get(1, 0) * scale / n}
    per[2] = per[1] / 12
    per[0] *= DAY_STEP / STEP
    print(f"a day of {n} ports x {len(SERIES)} series, sweeps every {DAY_STEP} s ({spent:.0f} s CPU to write, "
          f"{1000 * spent / (DAY // DAY_STEP):.1f} ms/sweep): bytes per port per day on disk (pages, indexes "
          f"included): raw {per[0]:.0f} at {STEP} s, 5-minute {per[1]:.0f}, 1-hour {per[2]:.0f} (estimated)",
          flush=True)
    store.close()
    path.unlink()
    return per


def steady_state(per: dict[int, float], n: int) -> tuple[float, float]:
    """GB written a day (raw at 10 s + downsampled) and GB on disk at steady state (raw 2 days, coarse tiers 90 days)
    for ``n`` ports."""
    day = (per[0] + per[1] + per[2]) * n / 1e9
    return day, (per[0] * 2 + (per[1] + per[2]) * 90) * n / 1e9


def backfill(store: EmbeddedStore, n: int, end_week: int, chart_block: int, rng: np.random.Generator) -> None:
    """Utilization of ``n`` ports as the tiers hold it at their fullest, ending 7 days after ``end_week``."""
    db, name, level = store._db, "utilization", rng.beta(0.6, 1.2, n).astype(np.float32)
    step = store.tiers[1].step  # the middle tier's buckets (IBWEB_TSDB_STEP_S: a minute)
    nblocks = -(-n // BLOCK)
    db.execute("BEGIN")
    db.executemany("INSERT INTO ports (fabric, slot, guid, port) VALUES (1, ?, ?, ?)",
                   zip(range(n), fabric_ports(n)["guid"].view(np.int64).tolist(), fabric_ports(n)["port"].tolist(),
                       strict=True))
    padded = np.zeros(nblocks * BLOCK, np.float32)

    def noisy(levels: np.ndarray, buckets: int, spread: float) -> np.ndarray:
        return np.clip(levels[:, None] + rng.normal(0, spread, (len(levels), buckets)).astype(np.float32), 0, 1)

    for week in range(13):  # 1-hour tier packed, all blocks
        start = end_week - (13 - week) * WEEK
        padded_m = np.zeros((nblocks * BLOCK, WEEK // 3600), np.float32)
        padded_m[:n] = noisy(level, WEEK // 3600, 0.01)
        db.executemany("INSERT INTO packed (fabric, tier, series, block, start, data) VALUES (1, 2, ?, ?, ?, ?)",
                       ((name, b, start, d) for b, d in enumerate(encode_rows(padded_m.reshape(nblocks, BLOCK, -1)))))
    for hour in range(6 * 24):  # 1-hour tier pending: 6 days
        padded[:n] = noisy(level, 1, 0.01)[:, 0]
        db.executemany("INSERT INTO pending (fabric, tier, series, part, bucket, data) VALUES (1, 2, ?, ?, ?, ?)",
                       ((name, p // PART, end_week // 3600 + hour, encode_rows(padded[p:p + PART][None], "lz4")[0])
                        for p in range(0, len(padded), PART)))
    span = store.tiers[1].span
    per_span = span // step
    for row in range(97 * DAY // span):  # middle tier packed, the charted block only
        row_block = noisy(level[chart_block * BLOCK:(chart_block + 1) * BLOCK], per_span, 0.02)
        full = np.zeros((BLOCK, per_span), np.float32)
        full[:len(row_block)] = row_block
        db.execute("INSERT INTO packed (fabric, tier, series, block, start, data) VALUES (1, 1, ?, ?, ?, ?)",
                   (name, chart_block, end_week - 90 * DAY + row * span, encode_rows(full[None])[0]))
    for bucket in range(per_span - 1):  # middle tier pending: the last packed row's span but one bucket
        padded[:n] = noisy(level, 1, 0.02)[:, 0]
        db.executemany("INSERT INTO pending (fabric, tier, series, part, bucket, data) VALUES (1, 1, ?, ?, ?, ?)",
                       ((name, p // PART, (end_week + 6 * DAY) // step + bucket,
                         encode_rows(padded[p:p + PART][None], "lz4")[0]) for p in range(0, len(padded), PART)))
    newest = end_week + WEEK - step
    db.executemany("INSERT OR REPLACE INTO marks (fabric, tier, done) VALUES (1, ?, ?)",
                   [(0, newest), (1, end_week + 6 * DAY), (2, end_week)])
    db.execute("INSERT OR REPLACE INTO fabrics (fabric, newest) VALUES (1, ?)", (newest + 5,))
    db.execute("COMMIT")


def timed(fn, repeat: int = 3) -> tuple[float, float]:
    """The best CPU and wall seconds of ``repeat`` calls (one thread: on an idle core the latency is the CPU time; on
    a shared machine the wall time is mostly the wait for a core)."""
    cpu = wall = float("inf")
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c), min(wall, time.perf_counter() - w)
    return cpu, wall


def bench_queries(n: int, workdir: Path) -> tuple[float, float]:
    """A port's 90-day chart (ms, the slower of 1,000 and 4,000 points) and the top-20 over 7 days (s)."""
    store = EmbeddedStore(workdir / f"queries-{n}.sqlite3")
    end_week = int(time.time() // WEEK) * WEEK - WEEK
    port = fabric_ports(n)[n // 2]
    chart_block = (n // 2) // BLOCK
    start = time.perf_counter()
    backfill(store, n, end_week, chart_block, np.random.default_rng(3))
    filled = time.perf_counter() - start
    end = end_week + WEEK - store.tiers[1].step
    key = (int(port["guid"]), int(port["port"]))
    chart = {p: timed(lambda p=p: store.range(1, key, "utilization", end - 90 * DAY, end, p)) for p in (1000, 4000)}
    got = store.range(1, key, "utilization", end - 90 * DAY, end, 1000).values
    top = timed(lambda: store.top(1, "utilization", end - 7 * DAY, end, 20), 1)
    switch = timed(lambda: store.ports_of_switch(1, key[0], "utilization", end - 7 * DAY, end, 1000))
    print(f"queries, {n} ports, 90 days backfilled ({filled:.0f} s, {store.used_bytes() / 1e9:.2f} GB), CPU (wall) "
          f"ms: a port's 90-day chart {1000 * chart[1000][0]:.0f} ({1000 * chart[1000][1]:.0f}) at 1,000 points "
          f"(1-hour tier), {1000 * chart[4000][0]:.0f} ({1000 * chart[4000][1]:.0f}) at 4,000 "
          f"({store.tiers[1].step} s tier), "
          f"{np.isnan(got).mean() * 100:.0f}% empty bins; top-20 over 7 days {1000 * top[0]:.0f} "
          f"({1000 * top[1]:.0f}); a switch's 64 ports over 7 days {1000 * switch[0]:.0f} ({1000 * switch[1]:.0f})",
          flush=True)
    store.close()
    return 1000 * max(c[0] for c in chart.values()), top[0]


def fabric_of(gpus: int):
    """The loaded rail-optimized fabric of ``gpus`` GPUs."""
    from fabric_engine.scenario import build_fabric, loaded_rail_spec

    return build_fabric(loaded_rail_spec(gpus)["topology"])


def out_ports(f) -> np.ndarray:
    """The out port of every directed link (the publisher's rows)."""
    ports = np.empty(2 * f.num_links, dtype=PORT_ID)
    ports["guid"], ports["port"] = f.guid[f.dl_src], f.dl_src_port
    return ports


def bench_publisher(gpus: int, f, workdir: Path) -> dict:
    """The leader's writes of 61 sweeps 10 s apart (every series: rates, XmitWait, link state, graded health, every
    error counter's rate from measured counters): tick-thread ms, writer CPU ms per write (packing spread over its
    span), bytes per stored sample of the packed span."""
    from fabric_engine.state import FabricState
    from fabric_engine.telemetry.counters import COLUMN, COLUMNS, ERROR_COUNTERS
    from ibweb.live.engine.publishing import Tick
    from ibweb.live.history.tsdb_publisher import ErrorRates, Sweep, port_sweep

    n, rng = 2 * f.num_links, np.random.default_rng(3)
    health = {"node": f.dl_src.astype(np.int32), "port": f.dl_src_port.astype(np.uint8),
              "effective": 10.0 ** rng.uniform(-15, -10, n), "temp": rng.uniform(40, 70, n),
              "raw": 10.0 ** rng.uniform(-12, -8, n), "grade": np.zeros(n, np.int8)}
    cols = [COLUMN[c] for c in ERROR_COUNTERS]
    counters = np.full((n, len(COLUMNS)), np.nan)
    counters[:, cols] = 0.0
    erring = rng.random(n) < 0.001
    store = EmbeddedStore(workdir / f"publisher-{gpus}.sqlite3")
    errors = ErrorRates()
    t0 = float(int(time.time() // 600) * 600 - 3600)
    on_tick, compose, write, pack, series = [], [], [], 0.0, 0
    for i in range(62):
        t = t0 + STEP * i + 1
        rate = rng.uniform(0, 400, n).astype(np.float32)
        counters = counters.copy()  # the source makes a new array per sweep
        counters[erring, cols[0]] += rng.poisson(5, int(erring.sum()))
        st = FabricState(seq=i, t=t, tick_s=1.0, rate_gbps=rate, util=rate / 400, xmit_wait=rate * 100,
                         stale=rng.random(n) < 0.001)
        start = time.perf_counter()
        sweep = Sweep.of("v", Tick(st, f, {}, measured=(counters, t)))
        on_tick.append(time.perf_counter() - start)
        start = time.process_time()
        ports, values = port_sweep(sweep, health, errors)
        compose.append(time.process_time() - start)
        series = max(series, len(values))
        start = time.process_time()
        store.write(1, sweep.t, ports, values)
        spent = time.process_time() - start
        if i == 61:
            pack = spent
        elif i:  # the first sighting (slots assigned) left out
            write.append(spent)
    per_write = (float(np.median(compose)) + (sum(write) + pack) / len(write)) * 1000
    raw = store._db.execute("SELECT SUM(LENGTH(data)) FROM packed WHERE tier = 0").fetchone()[0] or 0
    per_sample = raw / (n * series * 60)  # the series written (the catalog's others are not measured here)
    print(f"tsdb publisher at {gpus:,} GPUs ({n:,} ports, {series} series): tick thread "
          f"{1000 * float(np.median(on_tick)):.1f} ms per write (copy + queue); writer thread: port rows "
          f"{1000 * float(np.median(compose)):.0f} ms, embedded write {1000 * float(np.median(write)):.0f} ms "
          f"(median), packing a span {1000 * pack:.0f} ms: {per_write:.0f} ms CPU per write = "
          f"{per_write / (STEP * 1000) * 100:.2f}% of a core at one write per {STEP} s; the packed span "
          f"{per_sample:.2f} B per sample", flush=True)
    key = ports[n // 2:n // 2 + 1]
    rollup = ("utilization", "tx_bytes_per_s", "link_up")  # what the rollup endpoints read, per minute
    port_s = timed(lambda: [store.stats(1, key, s, t0, t0 + 600, 10) for s in rollup])[0]
    wide_s = timed(lambda: [store.fabric_stats(1, s, t0, t0 + 600, 10) for s in rollup], 1)[0]
    print(f"rollup endpoints from the store at {gpus:,} GPUs, 10 one-minute bins: a port's {1000 * port_s:.0f} ms "
          f"CPU, the fabric's ({n:,} ports) {1000 * wide_s:.0f} ms CPU", flush=True)
    store.close()
    return {"tick_ms": 1000 * float(np.median(on_tick)), "write_ms": per_write, "bytes_per_sample": per_sample,
            "series": series, "rollup_port_ms": 1000 * port_s, "rollup_wide_ms": 1000 * wide_s}


def rollup_table(path: Path) -> sqlite3.Connection:
    """A SQLite file with the removed ``LinkRollup``'s table and indexes as Django created them."""
    from tests.bench.sql_rollups import TABLE_SQL

    db = sqlite3.connect(path, isolation_level=None)
    for statement in TABLE_SQL:
        db.execute(statement)
    return db


def bench_rollups(gpus: int, f, workdir: Path) -> dict:
    """The SQL rollups' path for the same links (the baseline): the ring's record per 1 s tick, the minute's rollup
    and its insert."""
    import asyncio

    from ibweb.live.history import layout, reads, ring
    from ibweb.live.history.link_identity import IDENTITY, LinkIdentities
    from tests.bench.sql_rollups import FIELDS, rollup_minute

    n, rng = 2 * f.num_links, np.random.default_rng(5)
    keys = np.empty(n, dtype=IDENTITY)
    keys["tx_guid"], keys["tx_port"] = f.guid[f.dl_src], f.dl_src_port
    keys["rx_guid"], keys["rx_port"] = f.guid[f.dl_dst], f.dl_dst_port
    guids = np.unique(np.concatenate([keys["tx_guid"], keys["rx_guid"]]))
    ids = LinkIdentities(keys, guids, np.zeros(len(guids), bool), np.array([f"n{g}" for g in guids], dtype=object))
    fid, t0 = 4242, float(int(time.time() // 60) * 60 - 120)
    ring.clear(fid)
    ring.store().set(layout.topo_key(fid, "v"), ids.encode(), 3600)

    class Sized:  # record() checks the topology's size only
        num_links = n // 2

    async def record() -> list[float]:
        spent = []
        for i in range(61):
            rate = rng.random(n, dtype=np.float32) * 400
            start = time.process_time()
            await ring.record(fid, i + 1, t0 + i, rate, rate / 400, topology="v", fabric=Sized())
            spent.append(time.process_time() - start)
        return spent

    ticks = asyncio.run(record())
    start = time.process_time()
    rows = rollup_minute(fid, int(t0 // 60), reads.ticks(fid, t0, t0 + 60))
    roll = time.process_time() - start
    db = rollup_table(workdir / f"rollups-{gpus}.sqlite3")
    names = [name for name in FIELDS if name != "id"]
    values = [[str(v) if k == "minute" else v for k, v in zip(names, (getattr(r, a) for a in names), strict=True)]
              for r in rows]  # one tuple per row, as Django's bulk_create sends them
    start = time.process_time()
    db.execute("BEGIN")
    db.executemany(f"INSERT INTO live_linkrollup ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", values)
    db.execute("COMMIT")
    insert = time.process_time() - start
    pages = db.execute("SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'live_%' OR name LIKE 'sqlite_autoindex_live%'"
                       ).fetchone()[0]
    db.close()
    ring.clear(fid)
    per_row = pages / len(rows)
    per_tick = float(np.median(ticks)) + (roll + insert) / 60
    day = per_row * len(rows) * 1440 / 1e9
    print(f"SQL rollups at {gpus:,} GPUs ({n:,} directed links, every one busy): ring record "
          f"{1000 * float(np.median(ticks)):.1f} ms CPU per tick, the minute's rollup {1000 * roll:.0f} ms + insert "
          f"{1000 * insert:.0f} ms (SQLite): {1000 * per_tick:.1f} ms CPU per tick ({per_tick * 100:.1f}% of a core); "
          f"{len(rows):,} rows a minute, {per_row:.0f} B a row in SQLite (table and indexes; {per_row / 3:.0f} B per "
          f"stored value: mean and peak utilization, mean rate), {day:.1f} GB a day, 24 hours kept ({ROLLUP_PG})",
          flush=True)
    return {"tick_ms": 1000 * per_tick, "rows_per_min": len(rows), "bytes_per_row": per_row,
            "bytes_per_value": per_row / 3, "gb_per_day": day}


class _Metrics(BaseHTTPRequestHandler):
    """``/metrics/targets`` (ibweb's ``http_sd_configs`` list) and ``/metrics?fabric=&part=`` rendered per request
    as the ``/metrics`` view renders a part; sizes and render times kept in ``server.served``."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        from fabric_engine.telemetry.metric_targets import part_of
        from fabric_engine.telemetry.prometheus import metric_families, render_families

        srv, url = self.server, urllib.parse.urlsplit(self.path)
        address = f"127.0.0.1:{srv.server_address[1]}"
        if url.path == "/metrics/targets":
            body = json.dumps([{"targets": [address], "labels": {
                "__metrics_path__": "/metrics", "__param_fabric": srv.slug, "__param_part": str(k),
                "instance": f"{address}/metrics?fabric={srv.slug}&part={k}"}} for k in range(len(srv.bounds) - 1)])
            kind = "application/json"
        else:
            part = int(urllib.parse.parse_qs(url.query)["part"][0])
            start = time.process_time()
            body = render_families([metric_families(srv.labels, srv.totals, srv.slug,
                                                    nodes=part_of(srv.bounds, part))])
            srv.served[part] = (len(body.encode()), time.process_time() - start)
            kind = "text/plain; version=0.0.4"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


def bench_prometheus(gpus: int, f, workdir: Path) -> dict | None:
    """A real Prometheus discovering every part of the fabric's ``/metrics`` and scraping each once: the largest
    target's size and scrape time (Prometheus' ``scrape_duration_seconds``)."""
    from fabric_engine.state import FabricState
    from fabric_engine.telemetry.metric_targets import node_ranges
    from fabric_engine.telemetry.prometheus import CounterIntegrator, port_nodes
    from tests.support.prometheus import PROMETHEUS, running_prometheus

    if not Path(PROMETHEUS).exists():
        print("prometheus not installed: the scrape of the discovered targets not measured")
        return None
    acc = CounterIntegrator(f)
    rate = np.full(2 * f.num_links, 8.0, np.float32)
    acc.add(FabricState(1, time.time(), 1.0, rate, rate / 400))
    labels = {"nodes": {"name": np.array([str(x) for x in f.node_name], dtype=object),
                        "guid": np.array([f"0x{g:016x}" for g in f.guid.tolist()], dtype=object)},
              "links": {"a_node": f.a_node, "a_port": f.a_port, "b_node": f.b_node, "b_port": f.b_port}}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Metrics)
    server.slug, server.labels, server.totals, server.served = f"rail{gpus}", labels, acc.totals, {}
    server.bounds = node_ranges(port_nodes(labels), f.num_nodes, PORTS_PER_TARGET)
    parts = len(server.bounds) - 1
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with running_prometheus(workdir / f"prometheus-{gpus}", {
                "global": {"scrape_interval": "60s", "scrape_timeout": "10s"},
                "scrape_configs": [{"job_name": "ibweb", "http_sd_configs": [
                    {"url": url + "/metrics/targets", "refresh_interval": "5s"}]}]}) as prom:
            def scraped(p) -> list | None:
                got = p.query('scrape_duration_seconds{job="ibweb"}')["result"]
                return got if len(got) == parts else None

            durations = prom.wait(scraped, 300, f"one scrape of each of the {parts} targets", every_s=2)
            samples = prom.query('max(scrape_samples_scraped{job="ibweb"})')["result"]
            up = prom.query('sum(up{job="ibweb"})')["result"]
    finally:
        server.shutdown()
        server.server_close()
    largest = max(server.served, key=lambda k: server.served[k][0])
    took = {int(urllib.parse.parse_qs(d["metric"]["instance"].split("?", 1)[1])["part"][0]): float(d["value"][1])
            for d in durations}
    size, render = server.served[largest]
    out = {"parts": parts, "largest_mb": size / 1e6, "largest_scrape_s": took[largest],
           "slowest_scrape_s": max(took.values()), "samples": float(samples[0]["value"][1]),
           "up": float(up[0]["value"][1]), "render_ms": 1000 * render}
    print(f"Prometheus at {gpus:,} GPUs: {parts} targets discovered, {out['up']:.0f} up; the largest target "
          f"(part {largest}) {out['largest_mb']:.1f} MB, {out['samples']:,.0f} samples, scraped in "
          f"{out['largest_scrape_s'] * 1000:.0f} ms (its render {out['render_ms']:.0f} ms CPU); the slowest scrape "
          f"{out['slowest_scrape_s'] * 1000:.0f} ms", flush=True)
    return out


def bench_victoria(f, workdir: Path, per_request: int = 6) -> dict | None:
    """Ingest CPU per sweep (client encode + send, server) of the fabric's ports, sending ``per_request`` sweeps a
    request; the series registered by a first request outside the measure."""
    if shutil.which("victoria-metrics") is None:
        print("victoria-metrics not installed: VictoriaMetrics ingest not measured")
        return None
    from ibweb.tsdb.victoria import VictoriaStore
    from tests.support.victoria import Victoria

    where = workdir / f"victoria-{per_request}"
    where.mkdir()
    server = Victoria(where)
    ports = out_ports(f)
    n = len(ports)
    try:
        store, sweeps = VictoriaStore(server.url, sweeps_per_request=per_request), Sweeps(n, 4)
        t0 = float(int(time.time() // 600) * 600 - 1800)
        ticks = os.sysconf("SC_CLK_TCK")

        def server_cpu() -> float:
            fields = Path(f"/proc/{server.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / ticks

        store.write(1, t0, ports, sweeps.values())  # new series registered outside the measure
        store.flush(held=True)
        server.flush()
        cpu0, client = server_cpu(), []
        sweeps_n = 2 * per_request
        for i in range(1, sweeps_n + 1):
            values = sweeps.values()
            start = time.process_time()
            store.write(1, t0 + STEP * i, ports, values)
            client.append(time.process_time() - start)
        start = time.process_time()
        store.flush(held=True)
        client[-1] += time.process_time() - start
        server.flush()
        time.sleep(2)
        server_s = (server_cpu() - cpu0) / sweeps_n
        client_s = float(np.mean(client))
        print(f"VictoriaMetrics, {n:,} ports x {len(SERIES)} series a sweep, {per_request} sweeps a request: client "
              f"encode + send {1000 * client_s:.0f} ms CPU a sweep ({client_s / STEP * 100:.2f}% of a core), "
              f"server {1000 * server_s:.0f} ms CPU a sweep ({server_s / STEP * 100:.1f}%): "
              f"{(client_s + server_s) / STEP * 100:.1f}% of a core at one sweep per {STEP} s", flush=True)
        return {"client_pct": client_s / STEP * 100, "server_pct": server_s / STEP * 100}
    finally:
        server.stop()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--gpus", type=int, nargs="+", default=[16_384, 32_768])
    p.add_argument("--day-ports", type=int, default=1024)
    p.add_argument("--victoria-gpus", type=int, default=32_768)
    p.add_argument("--skip", nargs="*", default=[],
                   choices=["day", "publisher", "rollups", "queries", "prometheus", "victoria"])
    a = p.parse_args()
    print(machine(), flush=True)
    workdir = _TMP / "work"
    workdir.mkdir()
    table: dict[int, dict] = {}
    try:
        per = bench_day(a.day_ports, workdir) if "day" not in a.skip else None
        fabrics = {}
        for gpus in a.gpus:
            f = fabrics[gpus] = fabric_of(gpus)
            n = 2 * f.num_links
            row = table.setdefault(gpus, {"ports": n})
            if "publisher" not in a.skip:
                row["tsdb"] = bench_publisher(gpus, f, workdir)
                target(f"tsdb publisher on the tick's thread per write, {gpus} GPUs", row["tsdb"]["tick_ms"], 20, "ms")
                target(f"embedded tsdb ingest per 10 s sweep, {gpus} GPUs (% of a core)",
                       row["tsdb"]["write_ms"] / (STEP * 1000) * 100, 5, "%")
            if per is not None:
                row["tsdb_day_gb"], row["tsdb_steady_gb"] = steady_state(per, n)
            if "rollups" not in a.skip:
                row["rollups"] = bench_rollups(gpus, f, workdir)
            if "queries" not in a.skip:
                chart_ms, top_s = bench_queries(n, workdir)
                row["chart_ms"], row["top_s"] = chart_ms, top_s
                target(f"embedded tsdb 90-day chart of a port, {gpus} GPUs (CPU)", chart_ms, 200, "ms")
                target(f"embedded tsdb top-20 over 7 days, {gpus} GPUs (CPU)", top_s, 2, "s")
            if "prometheus" not in a.skip:
                row["prometheus"] = got = bench_prometheus(gpus, f, workdir)
                if got is not None:
                    target(f"/metrics largest discovered target at {gpus} GPUs, size", got["largest_mb"], 10, "MB")
                    target(f"/metrics largest discovered target at {gpus} GPUs, Prometheus scrape time",
                           got["largest_scrape_s"], 1, "s")
            for leftover in workdir.glob("*.sqlite3*"):
                leftover.unlink()
        if "victoria" not in a.skip:
            got = bench_victoria(fabrics.get(a.victoria_gpus) or fabric_of(a.victoria_gpus), workdir)
            if got is not None:
                target(f"VictoriaMetrics ingest per 10 s sweep, {a.victoria_gpus} GPUs, client encode + send "
                       f"(% of a core)", got["client_pct"], 5, "%")
                target(f"VictoriaMetrics ingest per 10 s sweep, {a.victoria_gpus} GPUs, client and server "
                       f"(% of a core)", got["client_pct"] + got["server_pct"], 5, "%")
        side_by_side(table)
    finally:
        shutil.rmtree(_TMP, ignore_errors=True)


def side_by_side(table: dict[int, dict]) -> None:
    """The figures of each size in one table: the time-series store beside the SQL rollups (the baseline)."""
    sizes = sorted(table)
    rows = [
        ("tsdb bytes per stored sample", lambda r: "{:.2f} B".format(r["tsdb"]["bytes_per_sample"])),
        ("rollups bytes per stored value (SQLite)", lambda r: "{:.0f} B".format(r["rollups"]["bytes_per_value"])),
        ("tsdb ingest CPU per 1 s tick", lambda r: "%.1f ms" % (r["tsdb"]["write_ms"] / STEP)),
        ("rollups ingest CPU per 1 s tick", lambda r: "{:.1f} ms".format(r["rollups"]["tick_ms"])),
        ("tsdb disk per day (written; steady state, 90 days)",
         lambda r: "{:.1f} GB; {:.0f} GB".format(r["tsdb_day_gb"], r["tsdb_steady_gb"])),
        ("rollups disk per day (24 h kept)", lambda r: "{:.1f} GB".format(r["rollups"]["gb_per_day"])),
        ("rollup endpoints from the tsdb, 10 minutes: a port; the fabric (CPU)",
         lambda r: "{:.0f} ms; {:.0f} ms".format(r["tsdb"]["rollup_port_ms"], r["tsdb"]["rollup_wide_ms"])),
        ("a port's 90-day chart (CPU)", lambda r: "{:.0f} ms".format(r["chart_ms"])),
        ("top-20 over 7 days (CPU)", lambda r: "{:.2f} s".format(r["top_s"])),
        ("largest /metrics target, Prometheus scrape",
         lambda r: "{:.1f} MB, {:.0f} ms".format(r["prometheus"]["largest_mb"],
                                                 1000 * r["prometheus"]["largest_scrape_s"])),
    ]
    head = " | ".join("{} GPUs ({} ports)".format(f"{g:,}", f"{table[g]['ports']:,}") for g in sizes)
    print(f"\n| at | {head} |")
    print("|---|" + "---|" * len(sizes))
    for what, fn in rows:
        out = []
        for g in sizes:  # a figure a size
            try:
                out.append(fn(table[g]))
            except (KeyError, TypeError):
                out.append("-")
        print(f"| {what} | " + " | ".join(out) + " |", flush=True)


if __name__ == "__main__":
    main()
