"""Start the real ASGI server as a subprocess on a free port, for websocket and browser tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, proc: subprocess.Popen, port: int, log: Path) -> None:
        self.proc, self.port, self.log = proc, port, log
        self.url = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _manage(env: dict, *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True)


@contextmanager
def running_server(tmp_path: Path, extra_env: dict | None = None, fabrics: list[dict] | None = None,
                   name: str = "server"):
    """A uvicorn process serving ibweb with the embedded engine, on a fresh SQLite database.

    ``fabrics``: extra emulated fabrics to create (dicts of model fields) besides the demo.
    Servers started with the same ``tmp_path`` and different ``name`` share the database.
    """
    port = free_port()
    env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'server.sqlite3'}",
           "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    _manage(env, "migrate", "--verbosity", "0")
    _manage(env, "ensure_demo")
    for spec in fabrics or []:
        fields = json.dumps(spec)
        code = f"import json; from ibweb.fabrics.models import Fabric; Fabric.objects.create(**json.loads({fields!r}))"
        _manage(env, "shell", "-c", code)
    log = tmp_path / f"{name}.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "ibweb.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--lifespan", "on"],
        cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )
    server = Server(proc, port, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}:\n{log.read_text()}")
            try:
                urllib.request.urlopen(server.url + "/api/fabrics/fabrics/", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server did not come up:\n{log.read_text()}") from None
                time.sleep(0.2)
        yield server
    finally:
        server.stop()
