"""Analyses on a real Celery worker over Redis (issue 5): queued by the web process, progress through the channel layer.

The configuration-only switch of the architecture: with ``REDIS_URL`` the POST answers
``queued`` at once, a separate ``celery worker`` process runs the analysis, and the
clients of the web process's feed still get its ``progress`` messages, then ``done``.
"""

import asyncio
import json
import os
import subprocess
import sys
import urllib.request

import pytest
import websockets

from tests.support.server import ROOT, redis_namespace, running_server
from tests.support.services import require_redis

# Real Redis and PostgreSQL in their own processes already; `make test-services` does not repeat them.
pytestmark = pytest.mark.services

PATTERNS = 20000  # a few seconds on the demo


def _env(tmp_path, redis_url: str) -> dict:
    return {**os.environ, "IBWEB_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'server.sqlite3'}",
            "REDIS_URL": redis_url, "IBWEB_CELERY_EAGER": "0", "PYTHONUNBUFFERED": "1",
            "IBWEB_REDIS_NAMESPACE": redis_namespace(tmp_path)}


def _token(env: dict) -> str:
    code = ("from django.contrib.auth.models import Permission, User; "
            "from ibweb.accounts.models import ApiToken; "
            "u = User.objects.create_user('worker-analyst'); "
            "u.user_permissions.add(Permission.objects.get(codename='add_analysis')); "
            "print(ApiToken.issue(u, 'worker')[1])")
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def _request(url: str, token: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Authorization": f"Token {token}",
                                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as response:
        return json.load(response)


def test_a_worker_runs_the_analysis_and_the_feed_shows_its_progress(tmp_path):
    redis_url = require_redis(db=9)
    env = _env(tmp_path, redis_url)
    with running_server(tmp_path, extra_env={"REDIS_URL": redis_url, "IBWEB_CELERY_EAGER": "0"}) as server:
        token = _token(env)
        log = (tmp_path / "worker.log").open("wb")
        worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "ibweb", "worker", "--pool", "solo",
                                   "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info"],
                                  cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"{server.url}/api/fabrics/fabrics/demo/analyses/"

            async def watch() -> tuple[dict, list[dict]]:
                async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/", max_size=None) as ws:
                    assert json.loads(await asyncio.wait_for(ws.recv(), 30))["type"] == "snapshot"
                    created = await asyncio.to_thread(_request, url, token, {"kind": "ebb",
                                                                             "params": {"patterns": PATTERNS}})
                    ours = []
                    while not ours or ours[-1]["status"] == "running":
                        msg = json.loads(await asyncio.wait_for(ws.recv(), 60))
                        if msg["type"] == "progress" and msg.get("task") == "analysis" and msg["id"] == created["id"]:
                            ours.append(msg)
                    return created, ours

            created, ours = asyncio.run(watch())
        finally:
            worker.terminate()
            worker.wait(20)
            log.close()
        worker_log = (tmp_path / "worker.log").read_text(errors="replace")
        assert created["status"] in ("queued", "running"), created  # the web process did not run it
        assert ours[-1]["status"] == "done" and ours[-1]["fraction"] == 1.0, (ours, worker_log)
        running = [m["fraction"] for m in ours[:-1]]
        assert running and all(0 <= f < 1 for f in running) and running == sorted(running), ours
        final = _request(f"{url}{created['id']}/", token)
        assert final["status"] == "done" and final["result"]["patterns"] == PATTERNS and 0 < final["result"]["ebb"] < 1
        assert "ibweb.fabrics.tasks.run_analysis" in worker_log and "succeeded" in worker_log
