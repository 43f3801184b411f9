"""Two Celery workers (real processes, a private Redis) run the P_Key shards of one validation round (issue 38).

The caller (``manage.py shell``, 5 ports a shard) plans the round on the fake tools of ``test_device_sweep`` and
starts the chord; the workers run the SM reads, the four shards and the one merge, which keeps the 14 tables read
and puts the failed ports' warnings on the sweep.
"""

import json
import os
import stat
import subprocess
import sys
import time

import pytest

from tests.support.faults import private_redis
from tests.support.server import ROOT

from .test_device_sweep import DATA, FAKE_TOOLS

pytestmark = pytest.mark.server


def manage(env: dict, code: str) -> str:
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=120)
    return out.stdout.strip().splitlines()[-1]


def test_two_workers_run_the_p_key_shards_and_one_merge_keeps_them(tmp_path):
    script = tmp_path / "fake-diags"
    script.write_text(FAKE_TOOLS)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    tools_env = {"DATA": str(DATA), "LOG": str(tmp_path / "calls.log")}
    with private_redis(tmp_path) as redis:
        env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
               "REDIS_URL": redis.url, "IBWEB_CELERY_EAGER": "0", "PYTHONUNBUFFERED": "1"}
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        logs = [tmp_path / f"worker{i}.log" for i in (1, 2)]
        workers = [subprocess.Popen([sys.executable, "-m", "celery", "-A", "ibweb", "worker", "--pool", "solo",
                                     "-n", f"w{i}@%h", "--without-gossip", "--without-mingle",
                                     "--prefetch-multiplier", "1", "--loglevel", "INFO"],
                                    cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
                   for i, log in zip((1, 2), logs, strict=True)]
        try:
            ready = time.monotonic() + 60
            while not all(" ready." in log.read_text() for log in logs) and time.monotonic() < ready:
                time.sleep(0.2)  # both polling the queue before the chord is queued
            ids = json.loads(manage(env, (
                "import json; from ibweb.fabrics.models import Fabric; "
                "from ibweb.telemetry.models import CollectorConfig; from ibweb.telemetry.sweeps import run_sweep; "
                "from ibweb.telemetry import device_sweep, tasks; "
                "f = Fabric.objects.create(name='pk', slug='pk', mode='telemetry'); "
                f"c = CollectorConfig.objects.create(fabric=f, command_prefix=[{str(script)!r}], "
                f"environment={tools_env!r}, timeout_s=5.0, validation_every=0); "
                "s = run_sweep(c); device_sweep.PKEY_SHARD_PORTS = 5; "
                "assert device_sweep.sharded(c) and tasks.validation_reads(c.pk, s.pk) == 0; "
                "print(json.dumps([f.pk, s.pk]))")))
            deadline = time.monotonic() + 60
            while True:
                state = json.loads(manage(env, (
                    "import json; from ibweb.runtime import device_readings; "
                    "from ibweb.telemetry.models import Sweep; "
                    f"r = device_readings.read({ids[0]}); s = Sweep.objects.get(pk={ids[1]}); "
                    "print(json.dumps([None if r is None else len(r.pkeys), None if r is None else "
                    "[sm.lid for sm in r.sms], [w['text'] for w in s.warnings]]))")))
                if state[0] is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
        finally:
            for w in workers:
                w.terminate()
            for w in workers:
                w.wait(20)
    tables, sms, warned = state
    texts = [log.read_text() for log in logs]
    assert tables == 14 and sms == [2], (state, [t[-2000:] for t in texts])
    assert {"smpquery pkeys 9 1", "smpquery pkeys 10 1"} <= set(warned)
    ran = [t.count("ibweb.telemetry.tasks.pkey_shard[") for t in texts]
    assert sum(t.count("ibweb.telemetry.tasks.merge_validation[") for t in texts) >= 1
    assert sum(ran) >= 4 and all(n > 0 for n in ran), f"both workers should have run shards: {ran}"
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert len([c for c in calls if c.startswith("smpquery")]) == 16
