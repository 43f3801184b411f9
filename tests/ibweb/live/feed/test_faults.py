"""Faults survived by the live feed: Redis restarted, the database away (issue 10)."""

import asyncio
import json
import os
import time
import urllib.request
from datetime import datetime

import psycopg
import pytest
import websockets

from tests.support.faults import PausableProxy, private_redis, require_postgres
from tests.support.server import running_server

# Real Redis and PostgreSQL in their own processes already; `make test-services` does not repeat them.
pytestmark = pytest.mark.services

PG_ADMIN = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")


async def watch(url: str, seconds: float, during=None) -> list[tuple[float, int]]:
    """``(time, seq)`` of every frame for ``seconds``; ``during()`` runs in a thread meanwhile."""
    got: list[tuple[float, int]] = []
    async with websockets.connect(url, max_size=None) as ws:
        await asyncio.wait_for(ws.recv(), 30)
        side = asyncio.create_task(asyncio.to_thread(during)) if during else None
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 1))
            except TimeoutError:
                continue
            if msg["type"] == "frame":
                got.append((time.monotonic(), msg["seq"]))
        if side:
            await side
    return got


def test_redis_restarted_while_clients_stream(tmp_path):
    with private_redis(tmp_path) as redis:
        env = {"REDIS_URL": redis.url}
        with running_server(tmp_path, extra_env=env) as server:
            url = f"{server.ws_url}/ws/fabrics/demo/live/"
            t0 = time.monotonic()
            frames = asyncio.run(watch(url, 16, during=lambda: (time.sleep(3), redis.restart(down_s=2))))
            assert server.proc.poll() is None, "the web process died"
            late = [seq for t, seq in frames if t - t0 > 11]
            assert len(late) >= 3, f"frames did not resume after the restart: {frames}"
            assert late == sorted(late)
            # a new client also gets a snapshot and frames after the restart
            after = asyncio.run(watch(url, 3))
            assert len(after) >= 2
        log = server.log.read_text()
        assert "Traceback" not in log.split("Application startup complete")[0]


def test_database_away_for_seconds_feed_continues_and_history_is_kept(tmp_path):
    require_postgres(PG_ADMIN)
    db = f"ibweb_fault_{os.getpid()}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {db}")
        conn.execute(f"CREATE DATABASE {db}")
    proxy = PausableProxy(5432)
    try:
        with private_redis(tmp_path) as redis:
            env = {"REDIS_URL": redis.url, "DATABASE_URL": f"postgres://postgres@127.0.0.1:{proxy.port}/{db}"}
            with running_server(tmp_path, extra_env=env) as server:
                url = f"{server.ws_url}/ws/fabrics/demo/live/"
                # cut the database across a minute boundary
                while not 52 <= time.time() % 60 < 55:
                    time.sleep(0.2)
                outage_minute = int(time.time() // 60)
                frames = asyncio.run(watch(url, 14, during=lambda: (time.sleep(1), proxy.pause(), time.sleep(6),
                                                                   proxy.resume())))
                assert server.proc.poll() is None
                seqs = [s for _, s in frames]
                assert len(seqs) >= 10 and max(b - a for a, b in zip(seqs, seqs[1:], strict=False)) <= 2, seqs
                # per-port history does not go through the database: the outage's minute is summarized
                time.sleep(max(0.0, (outage_minute + 1) * 60 + 11 - time.time()))  # its last sweep written
                with urllib.request.urlopen(f"{server.url}/api/fabrics/fabrics/demo/links/-1/rollups/?minutes=10",
                                            timeout=30) as resp:
                    body = json.loads(resp.read())
                minutes = [int(datetime.fromisoformat(m).timestamp() // 60) for m in body["minute"]]
                assert outage_minute in minutes, (outage_minute, minutes)
    finally:
        proxy.close()
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
