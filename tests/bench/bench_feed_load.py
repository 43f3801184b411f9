"""Load on the production-style stack: N websocket clients and the REST API (issue 10).

Starts Redis-backed web workers (uvicorn --workers 2), one ``run_engine`` process and a
2048-host fabric at 1 frame/s, opens ``BENCH_CLIENTS`` (default 500) clients on
loopback and reports delivery latency from each frame's timestamp, frames lost,
and the server processes' CPU and memory. Then measures the REST API.

Run: ``.venv/bin/python tests/bench/bench_feed_load.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import websockets

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.server import free_port  # noqa: E402

CLIENTS = int(os.environ.get("BENCH_CLIENTS", "500"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "20"))
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
HEAD = re.compile(rb'"seq":(\d+),"t":([0-9.]+)')
FABRIC = ('{"name": "Bench 2048", "slug": "bench", "tick_s": 1.0, "spec": {"topology": {"generator": "fat_tree", '
          '"hosts": 2048, "radix": 64}, "jobs": [{"name": "big", "tenant": "acme", "hosts": 1536, '
          '"placement": "scattered"}], "background": {"fraction": 0.5, "gbps": 50}}}')


def cpu_seconds(pids: list[int]) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def rss_mib(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out]


async def client(url: str, window: tuple[float, float], out: list) -> None:
    """One websocket client: records ``(seq, latency)`` of the frames that arrive inside ``window``."""
    async with websockets.connect(url, max_size=None, compression=None, open_timeout=120, ping_timeout=None) as ws:
        await ws.recv()  # snapshot
        seqs, lat = [], []
        while (now := time.time()) < window[1]:
            try:
                msg = await asyncio.wait_for(ws.recv(decode=False), max(0.1, window[1] - now))
            except TimeoutError:
                break
            arrived = time.time()
            m = HEAD.search(msg[:200])
            if m and arrived >= window[0]:
                seqs.append(int(m.group(1)))
                lat.append(arrived - float(m.group(2)))
        out.append((seqs, lat))


def client_process(url: str, count: int, window: tuple[float, float], queue) -> None:
    """A process running ``count`` clients (one asyncio loop); puts their results on ``queue``."""

    async def main() -> list:
        results: list = []
        tasks = []
        for i in range(count):
            tasks.append(asyncio.create_task(client(url, window, results)))
            if i % 25 == 24:
                await asyncio.sleep(0.1)
        await asyncio.gather(*tasks, return_exceptions=True)
        return results

    queue.put(asyncio.run(main()))


def run_clients(url: str) -> tuple[list, int]:
    """``CLIENTS`` clients over ``BENCH_CLIENT_PROCS`` processes, measured over the same window."""
    import multiprocessing as mp

    procs = int(os.environ.get("BENCH_CLIENT_PROCS", "4"))
    begin = time.time() + 15 + CLIENTS / 50  # after every client has connected
    window = (begin, begin + SECONDS)
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    shares = [CLIENTS // procs + (i < CLIENTS % procs) for i in range(procs)]
    workers = [ctx.Process(target=client_process, args=(url, n, window, queue)) for n in shares]
    for w in workers:
        w.start()
    results = [r for _ in workers for r in queue.get(timeout=SECONDS + 300)]
    for w in workers:
        w.join()
    return results, procs


def api_load(url: str, seconds: float = 5.0, concurrency: int = 16) -> tuple[float, float]:
    lat: list[float] = []

    async def worker(end: float) -> None:
        while time.time() < end:
            t = time.perf_counter()
            await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read())
            lat.append(time.perf_counter() - t)

    async def main() -> None:
        end = time.time() + seconds
        await asyncio.gather(*(worker(end) for _ in range(concurrency)))

    asyncio.run(main())
    return len(lat) / seconds, float(np.percentile(lat, 99) * 1000)


def main() -> None:
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()
    tmp = Path(tempfile.mkdtemp(prefix="ibweb-bench-"))
    env = {**os.environ, "IBWEB_VAR_DIR": str(tmp), "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
           "REDIS_URL": REDIS_URL, "IBWEB_ENGINE_EMBEDDED": "0"}
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "shell", "-c", f"import json; from ibweb.fabrics.models import Fabric; "
                    f"Fabric.objects.create(**json.loads({FABRIC!r}))"], cwd=ROOT, env=env, check=True)
    port = free_port()
    web = subprocess.Popen([sys.executable, "-m", "uvicorn", "ibweb.asgi:application", "--port", str(port),
                            "--workers", "2", "--lifespan", "on", "--ws-per-message-deflate", "false",
                            "--log-level", "warning", "--backlog", "4096"], cwd=ROOT, env=env)
    engine = subprocess.Popen([*manage, "run_engine", "bench"], cwd=ROOT, env=env)
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        time.sleep(3)
        pids = [engine.pid, *children(web.pid)]
        url = f"ws://127.0.0.1:{port}/ws/fabrics/bench/live/"
        cpu0 = cpu_seconds(pids)
        results, procs = run_clients(url)
        cpu = (cpu_seconds(pids) - cpu0)
        mem = rss_mib(pids)
        lat = np.concatenate([np.array(r[1]) for r in results if r[1]]) * 1000
        lost = 0
        for seqs, _ in results:
            if seqs:
                lost += (seqs[-1] - seqs[0] + 1) - len(set(seqs))
        received = sum(len(r[0]) for r in results)
        print(f"feed: {len(results)}/{CLIENTS} clients in {procs} processes, {received} frames received over "
              f"{SECONDS:.0f} s, {lost} lost")
        print(f"feed: delivery latency p50 {np.percentile(lat, 50):.1f} ms, p99 {np.percentile(lat, 99):.1f} ms "
              f"(target p99 < 250 ms, 0 lost)")
        print(f"feed: server CPU {cpu:.1f} s over the run incl. connects ({cpu / SECONDS * 100:.0f}% of one core "
              f"per second), RSS {mem:.0f} MiB (engine + web workers)")
        rps, p99 = api_load(f"http://127.0.0.1:{port}/api/fabrics/fabrics/")
        print(f"api: fabric list {rps:.0f} requests/s, p99 {p99:.1f} ms (16 concurrent)")
        rps, p99 = api_load(f"http://127.0.0.1:{port}/api/fabrics/fabrics/bench/links/0/history/?seconds=60")
        print(f"api: link history (60 s) {rps:.0f} requests/s, p99 {p99:.1f} ms (16 concurrent)")
    finally:
        web.terminate()
        engine.terminate()
        web.wait(10)
        engine.wait(10)


if __name__ == "__main__":
    main()
