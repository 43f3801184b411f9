"""Per-port history for 90 days (issue 40): the embedded store's write cost, disk and queries; VictoriaMetrics' ingest.

Every sweep writes all 32 series of the catalog (``ibweb.tsdb.series.SERIES``) for every port, synthetic but shaped
like a fabric's: rates and utilization noisy around a per-port level, XmitWait on busy ports, error counters zero
but on 0.1% of ports, links up but 0.01%, BER, temperature and power slowly wandering.

1. **Write cost** (``--ports``, default 25,000 and 200,000 ports, about 4,096 and 32,768 GPUs): one 10-minute raw
   span of 10 s sweeps and the sweep that packs it; the cost per sweep (the packing spread over its span) as a share
   of a core at one sweep every 10 s.
2. **Disk per port per day** (``--day-ports``, default 1,024): a whole day of sweeps through the store (every 60 s
   to keep the bench short; raw bytes scaled to 10 s, and printed from the 10 s span of 1. too); bytes per tier
   from SQLite's ``dbstat`` (pages, indexes included) split by each tier's blob bytes; the 1-hour tier (packed
   weekly) is taken as the 5-minute tier's bytes / 12. Then disk at steady state (raw 2 days, 5-minute and
   1-hour tiers 90 days) at ``--ports``, beside today's SQL rollups (issue 40: 35 GB a day, 24 hours kept, at
   16,384 GPUs; 8 GB at 4,096).
3. **Queries** at ``--ports``: 90 days backfilled as compaction leaves them at its fullest (1-hour tier packed for 13
   weeks, 6 days pending; 5-minute tier packed for the charted block, 23 h 55 min pending), then a port's 90-day
   chart at 1,000 and 4,000 points, the top-20 ports over 7 days, a switch's 64 ports over 7 days; targets on the
   query's CPU time (one thread: its latency on an idle core), the wall time printed beside it.
4. **VictoriaMetrics** (``--victoria-ports``, default 25,000; skipped without ``victoria-metrics``): remote-write
   encode + send per sweep, and the server's CPU per sweep (``/proc/<pid>/stat``).

5. **The leader's publisher** (``--publisher-gpus``, default 32,768: a loaded rail-optimized fabric,
   ``fabric_engine.scenario.loaded_rail_spec``): what a tick's thread spends (copying the arrays and queueing:
   ``ibweb.live.history.tsdb_publisher.Sweep``), and what the writer's thread spends per write (the port rows from
   the state and the graded health, ``port_sweep``; the embedded store's write, packing spread over its span).

Run: ``.venv/bin/python tests/bench/bench_tsdb.py [--ports 25000 200000] [--day-ports 1024]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")  # tests.support.victoria reads the test settings

import numpy as np  # noqa: E402

from ibweb.tsdb.codec import encode_rows  # noqa: E402
from ibweb.tsdb.embedded import BLOCK, DAY, PART, EmbeddedStore, Tier, default_tiers  # noqa: E402
from ibweb.tsdb.series import PORT_ID, SERIES  # noqa: E402
from tests.bench.targets import machine, target  # noqa: E402

STEP = 10
DAY_STEP = 60  # the day's sweeps: the 5-minute means of 5 samples, not 30 (noisier: more bytes, if anything)
WEEK = 7 * DAY
ROLLUP_GB_PER_DAY = {16384: 35.0, 4096: 8.0}  # issue 40, today's minute rollups (utilization and rate only)


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


def bench_writes(n: int, workdir: Path) -> float:
    """ms per sweep, packing included, of ``n`` ports (also printed)."""
    store = EmbeddedStore(workdir / f"writes-{n}.sqlite3")
    ports, sweeps, t0 = fabric_ports(n), Sweeps(n), float(int(time.time() // 600) * 600 - 3600)
    store.write(1, t0 - STEP, ports, sweeps.values())  # first sighting: slots assigned, outside the span measured
    spent, pack = [], 0.0
    for i in range(61):
        values = sweeps.values()
        start = time.process_time()
        store.write(1, t0 + STEP * i + 1, ports, values)
        (spent.append if i < 60 else lambda dt: None)(time.process_time() - start)
        if i == 60:
            pack = time.process_time() - start
    per_sweep = (sum(spent) + pack) / 60 * 1000
    raw = store._db.execute("SELECT SUM(LENGTH(data)), COUNT(*) FROM packed WHERE tier = 0").fetchone()
    print(f"embedded writes, {n} ports x {len(SERIES)} series: {1000 * float(np.median(spent)):.0f} ms CPU/sweep "
          f"(median), packing a 10-minute span {1000 * pack:.0f} ms, {per_sweep:.0f} ms per sweep with packing "
          f"= {per_sweep / (STEP * 1000) * 100:.2f}% of a core at one sweep per {STEP} s; the span packed: "
          f"{raw[0] / n:.0f} B per port in {raw[1]} rows ({raw[0] / (n * len(SERIES) * 60):.2f} B/sample, "
          f"{raw[0] / n * 144 / 1e3:.0f} kB per port per day)", flush=True)
    store.close()
    return per_sweep


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


def steady_state(per: dict[int, float], n: int) -> float:
    """GB on disk at steady state for ``n`` ports (raw 2 days, coarse tiers 90 days); printed against the rollups."""
    total = (per[0] * 2 + (per[1] + per[2]) * 90) * n / 1e9
    gpus = {25000: 4096, 200000: 32768}.get(n)
    rollup = f"; today's SQL rollups: {ROLLUP_GB_PER_DAY[4096]:.0f} GB a day at 4,096 GPUs, " \
             f"{ROLLUP_GB_PER_DAY[16384]:.0f} GB a day at 16,384, 24 hours kept, utilization and rate only" \
        if gpus else ""
    print(f"{n} ports{f' (~{gpus} GPUs)' if gpus else ''}: {per[0] * n / 1e9:.1f} GB a day raw, "
          f"{(per[1] + per[2]) * n / 1e9:.2f} GB a day downsampled; steady state (raw 2 days, 90 days downsampled) "
          f"{total:.0f} GB{rollup}", flush=True)
    return total


def backfill(store: EmbeddedStore, n: int, end_week: int, chart_block: int, rng: np.random.Generator) -> None:
    """Utilization of ``n`` ports as the tiers hold it at their fullest, ending 7 days after ``end_week``."""
    db, name, level = store._db, "utilization", rng.beta(0.6, 1.2, n).astype(np.float32)
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
    for day in range(97):  # 5-minute tier packed, the charted block only
        day_block = noisy(level[chart_block * BLOCK:(chart_block + 1) * BLOCK], 288, 0.02)
        full = np.zeros((BLOCK, 288), np.float32)
        full[:len(day_block)] = day_block
        db.execute("INSERT INTO packed (fabric, tier, series, block, start, data) VALUES (1, 1, ?, ?, ?, ?)",
                   (name, chart_block, end_week - 90 * DAY + day * DAY, encode_rows(full[None])[0]))
    for bucket in range(287):  # 5-minute tier pending: the last day but one bucket
        padded[:n] = noisy(level, 1, 0.02)[:, 0]
        db.executemany("INSERT INTO pending (fabric, tier, series, part, bucket, data) VALUES (1, 1, ?, ?, ?, ?)",
                       ((name, p // PART, (end_week + 6 * DAY) // 300 + bucket,
                         encode_rows(padded[p:p + PART][None], "lz4")[0]) for p in range(0, len(padded), PART)))
    newest = end_week + WEEK - 300
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
    end = end_week + WEEK - 300
    key = (int(port["guid"]), int(port["port"]))
    chart = {p: timed(lambda p=p: store.range(1, key, "utilization", end - 90 * DAY, end, p)) for p in (1000, 4000)}
    got = store.range(1, key, "utilization", end - 90 * DAY, end, 1000).values
    top = timed(lambda: store.top(1, "utilization", end - 7 * DAY, end, 20), 1)
    switch = timed(lambda: store.ports_of_switch(1, key[0], "utilization", end - 7 * DAY, end, 1000))
    print(f"queries, {n} ports, 90 days backfilled ({filled:.0f} s, {store.used_bytes() / 1e9:.2f} GB), CPU (wall) "
          f"ms: a port's 90-day chart {1000 * chart[1000][0]:.0f} ({1000 * chart[1000][1]:.0f}) at 1,000 points "
          f"(1-hour tier), {1000 * chart[4000][0]:.0f} ({1000 * chart[4000][1]:.0f}) at 4,000 (5-minute tier), "
          f"{np.isnan(got).mean() * 100:.0f}% empty bins; top-20 over 7 days {1000 * top[0]:.0f} "
          f"({1000 * top[1]:.0f}); a switch's 64 ports over 7 days {1000 * switch[0]:.0f} ({1000 * switch[1]:.0f})",
          flush=True)
    store.close()
    return 1000 * max(c[0] for c in chart.values()), top[0]


def bench_victoria(n: int, workdir: Path, per_request: int = 1) -> float | None:
    """Ingest CPU (client encode + send, server) per sweep of ``n`` ports, % of a core at 10 s sweeps, sending
    ``per_request`` sweeps per request."""
    if shutil.which("victoria-metrics") is None:
        print("victoria-metrics not installed: VictoriaMetrics ingest not measured")
        return None
    from ibweb.tsdb.victoria import VictoriaStore
    from tests.support.victoria import Victoria

    where = workdir / f"victoria-{per_request}"
    where.mkdir()
    server = Victoria(where)
    try:
        store, ports, sweeps = VictoriaStore(server.url, sweeps_per_request=per_request), fabric_ports(n), Sweeps(n, 4)
        t0 = float(int(time.time() // 600) * 600 - 1800)
        ticks = os.sysconf("SC_CLK_TCK")

        def server_cpu() -> float:
            fields = Path(f"/proc/{server.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / ticks

        store.write(1, t0, ports, sweeps.values())  # new series registered outside the measure
        store.flush(held=True)
        server.flush()
        cpu0, client = server_cpu(), []
        sweeps_n = 12
        for i in range(1, sweeps_n + 1):
            values = sweeps.values()
            start = time.process_time()
            store.write(1, t0 + STEP * i, ports, values)
            client.append(time.process_time() - start)
        start = time.process_time()
        store.flush(held=True)
        client[-1] += time.process_time() - start
        server.flush()
        time.sleep(1)
        server_s = (server_cpu() - cpu0) / sweeps_n
        client_s = float(np.mean(client))
        disk = sum(f.stat().st_size for f in (where / "data").rglob("*") if f.is_file())
        samples = (sweeps_n + 1) * n * len(SERIES)
        print(f"VictoriaMetrics, {n} ports x {len(SERIES)} series per sweep, {per_request} sweeps per request: "
              f"client encode + send "
              f"{1000 * client_s:.0f} ms CPU/sweep, server {1000 * server_s:.0f} ms CPU/sweep "
              f"({(client_s + server_s) / STEP * 100:.1f}% of a core at one sweep per {STEP} s); data dir "
              f"{disk / 1e6:.0f} MB after {samples / 1e6:.1f} M samples (before its background merges)", flush=True)
        return (client_s + server_s) / STEP * 100
    finally:
        server.stop()


def bench_publisher(gpus: int, workdir: Path) -> tuple[float, float]:
    """ms on the tick's thread per write, and ms (CPU) on the writer's thread per write, at ``gpus`` GPUs."""
    from fabric_engine.scenario import build_fabric, loaded_rail_spec
    from fabric_engine.state import FabricState
    from ibweb.live.engine.publishing import Tick
    from ibweb.live.history.tsdb_publisher import Sweep, port_sweep

    f = build_fabric(loaded_rail_spec(gpus)["topology"])
    n, rng = 2 * f.num_links, np.random.default_rng(3)
    health = {"node": f.dl_src.astype(np.int32), "port": f.dl_src_port.astype(np.uint8),
              "effective": 10.0 ** rng.uniform(-15, -10, n), "temp": rng.uniform(40, 70, n),
              "raw": 10.0 ** rng.uniform(-12, -8, n), "grade": np.zeros(n, np.int8)}
    store = EmbeddedStore(workdir / "publisher.sqlite3")
    t0 = float(int(time.time() // 600) * 600 - 3600)
    on_tick, compose, write, pack = [], [], [], 0.0
    for i in range(62):
        rate = rng.uniform(0, 400, n).astype(np.float32)
        st = FabricState(seq=i, t=t0 + STEP * i + 1, tick_s=1.0, rate_gbps=rate, util=rate / 400,
                         xmit_wait=rate * 100, stale=rng.random(n) < 0.001)
        start = time.perf_counter()
        sweep = Sweep.of("v", Tick(st, f, {}))
        on_tick.append(time.perf_counter() - start)
        start = time.process_time()
        ports, values = port_sweep(sweep, health)
        compose.append(time.process_time() - start)
        start = time.process_time()
        store.write(1, sweep.t, ports, values)
        spent = time.process_time() - start
        if i == 61:
            pack = spent
        elif i:  # the first sighting (slots assigned) left out
            write.append(spent)
    per_write = (float(np.median(compose)) + (sum(write) + pack) / len(write)) * 1000
    print(f"publisher at {gpus} GPUs ({n} ports, {len(values)} series): tick thread "
          f"{1000 * float(np.median(on_tick)):.1f} ms per write (copy + queue); writer thread: port rows "
          f"{1000 * float(np.median(compose)):.0f} ms, embedded write {1000 * float(np.median(write)):.0f} ms "
          f"(median), packing a span {1000 * pack:.0f} ms: {per_write:.0f} ms CPU per write = "
          f"{per_write / (STEP * 1000) * 100:.1f}% of a core at one write per {STEP} s", flush=True)
    store.close()
    return 1000 * float(np.median(on_tick)), per_write


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--ports", type=int, nargs="+", default=[25_000, 200_000])
    p.add_argument("--day-ports", type=int, default=1024)
    p.add_argument("--victoria-ports", type=int, default=25_000)
    p.add_argument("--victoria-batch", type=int, nargs="+", default=[1, 6], help="sweeps per request, compared")
    p.add_argument("--publisher-gpus", type=int, default=32_768)
    p.add_argument("--skip", nargs="*", default=[], choices=["day", "writes", "queries", "victoria", "publisher"])
    a = p.parse_args()
    print(machine())
    workdir = Path(tempfile.mkdtemp(prefix="bench-tsdb-"))
    try:
        per = bench_day(a.day_ports, workdir) if "day" not in a.skip else None
        for n in a.ports:
            if "writes" not in a.skip:
                cost = bench_writes(n, workdir)
                target(f"embedded tsdb write per 10 s sweep, {n} ports (% of a core)", cost / (STEP * 1000) * 100, 5,
                       "%")
            if per is not None:
                steady_state(per, n)
            if "queries" not in a.skip:
                chart_ms, top_s = bench_queries(n, workdir)
                target(f"embedded tsdb 90-day chart of a port, {n} ports (CPU)", chart_ms, 200, "ms")
                target(f"embedded tsdb top-20 over 7 days, {n} ports (CPU)", top_s, 2, "s")
            for f in workdir.glob("*.sqlite3*"):
                f.unlink()
        if "publisher" not in a.skip:
            on_tick, per_write = bench_publisher(a.publisher_gpus, workdir)
            target(f"tsdb publisher on the tick's thread per write, {a.publisher_gpus} GPUs", on_tick, 20, "ms")
            target(f"tsdb publisher writer thread per 10 s write, {a.publisher_gpus} GPUs (% of a core)",
                   per_write / (STEP * 1000) * 100, 5, "%")
        for per_request in a.victoria_batch if "victoria" not in a.skip else ():
            ingest = bench_victoria(a.victoria_ports, workdir, per_request)
            if ingest is not None:
                target(f"VictoriaMetrics ingest per 10 s sweep, {a.victoria_ports} ports, {per_request} sweeps per "
                       f"request (% of a core)", ingest, 5, "%")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
