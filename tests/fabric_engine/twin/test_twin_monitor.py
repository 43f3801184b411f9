"""The twin of one fabric kept tick to tick, and what-if from its live state (issue 17)."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

from fabric_engine.errors import FabricEngineError
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree, rail_optimized
from fabric_engine.twin import HostMap, SchedulerJob, Twin, live_what_if
from fabric_engine.twin.attribution import uplinks
from fabric_engine.twin.whatif import switch_cables


def hosts(*numbers: int) -> tuple[str, ...]:
    return tuple(f"gpu{n:04d}" for n in numbers)


def test_twin_reports_jobs_their_bandwidth_links_and_figures():
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    r = route(f)
    twin = Twin()
    twin.set_jobs([SchedulerJob("101", "llm", hosts(1, 2, 9, 10), name="pretrain", user="alice", start=10.0,
                                end=100.0),
                   SchedulerJob("102", "cv", hosts(3, 4, 77)),
                   SchedulerJob("103", "old", hosts(5, 6), end=5.0)])
    first = twin.evaluate(r, np.zeros(2 * f.num_links), 20.0, compared=False)
    assert [j["id"] for j in first.jobs] == ["101", "102"]  # 103 ended before t = 20
    assert first.problems[0]["job"] == "102" and "gpu0077" in first.problems[0]["message"]
    assert first.comparison is None and first.overlay()["code"] == [0] * (2 * f.num_links)
    # each host of job 101 sends 50 Gb/s on its uplink, job 102's 20 Gb/s
    rate = np.zeros(2 * f.num_links)
    rate[uplinks(f, first.traffic.jobs[0].nodes)] = 50.0
    rate[uplinks(f, first.traffic.jobs[1].nodes)] = 20.0
    report = twin.evaluate(r, rate, 21.0)
    a, b = report.jobs
    assert a["observed_gbps"] == 200.0 and b["observed_gbps"] == 40.0
    assert a["name"] == "pretrain" and a["user"] == "alice" and a["tenant"] == "llm" and a["ports"] == 4
    assert a["links"] == report.incidence[0].nnz > 0
    assert a["observed"] == {"collective": "all_reduce", "ranks": 4, "busbw_GBps": 6.25,
                             "algbw_GBps": pytest.approx(50 / 8 / 1.5, abs=1e-4)}
    assert a["emulated"]["busbw_GBps"] > 0 and a["activity"] == pytest.approx(200.0 / a["emulated_gbps"], abs=1e-4)
    # the feed's job entries look like an emulated fabric's
    states = [s.as_dict() for s in report.job_states]
    assert [s["id"] for s in states] == ["101", "102"] and states[0]["achieved_gbps"] == 200.0
    assert set(states[0]) >= {"tenant", "pattern", "hosts", "active", "demand_gbps", "limiting_links", "phase"}
    # the host uplinks carry only what the counters say; the links beyond them are below expected
    assert {d["kind"] for d in report.deviations} == {"below"}
    # hotspots on a telemetry fabric name the jobs on the link
    up = int(uplinks(f, first.traffic.jobs[0].nodes[:1])[0])
    named = report.name_hotspots([{"link": up, "util": 0.25}], rate)
    assert named == [{"link": up, "util": 0.25, "jobs": [{"id": "101", "gbps": 50.0}]}]


def test_twin_caches_the_model_until_the_jobs_or_the_routing_change():
    f = fat_tree(hosts=16, radix=8)
    r = route(f)
    twin = Twin()
    twin.set_jobs([SchedulerJob("1", "t", hosts(1, 9))])
    zero = np.zeros(2 * f.num_links)
    rep1 = twin.evaluate(r, zero, 0.0)
    rep2 = twin.evaluate(r, zero, 1.0)
    assert rep1.traffic is rep2.traffic and rep1.incidence is rep2.incidence
    assert not twin.set_jobs([SchedulerJob("1", "t", hosts(1, 9))])
    assert twin.set_jobs([SchedulerJob("1", "t", hosts(1, 10))])
    assert twin.evaluate(r, zero, 2.0).traffic is not rep2.traffic
    rep3 = twin.evaluate(route(f, "updn"), zero, 3.0)
    assert rep3.traffic.routing.engine == "updn"


def test_patterns_per_job_and_account():
    f = fat_tree(hosts=16, radix=8)
    twin = Twin(patterns={"moe": "all_to_all", "7": "tree_allreduce"})
    twin.set_jobs([SchedulerJob("7", "moe", hosts(1, 2, 9)), SchedulerJob("8", "moe", hosts(3, 4, 11)),
                   SchedulerJob("9", "x", hosts(5, 6))])
    rep = twin.evaluate(route(f), np.zeros(2 * f.num_links), 0.0, compared=False)
    assert [j["pattern"] for j in rep.jobs] == ["tree_allreduce", "all_to_all", "ring_allreduce"]
    assert rep.jobs[1]["observed"]["collective"] == "all_to_all"


def test_live_what_if_of_a_failed_switch_and_another_engine():
    f = rail_optimized(nodes=8, gpus_per_node=2, nodes_per_su=4, radix=16)
    r = route(f, "ftree")
    twin = Twin(HostMap("{host}-hca{rail}"))
    twin.set_jobs([SchedulerJob("1", "a", ("dgx0001", "dgx0002", "dgx0005", "dgx0006")),
                   SchedulerJob("2", "b", ("dgx0003", "dgx0007"))])
    rep = twin.evaluate(r, np.zeros(2 * f.num_links), 0.0, compared=False)
    known = twin.place(f, 0.0)[0]
    spine = next(str(f.node_name[n]) for n in f.switches if f.tier[n] == 2)
    cables = switch_cables(f, [spine])
    assert cables.size > 0 and all(spine in (f.node_name[f.a_node[c]], f.node_name[f.b_node[c]]) for c in cables)
    out = live_what_if(r, known, engine="ftree", failed_switches=[spine],
                       observed={j["id"]: j for j in rep.jobs})
    assert out["failed_cables"] == sorted(cables.tolist())
    assert [j["id"] for j in out["jobs"]] == ["1", "2"]
    assert all(j["slowdown"] is not None and j["slowdown"] >= 1.0 - 1e-9 for j in out["jobs"])
    assert out["baseline"]["engine"] == "ftree" and out["alternative"]["failed_cables"] == out["failed_cables"]
    other = live_what_if(r, known, engine="ftree", other_engine="minhop")
    assert other["alternative"]["engine"] == "minhop" and len(other["jobs"]) == 2
    with pytest.raises(FabricEngineError, match="fail a cable or a switch"):
        live_what_if(r, known, engine="ftree")
    with pytest.raises(FabricEngineError, match="not a switch"):
        switch_cables(f, ["dgx0001-hca1"])
    with pytest.raises(FabricEngineError, match="no switch"):
        switch_cables(f, ["nope"])


@pytest.mark.parametrize("module", ["hostlist", "slurm", "hostmap", "catalog", "attribution", "persistence",
                                    "collectives", "plan"])
def test_docstring_examples(module):
    mod = importlib.import_module(f"fabric_engine.twin.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_a_hot_link_is_not_given_to_a_job_whose_hosts_sent_nothing():
    """120 Gb/s on a switch link with the job on it idle: no job carries it, it is unattributed."""
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    r = route(f)
    twin = Twin()
    twin.set_jobs([SchedulerJob("101", "llm", hosts(1, 9))])
    first = twin.evaluate(r, np.zeros(2 * f.num_links), 20.0, compared=False)
    link = int(np.flatnonzero(first.incidence[0].toarray().ravel())[-1])
    rate = np.zeros(2 * f.num_links)
    rate[link] = 120.0  # the job's own uplinks carry nothing
    report = twin.evaluate(r, rate, 21.0)
    assert report.jobs[0]["observed_gbps"] == 0.0
    assert report.name_hotspots([{"link": link}], rate) == [{"link": link, "jobs": [], "unattributed_gbps": 120.0}]


def test_a_job_outside_its_time_window_is_listed_with_the_reason():
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    r = route(f)
    twin = Twin()
    ended = 1733223600.0  # 2024-12-03 11:00 UTC, as in the telemetry guide's example
    twin.set_jobs([SchedulerJob("4242", "acme", hosts(1, 2), end=ended),
                   SchedulerJob("4243", "acme", hosts(3, 4), state="COMPLETING", end=ended),
                   SchedulerJob("4244", "acme", hosts(5, 6), start=ended + 7200),
                   SchedulerJob("4245", "acme", hosts(7, 8))])
    report = twin.evaluate(r, np.zeros(2 * f.num_links), ended + 60, compared=False)
    assert [j["id"] for j in report.jobs] == ["4245"]
    why = {p["job"]: (p["reason"], p["message"]) for p in report.problems}
    assert why["4242"] == ("ended", "job 4242: not counted as running: its end time 2024-12-03 11:00 UTC has passed "
                                    "although the scheduler lists it as RUNNING (over its time limit, or the clocks "
                                    "of the scheduler and this server differ)")
    assert why["4243"] == ("ended", "job 4243: not counted as running: its end time 2024-12-03 11:00 UTC has passed")
    assert why["4244"] == ("not_started", "job 4244: not counted as running: it starts at 2024-12-03 13:00 UTC")
    assert "4245" not in why
