"""A real Prometheus (Debian's ``prometheus``) for tests: started on a free port of 127.0.0.1 with a given
configuration, queried over its HTTP API, stopped after the test. Missing under ``CI=true`` is a failure."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.support.processes import stop_process
from tests.support.server import free_port

__all__ = ["PROMETHEUS", "PROMTOOL", "Prometheus", "running_prometheus"]

PROMETHEUS, PROMTOOL = "/usr/bin/prometheus", "/usr/bin/promtool"


@dataclass
class Prometheus:
    """A running Prometheus: its base URL, process and log."""

    url: str
    proc: subprocess.Popen
    log: Path

    def get(self, path: str, **params) -> dict:
        """The JSON body of ``GET <path>?params`` (a bad query is a 400 whose body says why: returned too)."""
        query = urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(f"{self.url}{path}" + (f"?{query}" if query else ""), timeout=30) as r:
                return json.load(r)
        except urllib.error.HTTPError as exc:
            return json.load(exc)

    def query(self, expr: str) -> dict:
        """``/api/v1/query`` of ``expr`` now: its ``data`` (an error fails, naming the query)."""
        body = self.get("/api/v1/query", query=expr)
        assert body["status"] == "success", f"{expr}: {body.get('errorType')}: {body.get('error')}"
        return body["data"]

    def wait(self, predicate, timeout_s: float = 60.0, what: str = "Prometheus", every_s: float = 0.5):
        """Poll ``predicate(self)`` until it returns something true (an ``OSError`` counts as not yet); fails,
        naming ``what`` with the log's end, when the time is up or Prometheus exited."""
        end = time.monotonic() + timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                got = predicate(self)
            except OSError:
                got = None
            if got:
                return got
            if time.monotonic() > end:
                raise AssertionError(f"timed out after {timeout_s} s waiting for {what}; targets: "
                                     f"{self.get('/api/v1/targets')}\nPrometheus log:\n{self.log.read_text()[-3000:]}")
            time.sleep(every_s)


@contextmanager
def running_prometheus(tmp_path: Path, config: dict) -> Iterator[Prometheus]:
    """Prometheus with ``config`` (the YAML as a dict), its data in ``tmp_path``, until the block ends."""
    from tests.conftest import require_tool

    require_tool(PROMETHEUS)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    port = free_port()
    log = tmp_path / "prometheus.log"
    proc = subprocess.Popen([PROMETHEUS, f"--config.file={path}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                            stdout=log.open("wb"), stderr=subprocess.STDOUT)
    server = Prometheus(f"http://127.0.0.1:{port}", proc, log)
    try:
        server.wait(_ready, 30, "Prometheus to be ready")
        yield server
    finally:
        stop_process(proc)


def _ready(p: Prometheus) -> bool:
    with urllib.request.urlopen(f"{p.url}/-/ready", timeout=2) as r:
        return r.status == 200
