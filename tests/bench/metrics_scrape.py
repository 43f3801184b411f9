"""A real Prometheus scraping a real multi-worker ibweb's ``/metrics`` targets (issue 40), for
``bench_metrics_targets.py``.

The stack as ``compose.yaml`` runs it: ``python -m ibweb.serve ... --workers N`` (uvicorn, N web processes), one
``run_engine`` process publishing the fabrics' counters through Redis, and Prometheus (Debian's, as the tests'
:mod:`tests.support.prometheus`) reading the targets from ``/metrics/targets`` with ``http_sd_configs`` and the
scraper's token, as ``deploy/prometheus/prometheus.yml`` does. Prometheus parses every sample of every scrape and
then drops them (``metric_relabel_configs``): millions of series would not fit this machine's memory, and a scrape's
own series (``up``, ``scrape_duration_seconds``, ``scrape_samples_scraped``, ``scrape_body_size_bytes`` with
``--enable-feature=extra-scrape-metrics``) are kept. The figures are read from Prometheus.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import yaml

from tests.support.processes import stop_process
from tests.support.prometheus import PROMETHEUS, Prometheus
from tests.support.server import ROOT, free_port

__all__ = ["Stack", "cpu_seconds", "running_stack", "running_prometheus", "round_figures", "target_figures"]

JOB = "ibweb"


class Stack:
    """The running web server (its URL), the scraper's token, the engine process and the folder of logs."""

    def __init__(self, url: str, token: str, tmp: Path, procs: list[subprocess.Popen]) -> None:
        self.url, self.token, self.tmp, self.procs = url, token, tmp, procs

    def get(self, path: str, timeout_s: float = 60.0) -> bytes:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Token {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout_s) as r:
            return r.read()

    def targets(self) -> list[dict]:
        return json.loads(self.get("/metrics/targets"))

    def web_pids(self) -> list[int]:
        """uvicorn's supervisor and its web worker processes."""
        out = subprocess.run(["pgrep", "-P", str(self.procs[0].pid)], capture_output=True, text=True).stdout
        return [self.procs[0].pid, *map(int, out.split())]


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) of processes so far, seconds."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _check(proc: subprocess.Popen, log: Path, what: str) -> None:
    if proc.poll() is not None:
        raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")


@contextmanager
def running_stack(fabrics: list[dict], workers: int, redis_url: str) -> Iterator[Stack]:
    """ibweb with ``workers`` web processes and one ``run_engine`` for ``fabrics`` (dicts of ``Fabric`` fields) on
    a fresh SQLite database and its own namespace of ``redis_url``; yields once every fabric is scraped in parts
    (its counters published). The namespace's keys are deleted at the end, and the folder unless it failed."""
    import redis

    tmp = Path(tempfile.mkdtemp(prefix="ibweb-bench-metrics-"))
    namespace = f"ibweb-bench-metrics-{os.getpid()}"
    env = {**os.environ, "IBWEB_VAR_DIR": str(tmp), "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
           "REDIS_URL": redis_url, "IBWEB_REDIS_NAMESPACE": namespace, "IBWEB_ENGINE_EMBEDDED": "0",
           "PYTHONUNBUFFERED": "1"}
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "shell", "-c", (
        "import json\nfrom ibweb.fabrics.models import Fabric\n"
        f"for spec in json.loads({json.dumps(fabrics)!r}):\n    Fabric.objects.create(**spec)\n")],
        cwd=ROOT, env=env, check=True)
    token = subprocess.run([*manage, "create_user", "prometheus", "--role", "operator", "--token"], cwd=ROOT,
                           env=env, check=True, capture_output=True, text=True).stdout.split()[-1]
    port = free_port()
    procs: list[subprocess.Popen] = []
    failed = True
    web_log, engine_log = tmp / "web.log", tmp / "engine.log"
    try:
        procs.append(subprocess.Popen(  # compose.yaml's web service
            [sys.executable, "-m", "ibweb.serve", "ibweb.asgi:application", "--host", "127.0.0.1", "--port",
             str(port), "--workers", str(workers), "--lifespan", "on", "--ws-max-size", "1048576",
             "--ws", "ibweb.websocket.deflate:WebSocketProtocol", "--log-level", "warning"],
            cwd=ROOT, env=env, stdout=web_log.open("wb"), stderr=subprocess.STDOUT))
        procs.append(subprocess.Popen([*manage, "run_engine", *(f["slug"] for f in fabrics)], cwd=ROOT, env=env,
                                      stdout=engine_log.open("wb"), stderr=subprocess.STDOUT))
        stack = Stack(f"http://127.0.0.1:{port}", token, tmp, procs)
        deadline = time.monotonic() + 900
        while True:
            _check(procs[0], web_log, "the web server")
            _check(procs[1], engine_log, "run_engine")
            try:
                slugs = [g["labels"].get("__param_fabric") for g in stack.targets() if "__param_part" in g["labels"]]
                if all(f["slug"] in slugs for f in fabrics):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"fabrics not published in parts:\n{engine_log.read_text()[-3000:]}")
            time.sleep(2)
        yield stack
        failed = False
    finally:
        for proc in procs:
            stop_process(proc)
        if not failed:  # kept with its logs when something failed
            shutil.rmtree(tmp, ignore_errors=True)
        client = redis.Redis.from_url(redis_url)
        keys = list(client.scan_iter(f"*{namespace}*", count=1000))
        for i in range(0, len(keys), 1000):
            client.delete(*keys[i:i + 1000])


@contextmanager
def running_prometheus(stack: Stack, interval_s: int, timeout_s: int) -> Iterator[Prometheus]:
    """Prometheus discovering ``stack``'s targets through ``/metrics/targets`` (deploy/prometheus/prometheus.yml's
    scrape config, with this interval and timeout), every scraped sample dropped after parsing."""
    tmp = stack.tmp / "prometheus"
    tmp.mkdir()
    token = tmp / "token"
    token.write_text(stack.token)
    auth = {"type": "Token", "credentials_file": str(token)}
    config = {"global": {"scrape_interval": f"{interval_s}s", "scrape_timeout": f"{timeout_s}s"},
              "scrape_configs": [{"job_name": JOB, "authorization": auth,
                                  "http_sd_configs": [{"url": stack.url + "/metrics/targets", "authorization": auth}],
                                  "metric_relabel_configs": [{"source_labels": ["__name__"], "regex": ".+",
                                                              "action": "drop"}]}]}
    path = tmp / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    port, log = free_port(), tmp / "prometheus.log"
    with ExitStack() as stop:
        proc = subprocess.Popen([PROMETHEUS, f"--config.file={path}", f"--storage.tsdb.path={tmp / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn",
                                 "--enable-feature=extra-scrape-metrics"],
                                stdout=log.open("wb"), stderr=subprocess.STDOUT)
        stop.callback(stop_process, proc)
        prom = Prometheus(f"http://127.0.0.1:{port}", proc, log)
        prom.wait(lambda p: urllib.request.urlopen(f"{p.url}/-/ready", timeout=2).status == 200, 60,
                  "Prometheus to be ready")
        yield prom


def _vector(prom: Prometheus, expr: str) -> dict[str, float]:
    """``{instance: value}`` of an instant query."""
    return {r["metric"].get("instance", ""): float(r["value"][1]) for r in prom.query(expr)["result"]}


def target_figures(prom: Prometheus, window_s: int) -> dict[str, dict[str, float]]:
    """Per target (``instance``) over the last ``window_s`` seconds: scrapes, scrapes up, the largest duration,
    samples and body size."""
    w = f"[{window_s}s]"
    sel = f'{{job="{JOB}"}}'
    series = {"scrapes": f"count_over_time(up{sel}{w})", "up": f"sum_over_time(up{sel}{w})",
              "duration_s": f"max_over_time(scrape_duration_seconds{sel}{w})",
              "samples": f"max_over_time(scrape_samples_scraped{sel}{w})",
              "bytes": f"max_over_time(scrape_body_size_bytes{sel}{w})"}
    out: dict[str, dict[str, float]] = {}
    for name, expr in series.items():
        for instance, value in _vector(prom, expr).items():
            out.setdefault(instance, {})[name] = value
    return out


def round_figures(prom: Prometheus, start: float, end: float, interval_s: int) -> list[dict[str, float]]:
    """Per scrape interval from ``start`` to ``end``: the scrapes made in it, how many were up, their summed and
    largest duration (a round: every target scraped once, each at its own offset within the interval)."""
    w = f"[{interval_s}s]"
    sel = f'{{job="{JOB}"}}'
    exprs = {"scrapes": f"sum(count_over_time(up{sel}{w}))", "up": f"sum(sum_over_time(up{sel}{w}))",
             "total_s": f"sum(sum_over_time(scrape_duration_seconds{sel}{w}))",
             "slowest_s": f"max(max_over_time(scrape_duration_seconds{sel}{w}))"}
    rounds: dict[float, dict[str, float]] = {}
    for name, expr in exprs.items():
        body = prom.get("/api/v1/query_range", query=expr, start=start, end=end, step=interval_s)
        assert body["status"] == "success", f"{expr}: {body.get('error')}"
        for t, value in (body["data"]["result"] or [{"values": []}])[0]["values"]:
            rounds.setdefault(float(t), {"end": float(t)})[name] = float(value)
    return [rounds[t] for t in sorted(rounds)]
