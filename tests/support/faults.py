"""Fault injection with real processes: a private Redis that can be restarted, a TCP proxy that can cut a link."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from tests.support.server import free_port


def _fail_or_skip(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


class PrivateRedis:
    """A redis-server of this test alone, on a free port; ``restart()`` kills it and starts it again."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def restart(self, down_s: float) -> None:
        self.kill()
        time.sleep(down_s)
        self.start()


@contextmanager
def private_redis(workdir: Path):
    if shutil.which("redis-server") is None:
        _fail_or_skip("redis-server is not installed")
    redis = PrivateRedis(workdir)
    redis.start()
    try:
        yield redis
    finally:
        redis.kill()


class PausableProxy:
    """Forwards TCP connections to ``target``; ``pause()`` drops every connection and refuses new ones."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self.paused = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            if self.paused.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def pause(self) -> None:
        self.paused.set()
        with self._lock:
            for s in self._sockets:
                with suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            self._sockets.clear()

    def resume(self) -> None:
        self.paused.clear()

    def close(self) -> None:
        self._stop.set()
        self.pause()
        self._thread.join(2)
        self._listener.close()


def require_postgres(url: str) -> None:
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=3).close()
    except psycopg.Error as exc:
        _fail_or_skip(f"PostgreSQL at {url} is not available: {exc}")
