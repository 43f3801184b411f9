"""Celery workers (real processes) run a sharded telemetry sweep of an ibsim fabric over Redis (issue 10).

Everything is a separate process, as in production: ibsim, OpenSM (once), two
``celery worker`` processes on a private Redis, and the caller queuing the sweep
through ``manage.py shell``. The shards run real ``perfquery`` under umad2sim on
both workers, and the merge stores every switch port's counters.
"""

import json
import os
import subprocess
import sys
import time

from fabric_engine.topology.generate import fat_tree
from tests.support.faults import private_redis
from tests.support.server import ROOT


def manage(env: dict, code: str) -> str:
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=120)
    return out.stdout.strip().splitlines()[-1]


def test_two_workers_run_the_shards_of_one_sweep(ibsim, tmp_path):
    design = fat_tree(hosts=16, radix=8, speed="HDR")
    sim = ibsim(design, sim_host="gpu0001", tools=("perfquery", "iblinkinfo"))
    sim.run_opensm(["-o"])
    sim_env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST",
                                                                            "IBSIM_SOCKNAME")}
    with private_redis(tmp_path) as redis:
        env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
               "REDIS_URL": redis.url, "IBWEB_CELERY_EAGER": "0", "PYTHONUNBUFFERED": "1"}
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        environment = json.dumps(sim_env)
        pk = int(manage(env, "import json; from ibweb.fabrics.models import Fabric; "
                             "from ibweb.telemetry.models import CollectorConfig; "
                             "f = Fabric.objects.create(name='sim', slug='sim', mode='telemetry'); "
                             f"c = CollectorConfig.objects.create(fabric=f, environment=json.loads({environment!r}),"
                             " timeout_s=20.0, shard_size=2); print(c.pk)"))
        logs = [tmp_path / f"worker{i}.log" for i in (1, 2)]
        workers = [subprocess.Popen([sys.executable, "-m", "celery", "-A", "ibweb", "worker", "--pool", "solo",
                                     "-n", f"w{i}@%h", "--loglevel", "INFO"], cwd=ROOT, env=env,
                                    stdout=log.open("wb"), stderr=subprocess.STDOUT)
                   for i, log in zip((1, 2), logs, strict=True)]
        try:
            sweep_pk = int(manage(env, "from ibweb.telemetry.tasks import sweep_fabric; "
                                       f"print(sweep_fabric.delay({pk}).get(timeout=90))"))
            deadline = time.monotonic() + 90
            while True:
                state = json.loads(manage(env, "import json; from ibweb.telemetry.models import Sweep; "
                                               f"s = Sweep.objects.get(pk={sweep_pk}); "
                                               "print(json.dumps([s.status, s.shards, s.ports, s.failures]))"))
                if state[0] != "running" or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
        finally:
            for w in workers:
                w.terminate()
            for w in workers:
                w.wait(20)
    status, shards, ports, failures = state
    switch_ports = int(design.nports[design.switches].sum())
    cabled = int((design.kind[design.dl_src] == 1).sum())  # switch ports with a cable
    assert status == "ok", (state, [log.read_text()[-2000:] for log in logs])
    assert shards == -(-design.num_switches // 2) and shards > 2
    assert failures == [] and 0 < ports <= switch_ports and ports >= cabled
    done = [log.read_text().count("sweep_shard") for log in logs]
    assert all(n > 0 for n in done), f"both workers should have run shards: {done}"
