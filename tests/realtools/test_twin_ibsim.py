"""The digital twin against real tools (issue 17): ibsim, OpenSM's LFTs, real perfquery, Slurm JSON.

ibsim runs a 4x HDR fat tree (the design, also the plan); OpenSM routes it and dumps
its LFTs (``-D 0x47``). The two running jobs of a Slurm 23.11 ``squeue --json``
fixture run ring all-reduces: for every ring step ``ibtracert`` (the real tool, on
the simulated switches) gives the path, and ibsim's counters along it are raised
with ``PerformanceSet`` by the bytes each job moves (switch out ports'
``PortXmitData``; a host's uplink through the leaf port's ``PortRcvData``), plus
traffic on one link no job uses. Sweeps read ``iblinkinfo`` and ``perfquery`` as
the collector does. The twin must attribute the traffic to the right jobs, find no
deviation but the unexplained link, and, after ``Unlink`` of an uplink on the first
job's path and a new OpenSM sweep, report the cable missing against the plan and
flag the link down against expected (an alert once the deviation persists).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.formats import opensm_lfts
from fabric_engine.telemetry import (
    MIN_INTERVAL_S,
    CounterSamples,
    fabric_from_linkinfo,
    observe,
    parse_iblinkinfo,
    parse_perfquery,
)
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin import HostMap, Twin, compare_plan, parse_slurm_jobs, read_plan
from fabric_engine.twin.attribution import attribute_links
from tests.realtools.tracert import ibtracert_hops
from tests.support.slurm_drop import SLURM, running_jobs_drop

pytestmark = pytest.mark.realtools

WORDS = {"4242": 400_000_000, "4243": 150_000_000}  # 4-byte words per ring step per sweep interval (a few Gb/s)


class Sweeper:
    """iblinkinfo + perfquery of every switch, as the collector runs them, and the counters we drive."""

    def __init__(self, sim, osm: Path) -> None:
        self.sim, self.osm = sim, osm
        self.level: dict[tuple[str, int, str], int] = {}  # (switch, port, counter) -> value set so far

    def discover(self):
        text = self.sim.run(["iblinkinfo"]).stdout
        return fabric_from_linkinfo(parse_iblinkinfo(text), "ibsim")

    def routing(self, fabric):
        return opensm_lfts.read((self.osm / "opensm-lfts.dump").read_text(), fabric, "opensm-lfts.dump")

    def read(self, fabric) -> CounterSamples:
        parts = []
        for s in fabric.switches.tolist():
            ports = sorted({int(p) for p in fabric.dl_src_port[fabric.dl_src == s]})
            lid = str(int(fabric.lid[s]))
            for extra in ([], ["-x"]):
                out = self.sim.run(["perfquery", *extra, "-l", lid, ",".join(map(str, ports))]).stdout
                parts.append(parse_perfquery(out, time.time()))
        return CounterSamples.concat(parts).merged()

    def add(self, switch: str, port: int, counter: str, words: int) -> None:
        key = (switch, port, counter)
        self.level[key] = self.level.get(key, 0) + words
        block = "PortCountersExtended"
        self.sim.console(f'PerformanceSet "{switch}"[{port}] {block}.{counter}={self.level[key]}')

    def path(self, fabric, src: int, dst: int) -> list[tuple[str, int, int]]:
        lids = [str(int(fabric.port_lid[fabric.port_offset[n]])) for n in (src, dst)]
        host = str(fabric.node_name[src]).split(" ")[0]
        return ibtracert_hops(self.sim.run(["ibtracert", *lids], sim_host=host).stdout)

    def drive(self, fabric, rings: dict[str, list[int]]) -> dict[str, set[tuple[str, int]]]:
        """Raise the counters along every ring step of every job; returns each job's (switch, out port) set."""
        used: dict[str, set[tuple[str, int]]] = {}
        for job, nodes in rings.items():
            for a, b in zip(nodes, nodes[1:] + nodes[:1], strict=True):
                hops = self.path(fabric, a, b)
                leaf, in_port, _ = hops[0]
                self.add(leaf, in_port, "PortRcvData", WORDS[job])  # the host's uplink, seen at the leaf
                for switch, _, out in hops:
                    self.add(switch, out, "PortXmitData", WORDS[job])
                    used.setdefault(job, set()).add((switch, out))
        return used


def _switch_port(fabric, d: int) -> tuple[str, int]:
    return str(fabric.node_name[fabric.dl_src[d]]), int(fabric.dl_src_port[d])


def test_twin_on_ibsim_attributes_jobs_finds_the_cut_link_against_plan_and_expected(ibsim, tmp_path):
    design = fat_tree(hosts=16, radix=8, speed="HDR")
    sim = ibsim(design, sim_host="gpu0001", tools=("perfquery", "iblinkinfo", "ibtracert"))
    osm = tmp_path / "osm"
    sim.run_opensm(["-o", "-D", "0x47"], cache_dir=osm)
    sweeper = Sweeper(sim, osm)
    plan = read_plan(sim.net_path.read_text(), "design.net")
    fabric = sweeper.discover()
    routing = sweeper.routing(fabric)
    assert compare_plan(plan, fabric).ok

    jobs = parse_slurm_jobs(SLURM.read_text(), max_hosts=fabric.num_hosts, source=SLURM.name)
    assert [j.job_id for j in jobs] == ["4242", "4243"]
    twin = Twin(HostMap(), raise_after=2, clear_after=2)
    twin.set_jobs(jobs)
    now = max(j.start for j in jobs) + 600.0  # while both jobs run
    known = twin.place(fabric, now)[0]
    rings = {k.job_id: k.rails[1].tolist() for k in known}
    assert [str(fabric.node_name[n]) for n in rings["4242"]] == [f"gpu{i:04d} HCA-1" for i in (1, 2, 9, 10)]

    # an idle link on no job's path carries traffic nobody explains
    incidence = twin.model(routing, known)[0]
    idle = next(int(d) for d in np.flatnonzero(np.asarray(incidence.sum(axis=0)).ravel() == 0)
                if fabric.kind[fabric.dl_src[d]] == 1 and fabric.kind[fabric.dl_dst[d]] == 1)
    stray = _switch_port(fabric, idle)

    def sweep_pair(f, r):
        before = sweeper.read(f)
        used = sweeper.drive(f, {k.job_id: k.rails[1].tolist() for k in twin.place(f, now)[0]})
        sweeper.add(*stray, "PortXmitData", 400_000_000)
        time.sleep(MIN_INTERVAL_S)  # issue 26: reads closer than this give no rate
        after = sweeper.read(f)
        obs = observe(f, before, after, seq=1)
        return twin.evaluate(r, obs.state.rate_gbps, now, stale=obs.stale), obs, used

    report, obs, used = sweep_pair(fabric, routing)
    # --- attribution: every link we loaded for a job is one of that job's links under OpenSM's LFTs
    by_id = report.job_index()
    for job, ports in used.items():
        row = set(report.incidence[by_id[job]].indices.tolist())
        assert {fabric.out_link(fabric.node(s), p) for s, p in ports} <= row, job
    only_a = next(fabric.out_link(fabric.node(s), p) for s, p in used["4242"] - used["4243"])
    both = [fabric.out_link(fabric.node(s), p) for s, p in used["4242"] & used["4243"]]
    shares = attribute_links(obs.state.rate_gbps, [only_a, *both], report.incidence, report.traffic.rates)
    assert [report.jobs[k]["id"] for k, _ in shares[0]] == ["4242"]
    for s in shares[1:]:
        assert sorted(report.jobs[k]["id"] for k, _ in s) == ["4242", "4243"]
    # --- each job's observed bandwidth from its HCA ports: 4 ring steps, WORDS each, over the sweep interval
    a, b = report.jobs
    assert a["observed_gbps"] / b["observed_gbps"] == pytest.approx(WORDS["4242"] / WORDS["4243"], rel=0.1)
    assert a["observed"]["busbw_GBps"] > 0 and a["tenant"] == "llm-pretrain" and b["tenant"] == "vision"
    named = report.name_hotspots(obs.state.hotspots, obs.state.rate_gbps)
    assert {j["id"] for h in named for j in h["jobs"]} == {"4242", "4243"}
    # --- expected against observed: only the stray traffic deviates
    assert [(d["kind"], d["link"]) for d in report.deviations] == [("unexplained", idle)]

    # --- an uplink on job 4242's path is cut; OpenSM routes around it
    leaf, up = next((s, p) for s, p in sorted(used["4242"]) if s.startswith("leaf") and p > 4)
    peer = fabric.node_name[fabric.dl_dst[fabric.out_link(fabric.node(leaf), up)]]
    sim.console(f'Unlink "{leaf}"[{up}]')
    sim.run_opensm(["-o", "-D", "0x47"], cache_dir=osm)
    cut = sweeper.discover()
    assert cut.num_links == fabric.num_links - 1
    rerouted = sweeper.routing(cut)
    report_plan = compare_plan(plan, cut)
    assert report_plan.counts["missing"] == 1 and not report_plan.counts["extra"]
    (missing,) = [i for i in report_plan.issues if i["kind"] == "missing"]
    assert f"{leaf} port {up}" in missing["planned"] and str(peer) in missing["planned"]

    first, _, _ = sweep_pair(cut, rerouted)
    down = [d for d in first.deviations if d["kind"] == "down"]
    (cut_up,) = [d for d in down if d["label"].startswith(f"{leaf} port {up} ->")]
    assert "4242" in cut_up["jobs"] and cut_up["expected_gbps"] > 0
    ends = {f"0x{int(fabric.guid[fabric.node(n)]):016x}" for n in (leaf, peer)}
    assert {d["key"].split("/")[0] for d in down} <= ends
    # one comparison is not an alert yet; the stray traffic, seen twice now, is: OpenSM's new tables send job
    # 4243 over the stray link, so its excess is "above" what 4243 should drive there, and names the job
    stray_link = cut.out_link(cut.node(stray[0]), stray[1])
    assert [(x["deviation"], x["link"], x["jobs"]) for x in first.alerts.raised] == [("above", stray_link, ["4243"])]
    second, _, _ = sweep_pair(cut, rerouted)
    raised = [x for x in second.alerts.raised if x["deviation"] == "down"]
    assert raised and any(f"{leaf} port {up}" in x["message"] and "4242" in x["message"] for x in raised)
    assert all(x["severity"] == "critical" for x in raised)
    # the re-routed traffic is where the new LFTs say: nothing else deviates but the stray link
    assert {d["kind"] for d in second.deviations} == {"down", "above"}


@pytest.mark.django_db(transaction=True)
def test_twin_in_the_runner_of_a_telemetry_fabric(ibsim, tmp_path):
    """The same on a telemetry-fed fabric run by its engine: jobs from a Slurm drop directory in the catalog,
    the jobs API and the frames; hotspots naming jobs; deviations in the API; the plan report and its alerts."""
    from django.core.cache import cache
    from rest_framework.test import APIClient

    from ibweb.fabrics.choices import FabricMode
    from ibweb.fabrics.models import Fabric
    from ibweb.live.engine.runner import FabricRunner
    from ibweb.live.feed.frame_store import newest_frame
    from ibweb.telemetry.models import CollectorConfig, Sweep
    from ibweb.telemetry.tasks import sweep_fabric
    from ibweb.twin import plans
    from ibweb.twin.choices import JobSourceKind
    from ibweb.twin.models import JobSource

    cache.clear()
    design = fat_tree(hosts=16, radix=8, speed="HDR")
    sim = ibsim(design, sim_host="gpu0001", tools=("perfquery", "iblinkinfo", "ibtracert"))
    osm = tmp_path / "osm"
    sim.run_opensm(["-o", "-D", "0x47"], cache_dir=osm)
    env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    row = Fabric.objects.create(name="Twin", slug="twin", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=row, environment=env, timeout_s=20.0, shard_size=8,
                                            stale_after_s=600.0, lfts_path=str(osm / "opensm-lfts.dump"))
    running_jobs_drop(tmp_path / "drop", time.time())
    source = JobSource.objects.create(fabric=row, kind=JobSourceKind.DIRECTORY, drop_dir=str(tmp_path / "drop"),
                                      accounts={"llm-pretrain": "acme"}, raise_after=2, clear_after=2)
    plans.upload(row, "design.net", sim.net_path.read_text())

    def sweep() -> Sweep:
        time.sleep(MIN_INTERVAL_S)  # issue 26: reads closer than this give no rate; a collector's interval is longer
        return Sweep.objects.get(pk=sweep_fabric.delay(config.pk).get())

    sweeper = Sweeper(sim, osm)
    sweep()
    runner = FabricRunner(row)
    asyncio.run(runner.start())
    f = runner.source.fabric
    from ibweb.twin import jobs as jobsvc

    jobsvc.poll(source)  # what the beat (or, embedded, the engine) does every interval
    rings = {"4242": [f.node(f"gpu{i:04d} HCA-1") for i in (1, 2, 9, 10)],
             "4243": [f.node(f"gpu{i:04d} HCA-1") for i in (3, 4, 5, 13)]}
    for _ in range(2):
        sweeper.drive(f, rings)
        sweep()
        asyncio.run(runner.tick())
    frame = newest_frame(row.pk)
    assert [j["id"] for j in frame["jobs"]] == ["4242", "4243"]
    assert [j["tenant"] for j in frame["jobs"]] == ["acme", "vision"] and all(j["active"] for j in frame["jobs"])
    assert {j["id"] for h in frame["hotspots"] for j in h["jobs"]} == {"4242", "4243"}
    assert frame["twin"]["jobs"] == 2 and frame["twin"]["plan"]["summary"] == "as planned"
    api = APIClient()
    from django.contrib.auth.models import User

    api.force_authenticate(User.objects.create_superuser("root", password="pw-root"))
    catalog = api.get("/api/fabrics/fabrics/twin/jobs/").json()["jobs"]  # the runner's record: as emulated fabrics
    assert [(j["id"], j["tenant"], sorted(j["hosts"])) for j in catalog] == [
        ("4242", "acme", sorted(rings["4242"])), ("4243", "vision", sorted(rings["4243"]))]
    assert all(j["links"] for j in catalog)
    twin_jobs = api.get("/api/twin/fabrics/twin/jobs/").json()["jobs"]
    assert [j["observed"]["collective"] for j in twin_jobs] == ["all_reduce", "all_reduce"]
    assert twin_jobs[0]["observed_gbps"] > twin_jobs[1]["observed_gbps"] > 0
    devs = api.get("/api/twin/fabrics/twin/expected/").json()["deviations"]
    assert devs == [], [(d["kind"], d["label"], d["expected_gbps"], d["observed_gbps"]) for d in devs]

    # --- a cable on 4242's path is cut and OpenSM routes around it: missing against the plan, down against expected
    used = sweeper.drive(f, rings)
    leaf, up = next((s, p) for s, p in sorted(used["4242"]) if s.startswith("leaf") and p > 4)
    sim.console(f'Unlink "{leaf}"[{up}]')
    sim.run_opensm(["-o", "-D", "0x47"], cache_dir=osm)
    sweep()
    asyncio.run(runner.tick())
    cut = runner.source.fabric
    assert cut.num_links == f.num_links - 1
    rings = {job: [cut.node(str(f.node_name[n])) for n in nodes] for job, nodes in rings.items()}
    for _ in range(2):
        sweeper.drive(cut, rings)
        sweep()
        asyncio.run(runner.tick())
    frame = newest_frame(row.pk)
    assert frame["twin"]["plan"]["counts"]["missing"] == 1
    (plan_alert,) = [a for a in frame["alerts"] if a["kind"] == "plan"]
    assert plan_alert["deviation"] == "missing" and plan_alert["a"] == f"{leaf} port {up}"
    down = [a for a in frame["alerts"] if a["kind"] == "twin" and a["deviation"] == "down"]
    assert any(a["a"] == f"{leaf} port {up}" for a in down)
    report = api.get("/api/twin/fabrics/twin/plan/").json()["report"]
    assert report["counts"]["missing"] == 1 and report["issues"][0]["planned"].startswith(f"{leaf} port {up}")
    counts = APIClient().get("/api/twin/fabrics/twin/plan/").json()["report"]  # anonymous with public read
    assert counts["counts"]["missing"] == 1 and "issues" not in counts
