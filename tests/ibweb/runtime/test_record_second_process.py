"""A second web process answers path, jobs and P_Key checks from the leader's runtime record (issue 13).

An engine process (``run_engine``) leads the demo fabric on the real Redis and publishes its
record; another Python process, set up as a web process on the same Redis and database, with
every way of building or routing a fabric made to fail, answers the path, ports, jobs and
routing-report APIs and accepts (and refuses) P_Key members through the UFM-style API.
"""

import json
import os
import pickle
import subprocess
import sys
import time

import pytest

from tests.support.server import ROOT, _manage
from tests.support.services import require_redis

pytestmark = pytest.mark.services

WEB = r"""
import json, os, sys
import django
django.setup()
import fabric_engine.routing, fabric_engine.scenario, fabric_engine.telemetry

def refuse(*a, **k):
    raise AssertionError("this web process built or routed a fabric")

for module, name in ((fabric_engine.scenario, "build_fabric"), (fabric_engine.scenario, "build_emulator"),
                     (fabric_engine.routing, "route"), (fabric_engine.telemetry, "fabric_from_linkinfo")):
    setattr(module, name, refuse)
import ibweb.tenancy.inventory
ibweb.tenancy.inventory.build_fabric = refuse
from django.contrib.auth.models import User
from django.test import Client
from ibweb.runtime import record

admin = User.objects.create_superuser("root2", password="pw")
c = Client()
c.force_login(admin)
out = {}
r = c.get("/api/fabrics/fabrics/demo/path/", {"src": "gpu0001", "dst": "gpu0512"})
out["path"] = [r.status_code, [h["name"] for h in r.json().get("hops", [])]]
r = c.get("/api/fabrics/fabrics/demo/jobs/")
out["jobs"] = [r.status_code, sorted(j["id"] for j in r.json().get("jobs", []))]
r = c.get("/api/fabrics/fabrics/demo/ports/gpu0001/1/history/")
out["port"] = [r.status_code]
r = c.get("/api/fabrics/fabrics/demo/routing/")
out["routing"] = [r.status_code, r.json().get("engine")]
from ibweb.tenancy.models import Partition
p = Partition.objects.filter(fabric__slug="demo", tenant__slug="acme").first()
pkey = f"0x{p.pkey:04x}"
h = record.head(p.fabric_id)
f = record.fabric(p.fabric_id, h)
guid = f"0x{int(f.port_guid[f.port_offset[f.hosts[-1]]]):016x}"
r = c.post(f"/api/tenancy/fabrics/demo/pkeys/{pkey}/guids/", {"guids": [guid]}, content_type="application/json")
out["add"] = [r.status_code]
r = c.post(f"/api/tenancy/fabrics/demo/pkeys/{pkey}/guids/", {"guids": ["0x00000000deadbeef"]},
           content_type="application/json")
out["unknown"] = [r.status_code, json.dumps(r.json())]
print(json.dumps(out))
"""


def _routed_head(client) -> bool:
    """Whether the record head in Redis is an engine's (routed), as Django's Redis cache pickles it."""
    for key in client.scan_iter("*ibweb:rt:*:head"):
        raw = client.get(key)
        head = pickle.loads(raw) if raw else None
        if isinstance(head, dict) and head.get("engine"):
            return True
    return False


def test_a_second_web_process_answers_from_the_leaders_record_without_building_a_fabric(tmp_path):
    redis_url = require_redis(db=6)
    env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
           "REDIS_URL": redis_url, "IBWEB_ENGINE_EMBEDDED": "0", "DJANGO_SETTINGS_MODULE": "ibweb.settings"}
    _manage(env, "migrate", "--verbosity", "0")
    _manage(env, "ensure_demo")
    log = (tmp_path / "engine.log").open("wb")
    engine = subprocess.Popen([sys.executable, "manage.py", "run_engine", "demo"], cwd=ROOT, env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    try:
        import redis

        client = redis.Redis.from_url(redis_url)
        deadline = time.monotonic() + 60
        while not _routed_head(client):  # ensure_demo's member checks publish an unrouted record from the spec
            assert engine.poll() is None, (tmp_path / "engine.log").read_text()
            assert time.monotonic() < deadline, "the engine published no record"
            time.sleep(0.3)
        done = subprocess.run([sys.executable, "-c", WEB], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        out = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        engine.kill()
        engine.wait()
    status, hops = out["path"]
    assert status == 200 and hops[0] == "gpu0001" and hops[-1] == "gpu0512" and len(hops) >= 3
    assert out["jobs"][0] == 200 and "llama-70b" in out["jobs"][1]
    assert out["port"] == [200] and out["routing"] == [200, "minhop"]
    assert out["add"] == [200]
    assert out["unknown"][0] == 400 and "0x00000000deadbeef" in out["unknown"][1]
