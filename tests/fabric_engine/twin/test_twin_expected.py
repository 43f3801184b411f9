"""Expected against observed (issue 17): the emulation of known jobs, deviations, the persistence rule, nccl figures."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.routing import Routing, route
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin import DeviationTracker, HostMap, SchedulerJob, Thresholds, Twin, compare, emulate, place_jobs
from fabric_engine.twin.attribution import job_links, uplinks
from fabric_engine.twin.collectives import (
    COLLECTIVES,
    bus_factor,
    figures_from_rate,
    figures_from_time,
    wire_factor,
)
from fabric_engine.twin.expected import CODE_BELOW, CODE_OK, CODE_STALE, CODE_UNEXPLAINED, dead_ends
from fabric_engine.twin.persistence import alert_of
from ibweb.events.facts import fact_of


def hosts(*numbers: int) -> tuple[str, ...]:
    return tuple(f"gpu{n:04d}" for n in numbers)


@pytest.fixture
def setup():
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    r = route(f)
    jobs = [SchedulerJob("101", "llm", hosts(1, 2, 9, 10)), SchedulerJob("102", "cv", hosts(3, 4, 5, 13))]
    known, _ = place_jobs(jobs, HostMap().index(f))
    return f, r, known, job_links(r, [k.rails for k in known])


def test_observed_as_the_emulation_scaled_is_not_a_deviation(setup):
    f, r, known, inc = setup
    traffic = emulate(r, known)
    assert traffic.broken.tolist() == [0, 0] and (traffic.injection > 0).all()
    # the emulated rates are on the links each job can use, and only there
    assert ((traffic.rates.toarray() > 0) <= (inc.toarray() > 0)).all()
    obs = np.asarray(traffic.rates.T @ np.array([0.6, 0.25])).ravel()
    c = compare(traffic, obs, inc)
    assert np.allclose(c.activity, [0.6, 0.25])
    assert np.allclose(c.expected_gbps, obs) and c.deviations == []
    assert (c.code == CODE_OK).all()
    assert np.allclose(c.job_observed_gbps, traffic.injection * [0.6, 0.25])


def test_a_link_below_its_jobs_and_traffic_nobody_explains(setup):
    f, r, known, inc = setup
    traffic = emulate(r, known)
    obs = traffic.link_rate * 0.8
    job0_links = traffic.rates[0].indices
    inner = [int(d) for d in job0_links if f.kind[f.dl_src[d]] == 1 and f.kind[f.dl_dst[d]] == 1]
    starved = inner[0]
    obs[starved] = 0.0
    unused = int(np.flatnonzero(np.asarray(inc.sum(axis=0)).ravel() == 0)[0])
    obs[unused] = 120.0
    stale = np.zeros(len(obs), dtype=bool)
    quiet = inner[1]
    obs[quiet] = 0.0
    stale[quiet] = True  # no counters there: not compared
    c = compare(traffic, obs, inc, stale=stale)
    kinds = {(d["kind"], d["link"]) for d in c.deviations}
    assert kinds == {("below", starved), ("unexplained", unused)}
    below = next(d for d in c.deviations if d["kind"] == "below")
    assert "101" in below["jobs"] and below["observed_gbps"] == 0.0 and below["expected_gbps"] > 0
    assert below["label"].startswith(str(f.node_name[f.dl_src[starved]]))
    assert c.code[starved] == CODE_BELOW and c.code[unused] == CODE_UNEXPLAINED and c.code[quiet] == CODE_STALE
    assert [d["score"] for d in c.deviations] == sorted((d["score"] for d in c.deviations), reverse=True)


def test_small_differences_stay_under_the_thresholds(setup):
    f, r, known, inc = setup
    traffic = emulate(r, known)
    obs = traffic.link_rate * 0.5
    obs *= np.random.default_rng(1).uniform(0.8, 1.2, size=len(obs))
    obs[obs == 0] = 0.5  # noise below the 1 Gb/s floor
    assert compare(traffic, obs, inc).deviations == []
    strict = Thresholds(low_ratio=0.9, high_ratio=1.1)
    assert compare(traffic, obs, inc, thresholds=strict).deviations != []
    with pytest.raises(ValueError):
        Thresholds(low_ratio=1.2)


def test_lfts_into_a_dead_port_are_a_no_route_deviation(setup):
    f, r, known, inc = setup
    traffic = emulate(r, known)
    spine_hop = next(int(d) for d in traffic.rates[0].indices
                     if f.kind[f.dl_src[d]] == 1 and f.tier[f.dl_dst[d]] == 2)
    leaf, port = int(f.dl_src[spine_hop]), int(f.dl_src_port[spine_hop])
    cut = f.without_links([spine_hop % f.num_links])
    stale_lfts = Routing(cut, r.lft, "opensm-dump")  # the switches still forward as before the cable died
    node, out = dead_ends(stale_lfts, f.hosts[[0, 4]], f.hosts[[8, 5]])
    after = emulate(stale_lfts, known)
    assert after.broken[0] > 0 and (leaf, port, 0) in after.dead
    c = compare(after, np.zeros(2 * cut.num_links), job_links(stale_lfts, [k.rails for k in known]))
    dead = [d for d in c.deviations if d["kind"] == "no_route"]
    assert dead and "101" in dead[0]["jobs"] and f"port {port}" in dead[0]["label"]
    assert dead[0]["label"].startswith(str(f.node_name[leaf]))
    assert node.shape == out.shape == (2,)


def test_dead_ends_of_arriving_pairs_are_minus_one():
    f = fat_tree(hosts=8, radix=4)
    node, port = dead_ends(route(f), f.hosts[:4], f.hosts[4:])
    assert node.tolist() == [-1] * 4 and port.tolist() == [-1] * 4


# ----------------------------------------------------------------- persistence
def test_persistence_raises_after_n_and_clears_after_m():
    t = DeviationTracker(raise_after=3, clear_after=2)
    dev = {"kind": "below", "key": "0x1/3", "label": "leaf01 port 3", "expected_gbps": 80.0, "observed_gbps": 1.0,
           "jobs": ["7"]}
    raised = [len(t.update([dev], float(i)).raised) for i in range(5)]
    assert raised == [0, 0, 1, 0, 0]
    up = t.update([], 5.0)
    assert up.cleared == [] and len(up.active) == 1  # one clean comparison is not enough
    up = t.update([], 6.0)
    assert len(up.cleared) == 1 and up.cleared[0]["state"] == "cleared" and up.active == []
    assert up.cleared[0]["since"] == 0.0
    # an interrupted streak starts again
    assert [len(t.update([dev] if i != 1 else [], float(i)).raised) for i in range(4)] == [0, 0, 0, 0]
    assert len(t.update([dev], 9.0).raised) == 1


def test_alert_text_names_the_link_figures_and_jobs():
    t = DeviationTracker(raise_after=1)
    dev = {"kind": "unexplained", "key": "0x2/1", "label": "spine01 port 1 -> leaf02 port 5", "expected_gbps": 0.0,
           "observed_gbps": 120.0, "jobs": []}
    (alert,) = t.update([dev], 1.0).raised
    assert alert["kind"] == "twin" and alert["deviation"] == "unexplained" and alert["severity"] == "warning"
    assert alert["message"] == ("spine01 port 1 -> leaf02 port 5 carries traffic no known job explains "
                                "(expected 0 Gb/s, observed 120 Gb/s)")


def test_a_loaded_link_that_vanishes_is_down_while_its_jobs_run():
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    r = route(f)
    twin = Twin(raise_after=2, clear_after=1)
    twin.set_jobs([SchedulerJob("101", "llm", hosts(1, 2, 9, 10)), SchedulerJob("102", "cv", hosts(3, 4))])
    report = twin.evaluate(r, np.zeros(2 * f.num_links), 0.0, compared=False)
    obs = report.traffic.link_rate * 0.5
    for t in range(3):
        assert twin.evaluate(r, obs, float(t)).deviations == []
    spine_hop = next(int(d) for d in report.traffic.rates[0].indices
                     if f.kind[f.dl_src[d]] == 1 and f.tier[f.dl_dst[d]] == 2)
    label = f"{f.node_name[f.dl_src[spine_hop]]} port {int(f.dl_src_port[spine_hop])} ->"
    g = f.without_links([spine_hop % f.num_links])
    rg = route(g)  # the subnet manager routed around it
    emu = emulate(rg, twin.place(g, 3.0)[0])
    first = twin.evaluate(rg, emu.link_rate * 0.5, 3.0)
    down = [d for d in first.deviations if d["kind"] == "down"]
    assert len(down) == 2 and any(d["label"].startswith(label) for d in down)
    assert all(d["jobs"] == ["101"] for d in down)
    assert first.alerts.raised == []
    second = twin.evaluate(rg, emu.link_rate * 0.5, 4.0)
    assert {a["deviation"] for a in second.alerts.raised} == {"down"}
    assert all(a["severity"] == "critical" for a in second.alerts.raised)
    # job 101 ends: nothing expected the link any more, the alert clears
    twin.set_jobs([SchedulerJob("102", "cv", hosts(3, 4))])
    third = twin.evaluate(rg, emulate(rg, twin.place(g, 5.0)[0]).link_rate * 0.5, 5.0)
    assert not [d for d in third.deviations if d["kind"] == "down"]
    assert {a["deviation"] for a in third.alerts.cleared} == {"down"}


# ------------------------------------------------------------ nccl-tests figures
@pytest.mark.parametrize("n", [2, 3, 8, 64, 1024])
def test_bus_factors_are_nccl_tests_definitions(n):
    # nccl-tests doc/PERFORMANCE.md, "Summary"
    assert bus_factor("all_reduce", n) == pytest.approx(2 * (n - 1) / n)
    assert bus_factor("all_reduce_in_network", n) == pytest.approx((n - 1) / (n + 1))
    for name in ("reduce_scatter", "all_gather", "all_to_all"):
        assert bus_factor(name, n) == pytest.approx((n - 1) / n)
    for name in ("broadcast", "reduce", "sendrecv"):
        assert bus_factor(name, n) == 1.0
    assert set(COLLECTIVES) >= {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}


def test_algbw_and_busbw_from_time_and_from_rate():
    # algbw = S / t in GB/s; 8 GB all-reduced by 8 ranks in 1 s: algbw 8, busbw 8 * 2 * 7 / 8 = 14
    assert figures_from_time("all_reduce", 8, nbytes=8e9, seconds=1.0) == {
        "collective": "all_reduce", "ranks": 8, "algbw_GBps": 8.0, "busbw_GBps": 14.0}
    # a rank of a ring all-reduce that sends 400 Gb/s: busbw is its link rate, 50 GB/s
    r = figures_from_rate("all_reduce", 16, rank_gbps=400.0)
    assert r["busbw_GBps"] == pytest.approx(50.0)
    assert r["algbw_GBps"] == pytest.approx(50.0 / (2 * 15 / 16), abs=1e-4)
    # in-network reduction: each rank sends its buffer once, algbw = rate, busbw = algbw (n-1)/(n+1)
    s = figures_from_rate("all_reduce_in_network", 16, rank_gbps=400.0)
    assert s["algbw_GBps"] == 50.0 and s["busbw_GBps"] == pytest.approx(50.0 * 15 / 17, abs=1e-4)
    assert wire_factor("all_gather", 4) == 0.75
    with pytest.raises(ValueError):
        bus_factor("gossip", 4)


def test_emulated_ring_allreduce_busbw_is_the_link_rate():
    # nccl-tests: busbw of an all-reduce reflects the hardware bottleneck; four hosts on one leaf, HDR 4x = 200 Gb/s
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    r = route(f)
    known, _ = place_jobs([SchedulerJob("1", "t", hosts(1, 2, 3, 4))], HostMap().index(f))
    traffic = emulate(r, known)
    fig = figures_from_time("all_reduce", 4, nbytes=1e9, seconds=float(traffic.comm_s[0]))
    assert fig["busbw_GBps"] == pytest.approx(200 / 8)
    assert traffic.injection[0] == pytest.approx(4 * 200.0)
    assert (uplinks(f, known[0].nodes) >= 0).all()


def test_more_than_its_job_drives_on_a_job_link_is_above_expected_and_names_the_job(setup):
    f, r, known, inc = setup
    traffic = emulate(r, known)
    obs = traffic.link_rate * 0.8
    job1_only = [int(d) for d in traffic.rates[1].indices if d not in set(traffic.rates[0].indices.tolist())
                 and f.kind[f.dl_src[d]] == 1 and f.kind[f.dl_dst[d]] == 1]
    hot = job1_only[0]
    obs[hot] = obs[hot] * 1.5 + 60.0  # well above what job 102 should drive there
    c = compare(traffic, obs, inc)
    [dev] = c.deviations
    assert (dev["kind"], dev["link"], dev["jobs"]) == ("above", hot, ["102"])
    assert c.code[hot] == CODE_UNEXPLAINED  # the map's overlay colours both the same
    alert = alert_of(dev)
    assert "above expected" in alert["message"] and "no known job" not in alert["message"]
    fact = fact_of(alert, {"101": "acme", "102": "globex"})
    assert (fact.job, fact.tenant) == ("102", "globex")


def test_an_excess_that_turns_from_unexplained_to_above_is_one_deviation():
    t = DeviationTracker(raise_after=2, clear_after=1)
    dev = {"key": "0x2/1", "label": "spine01 port 1 -> leaf02 port 5", "expected_gbps": 0.0, "observed_gbps": 90.0}
    assert t.update([{**dev, "kind": "unexplained"}], t=0.0).raised == []
    # a re-route puts a known job on the link: the same excess, now above what that job should drive
    [alert] = t.update([{**dev, "kind": "above", "expected_gbps": 10.0, "jobs": ["4243"]}], t=1.0).raised
    assert (alert["deviation"], alert["jobs"], alert["since"]) == ("above", ["4243"], 0.0)
    assert "above expected" in alert["message"]


def test_expected_values_come_from_the_fabrics_congestion_model():
    from fabric_engine.errors import FabricEngineError

    f = fat_tree(hosts=16, radix=8, speed="HDR")
    r = route(f, "ftree")
    jobs = [SchedulerJob("101", "llm", hosts(1, 2, 6, 7, 8, 10, 12, 14)), SchedulerJob("102", "cv", hosts(5, 9))]
    known, _ = place_jobs(jobs, HostMap().index(f), patterns={"101": "all_to_all"})
    ideal, credit = emulate(r, known), emulate(r, known, "credit")
    # the all-to-all and the ring share leaf uplinks: with credits the switch arbiters share among input ports,
    # not flows, and the small job's collective is faster than max-min's fair share gives it
    assert credit.comm_s[1] < 0.9 * ideal.comm_s[1]
    assert credit.injection[1] > 1.1 * ideal.injection[1]
    twin = Twin(congestion="credit")
    _, traffic = twin.model(r, known)
    np.testing.assert_allclose(traffic.comm_s, credit.comm_s)
    with pytest.raises(FabricEngineError, match="congestion: 'fluid'"):
        emulate(r, known, "fluid")
