"""The new-fabric page's test sweep against ibsim with the real iblinkinfo and perfquery (nothing saved).

ibsim runs a generated 4x HDR fat tree; OpenSM sweeps it once with ``-R ftree -D 0x47`` so it
writes ``opensm-lfts.dump`` into its ``OSM_CACHE_DIR``. The trial runs through the collector
environment a real fabric's form takes (umad2sim's ``LD_PRELOAD``, ``SIM_HOST``,
``IBSIM_SOCKNAME``): its counts must be the simulated fabric's, its counters every cabled
switch port's, its LFT dump OpenSM's tables of every switch; an ``Unlink`` in ibsim's
console shows in the next trial; and no row is written.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.models import CollectorConfig, Sweep
from ibweb.telemetry.trial import trial_sweep

pytestmark = [pytest.mark.realtools, pytest.mark.django_db]

HOSTS, SWITCHES, LINKS = 16, 8, 32  # radix 8: 4 leaves of 4 hosts, 4 spines


def test_trial_sweep_of_ibsim_counts_the_fabric_reads_counters_and_opensms_lfts(ibsim, tmp_path):
    from django.contrib.auth.models import User

    sim = ibsim(fat_tree(hosts=HOSTS, radix=8, speed="HDR"), sim_host="gpu0001", tools=("perfquery", "iblinkinfo"))
    osm = tmp_path / "osm"
    sim.run_opensm(["-o", "-R", "ftree", "-D", "0x47"], cache_dir=osm)
    dump = osm / "opensm-lfts.dump"
    assert dump.is_file()
    env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("root", password="pw-root"))
    body = {"source": "commands", "environment": "\n".join(f"{k}={v}" for k, v in env.items()),
            "lfts_path": str(dump), "timeout_s": 20}

    r = api.post("/api/telemetry/trial-sweep/", body, format="json")
    assert r.status_code == 200, r.content
    report = r.json()
    assert report["ok"], report["errors"]
    d = report["discovery"]
    assert (d["switches"], d["cas"], d["hosts"], d["links"]) == (SWITCHES, HOSTS, HOSTS, LINKS)
    assert d["ports_not_up"] == 4 * 4  # each spine has 8 ports, 4 cabled
    c = report["counters"]
    assert (c["switches_total"], c["switches_tried"], c["switches_read"]) == (SWITCHES, SWITCHES, SWITCHES)
    assert c["ports_read"] == c["ports_expected"] == 2 * LINKS - HOSTS and c["ports_missing"] == []
    lft = report["lft"]
    assert lft["read"] and (lft["switches"], lft["switches_missing"], lft["dead_entries"]) == (SWITCHES, [], 0)
    # every switch routes every host's LID (ftree leaves out a few switch LIDs: leaf to leaf)
    assert SWITCHES * HOSTS < lft["entries"] <= SWITCHES * (SWITCHES + HOSTS)
    assert not Fabric.objects.exists() and not CollectorConfig.objects.exists() and not Sweep.objects.exists()

    # at most a few switches' counters in a trial: the bound is stated
    few = trial_sweep(CollectorConfig(source="commands", environment=env, timeout_s=20.0), max_switches=3)
    assert (few["counters"]["switches_tried"], few["counters"]["switches_limit"]) == (3, 3)
    assert few["counters"]["switches_total"] == SWITCHES and few["counters"]["switches_read"] == 3

    # a cable cut in ibsim's console: one link fewer, two ports down, and OpenSM's (older) tables route through it
    sim.console('Unlink "leaf03"[5]')
    cut = api.post("/api/telemetry/trial-sweep/", body, format="json").json()
    assert cut["discovery"]["links"] == LINKS - 1 and cut["discovery"]["ports_not_up"] == 4 * 4 + 2
    assert cut["counters"]["ports_expected"] == 2 * LINKS - HOSTS - 2
    assert cut["lft"]["read"] and cut["lft"]["dead_entries"] > 0
