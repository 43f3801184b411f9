"""Real receivers for the notification tests (issue 39): Alertmanager (Debian's ``prometheus-alertmanager``) and an
HTTP webhook receiver, each started by the test on a free port of 127.0.0.1 and stopped after it.

The e-mail and syslog receivers are in ``tests/support/notify_mail_syslog.py``.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.processes import stop_process

__all__ = ["ALERTMANAGER", "Alertmanager", "WebhookReceiver", "Received", "free_port", "alertmanager",
           "webhook_receiver", "wait_for"]

ALERTMANAGER = "/usr/bin/prometheus-alertmanager"


def free_port() -> int:
    """A TCP port of 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout_s: float = 20.0, every_s: float = 0.05, what: str = "condition"):
    """Poll ``predicate`` until it returns something true; its value, or AssertionError naming ``what``."""
    end = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(every_s)


@dataclass
class Received:
    """One request the webhook receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    def json(self):
        return json.loads(self.body)


@dataclass
class WebhookReceiver:
    """An HTTP server recording every POST (answered ``status``); :meth:`stop` and :meth:`start` again on the same
    port make a receiver that is down (connections refused), then back."""

    port: int = field(default_factory=free_port)
    status: int = 200
    received: list[Received] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> WebhookReceiver:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if owner.status < 300:
                    with owner._lock:
                        owner.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()},
                                                       body, time.time()))
                self.send_response(owner.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, name=f"webhook-{self.port}", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def bodies(self) -> list:
        with self._lock:
            return [r.json() for r in self.received]


@dataclass
class Alertmanager:
    """A real Alertmanager on a free port (no cluster), its alerts routed to ``webhook`` (if given) with resolved
    notifications on, grouped per alert, sent at once."""

    tmp: Path
    webhook: str = ""
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Alertmanager:
        receiver = {"name": "test"}
        if self.webhook:
            receiver["webhook_configs"] = [{"url": self.webhook, "send_resolved": True}]
        config = {"route": {"receiver": "test", "group_by": ["..."], "group_wait": "0s", "group_interval": "1s",
                            "repeat_interval": "1h"},
                  "receivers": [receiver]}
        path = self.tmp / "alertmanager.yml"
        path.write_text(json.dumps(config))  # YAML reads JSON
        (self.tmp / "data").mkdir(exist_ok=True)
        self.process = subprocess.Popen(
            [ALERTMANAGER, f"--config.file={path}", f"--storage.path={self.tmp / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--cluster.listen-address=", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=open(self.tmp / "alertmanager.log", "wb"))  # noqa: SIM115

        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"alertmanager exited: {(self.tmp / 'alertmanager.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as r:
                    return r.status == 200
            except OSError:
                return False

        wait_for(ready, 30.0, what="alertmanager ready")
        return self

    def stop(self) -> None:
        stop_process(self.process)

    def alerts(self, query: str = "") -> list[dict]:
        """``GET /api/v2/alerts`` (``query``: e.g. ``?active=true``)."""
        with urllib.request.urlopen(f"{self.url}/api/v2/alerts{query}", timeout=5) as r:
            return json.loads(r.read())


@pytest.fixture
def webhook_receiver():
    """A started :class:`WebhookReceiver`, stopped after the test."""
    receiver = WebhookReceiver().start()
    yield receiver
    receiver.stop()


@pytest.fixture
def alertmanager(tmp_path):
    """A started :class:`Alertmanager` notifying a :class:`WebhookReceiver` (``.notified``), both stopped after."""
    if not shutil.which(ALERTMANAGER):
        pytest.fail(f"{ALERTMANAGER} is missing: apt-get install prometheus-alertmanager")
    notified = WebhookReceiver().start()
    server = Alertmanager(tmp_path, webhook=notified.url).start()
    server.notified = notified
    yield server
    server.stop()
    notified.stop()
