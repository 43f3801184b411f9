"""Two run_engine processes for one fabric on real Redis: one leader, handover on kill (issue 10)."""

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time

import pytest
import websockets

from tests.support.server import ROOT, redis_namespace, running_server
from tests.support.services import require_redis

# Real Redis and PostgreSQL in their own processes already; `make test-services` does not repeat them.
pytestmark = pytest.mark.services


def _run_engine(env: dict, log, slugs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "manage.py", "run_engine", *slugs], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)


def _leader(procs: dict, logs: dict) -> str | None:
    for name, path in logs.items():
        if "this process leads" in path.read_text() and procs[name].poll() is None:
            return name
    return None


class Engines:
    """``run_engine`` processes for the demo beside a web server (no embedded engine), all on one Redis."""

    def __init__(self, tmp_path, server) -> None:
        self.server, self.tmp = server, tmp_path
        self.env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path), **ENV,
                    "DATABASE_URL": f"sqlite:///{tmp_path / 'server.sqlite3'}", "REDIS_URL": require_redis(db=13),
                    "IBWEB_REDIS_NAMESPACE": redis_namespace(tmp_path)}
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict = {}

    def start(self, name: str, slugs=("demo",)) -> None:
        """Start ``run_engine`` for ``slugs`` (none: every fabric) as ``name``."""
        self.logs[name] = self.tmp / f"{name}.log"
        self.procs[name] = _run_engine(self.env, self.logs[name].open("wb"), slugs)

    def leader(self, timeout: float = 30) -> str:
        """The engine that leads (waits for one)."""
        deadline = time.monotonic() + timeout
        while (name := _leader(self.procs, self.logs)) is None:
            assert time.monotonic() < deadline, "no engine became leader"
            time.sleep(0.2)
        return name

    def stop(self) -> None:
        for p in self.procs.values():
            p.kill()
            p.wait()


ENV = {"IBWEB_ENGINE_EMBEDDED": "0", "IBWEB_LOG_LEVEL": "INFO"}


@contextlib.contextmanager
def engines(tmp_path, fabrics: list[dict] | None = None, setup: str | None = None):
    with running_server(tmp_path, extra_env={**ENV, "REDIS_URL": require_redis(db=13)}, fabrics=fabrics,
                        setup=setup) as server:
        group = Engines(tmp_path, server)
        try:
            yield group
        finally:
            group.stop()


def test_only_the_leader_publishes_and_a_standby_takes_over(tmp_path):
    with engines(tmp_path) as group:
        server, procs, logs = group.server, group.procs, group.logs
        group.start("a")
        group.start("b")
        leader = group.leader()

        async def watch(seconds: float) -> list[int]:
            seqs = []
            async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/", max_size=None) as ws:
                # the leader may still be starting: its progress comes first, then the snapshot (feed protocol)
                snap = json.loads(await asyncio.wait_for(ws.recv(), 20))
                while snap["type"] == "progress":
                    snap = json.loads(await asyncio.wait_for(ws.recv(), 20))
                assert snap["type"] == "snapshot"
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    with contextlib.suppress(TimeoutError):
                        msg = json.loads(await asyncio.wait_for(ws.recv(), 1))
                        if msg["type"] == "frame":  # a new leader may also send progress or a snapshot
                            seqs.append(msg["seq"])
                    if len(seqs) == 3 and procs[leader].poll() is None:
                        procs[leader].kill()  # the leader dies mid-stream
            return seqs

        seqs = asyncio.run(watch(14))
    standby = "b" if leader == "a" else "a"
    assert "this process leads" in logs[standby].read_text(), "the standby never took over"
    assert len(seqs) >= 8, seqs
    assert seqs == sorted(set(seqs)), f"sequence numbers must keep increasing across the handover: {seqs}"
    gaps = [b - a for a, b in zip(seqs, seqs[1:], strict=False)]
    assert max(gaps) <= 8, f"handover gap too long: {seqs}"


def test_a_second_process_joining_sends_no_progress_to_clients_of_the_live_fabric(tmp_path):
    """b joins while a leads the demo: the two share it (one of them leads), and whichever builds or takes it over,
    clients of the live fabric see frames go on and no start-up progress."""
    with engines(tmp_path) as group:
        group.start("a")
        group.leader()
        logs = group.logs

        async def watch() -> tuple[list[str], list[dict]]:
            kinds, progress = [], []
            async with websockets.connect(f"{group.server.ws_url}/ws/fabrics/demo/live/", max_size=None) as ws:
                snap = json.loads(await asyncio.wait_for(ws.recv(), 20))
                while snap["type"] == "progress":  # a's own start, before b
                    snap = json.loads(await asyncio.wait_for(ws.recv(), 20))
                assert snap["type"] == "snapshot"
                group.start("b")
                end = time.monotonic() + 30
                while "engine processes: 2 live" not in logs["a"].read_text():
                    assert time.monotonic() < end, "a never saw b"
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 5))
                    kinds.append(msg["type"])
                settle = time.monotonic() + 8  # the members settle (2 s) and a handover, if any, is done
                while time.monotonic() < settle:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 5))
                    kinds.append(msg["type"])
                    if msg["type"] == "progress":
                        progress.append(msg)
            return kinds, progress

        kinds, progress = asyncio.run(watch())
    assert progress == [] and "progress" not in kinds, progress
    b_log = logs["b"].read_text()
    if "this process leads" in b_log:  # b took the demo over: it built the fabric then, telling no client
        assert "engine started (another process leads or led it)" in b_log
        assert "handed over" in logs["a"].read_text()
    else:
        assert "fabric demo: engine started" not in b_log, "a process that leads nothing builds nothing"
    assert kinds.count("frame") >= 10, kinds
