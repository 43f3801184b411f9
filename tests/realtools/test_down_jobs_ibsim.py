"""A cable cut for longer than the job-killing time, on ibsim with the real tools (issue 37): one down, its duration
bounded by the sweeps, and the job that was on the cable.

A telemetry-fed fabric run by its engine in this process: ibsim's 4x HDR fat tree, OpenSM's LFTs (``-D 0x47``), the
collector's sweeps (real ``iblinkinfo``/``perfquery``, run here one by one so their times are known) and the two
running jobs of a Slurm 23.11 ``squeue --json`` drop directory, placed by the twin. A leaf-spine cable that job 4242's
routes cross (the twin's attribution, in the runtime record's job catalog) is cut (``Unlink``) for two sweeps and
relinked (``ReLink``). ibsim answers no ``perfquery -T`` and nothing is pushed: the downs come from the sweeps alone
(the discovery without the cable, and its ``link_down`` condition). The job-killing time is set to 2 s
(``IBWEB_HEALTH_JOB_KILLING_S``; default 7 s) so the cut need not last 7 s: the test stays at a few sweeps.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from fabric_engine.telemetry import MIN_INTERVAL_S
from fabric_engine.topology.generate import fat_tree
from tests.support.engine_fixtures import settled_tick
from tests.support.slurm_drop import running_jobs_drop

pytestmark = [pytest.mark.realtools, pytest.mark.django_db(transaction=True)]

KILLING_S = 2.0


def test_a_cut_longer_than_the_job_killing_time_is_one_down_with_the_job_on_it(ibsim, tmp_path, settings):
    from django.contrib.auth.models import User
    from django.core.cache import cache
    from rest_framework.test import APIClient

    from ibweb.events.models import Event
    from ibweb.fabrics.choices import FabricMode
    from ibweb.fabrics.models import Fabric
    from ibweb.live.engine.runner import FabricRunner
    from ibweb.runtime import record
    from ibweb.telemetry.models import CollectorConfig
    from ibweb.telemetry.tasks import sweep_fabric
    from ibweb.twin import jobs as jobsvc
    from ibweb.twin.choices import JobSourceKind
    from ibweb.twin.models import JobSource

    settings.IBWEB_HEALTH_INTERVAL_S = 0
    settings.IBWEB_HEALTH_JOB_KILLING_S = KILLING_S
    cache.clear()
    sim = ibsim(fat_tree(hosts=16, radix=8, speed="HDR"), sim_host="gpu0001", tools=("perfquery", "iblinkinfo"))
    osm = tmp_path / "osm"
    sim.run_opensm(["-o", "-D", "0x47"], cache_dir=osm)
    env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    row = Fabric.objects.create(name="Downs", slug="downs", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=row, environment=env, timeout_s=20.0, shard_size=8,
                                            stale_after_s=600.0, lfts_path=str(osm / "opensm-lfts.dump"))
    running_jobs_drop(tmp_path / "drop", time.time())
    source = JobSource.objects.create(fabric=row, kind=JobSourceKind.DIRECTORY, drop_dir=str(tmp_path / "drop"),
                                      accounts={"llm-pretrain": "acme"})

    def sweep_and_tick() -> tuple[float, float]:
        """One sweep (its wall-clock span) and the engine's tick that reads it."""
        time.sleep(MIN_INTERVAL_S)
        t0 = time.time()
        sweep_fabric.delay(config.pk).get()
        t1 = time.time()
        asyncio.run(settled_tick(runner))  # and the events it signalled, written
        return t0, t1

    sweep_fabric.delay(config.pk).get()
    runner = FabricRunner(row)
    asyncio.run(runner.start())
    jobsvc.poll(source)  # what the beat (or, embedded, the engine) does every interval
    sweep_and_tick()
    f = runner.source.fabric
    catalog = record.jobs(row.pk, record.head(row.pk))
    assert [j["id"] for j in catalog] == ["4242", "4243"] and all(j["links"] for j in catalog)

    # a leaf-spine cable job 4242's routes cross; the jobs on it are those whose links hold either direction
    switch = (f.kind[f.dl_src] == 1) & (f.kind[f.dl_dst] == 1)
    d = next(int(x) for x in catalog[0]["links"] if switch[x] and str(f.node_name[f.dl_src[x]]).startswith("leaf"))
    on_it = sorted(j["id"] for j in catalog if {d, int(f.reverse(d))} & set(j["links"]))
    leaf, up = str(f.node_name[f.dl_src[d]]), int(f.dl_src_port[d])
    spine, down_port = str(f.node_name[f.dl_dst[d]]), int(f.dl_dst_port[d])
    assert "4242" in on_it

    before = sweep_and_tick()  # last seen up
    t_cut = time.time()
    sim.console(f'Unlink "{leaf}"[{up}]')
    first = sweep_and_tick()  # first seen down
    assert runner.source.fabric.num_links == f.num_links - 1
    time.sleep(KILLING_S)
    last = sweep_and_tick()  # last seen down: longer than the job-killing time between the two
    sim.console(f'ReLink "{leaf}"[{up}]')
    t_relink = time.time()
    back = sweep_and_tick()  # first seen up again
    assert runner.source.fabric.num_links == f.num_links
    asyncio.run(runner.stop())

    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("root", password="pw-root"))
    report = api.get("/api/fabrics/fabrics/downs/health/").json()
    with_downs = {(p["node"], p["port"]): p for p in report["worst"] if p["downs"] and p["downs"]["episodes"]}
    assert set(with_downs) == {(leaf, up), (spine, down_port)}, sorted(with_downs)  # the cable's ends, nothing else
    held = t_relink - t_cut
    for (node, port), p in with_downs.items():
        [episode] = p["downs"]["episodes"]  # exactly one down
        assert not episode["open"] and episode["critical"] and p["up"], (node, port, episode)
        # bounded by the sweeps: it started between the sweep before the cut and the first without the cable,
        # and ended between the last sweep without it and the first with it again
        assert first[0] - 1 <= episode["start"] <= first[1] + 1
        assert back[0] - 1 <= episode["end"] <= back[1] + 1
        assert episode["duration_min_s"] <= held + 1 and episode["duration_max_s"] >= held - 1
        assert episode["duration_min_s"] >= last[0] - first[1] - 1 > KILLING_S - 1
        assert episode["duration_max_s"] - episode["duration_min_s"] <= (first[1] - before[0]) + (back[1] - last[0])
        assert [j["id"] for j in episode["jobs"]] == on_it, (node, port)
        assert {j["tenant"] for j in episode["jobs"] if j["id"] == "4242"} == {"acme"}
    # longer than the job-killing time: one critical event per cable end
    long = Event.objects.filter(fabric=row, kind="link_down_long")
    assert sorted(e.object_id for e in long) == sorted([f"{leaf} port {up}", f"{spine} port {down_port}"])
    assert {e.severity for e in long} == {"critical"}
