"""Jobs a down hit (fabric_engine.health.down_jobs with the tracker's tags), and the downs counted for /metrics."""

from __future__ import annotations

import numpy as np

from fabric_engine.health.down_jobs import DownJobs
from fabric_engine.health.downs import DownsConfig, DownTracker
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin.attribution import job_links


def _fabric_and_catalog():
    f = fat_tree(hosts=8, radix=4)
    r = route(f)
    hosts = np.asarray(f.hosts)
    rails = [{1: hosts[[0, 7]]}, {1: hosts[[2, 3]]}]  # across the spines; within one leaf
    inc = job_links(r, rails)  # the twin's attribution: the links each job's routes can use
    catalog = [{"id": jid, "tenant": tenant, "hosts": rail[1].tolist(), "links": inc[k].indices.tolist()}
               for k, (jid, tenant, rail) in enumerate(zip(("a1", "b1"), ("acme", "globex"), rails, strict=True))]
    return f, catalog, inc


def _ports(f):
    """Every cabled port end of ``f`` once: (guid, port)."""
    return np.asarray(f.guid, np.uint64)[f.dl_src], np.asarray(f.dl_src_port, np.int64)


def _end(f, d: int) -> tuple[int, int]:
    return int(f.guid[f.dl_src[d]]), int(f.dl_src_port[d])


def test_a_down_keeps_the_jobs_on_its_link_at_that_moment():
    f, catalog, inc = _fabric_and_catalog()
    jobs = DownJobs()
    jobs.set_catalog(f, catalog)
    tr = DownTracker()
    guid, port = _ports(f)
    up = np.ones(guid.size, np.int8)
    tr.observe(0.0, guid, port, up, tag=lambda i: jobs.tag(guid[i], port[i]))
    switch_link = next(int(d) for d in inc[0].indices if f.kind[f.dl_src[d]] == 1 and f.kind[f.dl_dst[d]] == 1)
    assert not np.isin([switch_link, f.reverse(switch_link)], inc[1].indices).any()  # job b stays on its leaf
    free = np.flatnonzero(np.asarray(inc.sum(axis=0)).ravel() == 0)
    idle = int(free[0])
    b_host = int(catalog[1]["hosts"][0])  # a host of b: its port, whether or not a route crosses it
    down = {_end(f, switch_link), _end(f, idle), (int(f.guid[b_host]), 1)}
    mask = np.array([(int(g), int(p)) in down for g, p in zip(guid, port, strict=True)])
    assert mask.sum() == 3
    tr.observe(1.0, guid, port, np.where(mask, 0, 1), tag=lambda i: jobs.tag(guid[i], port[i]))
    jobs.set_catalog(f, [])  # the jobs end: what the episodes keep is what was on the links as they went down
    tr.observe(10.0, guid, port, up, tag=lambda i: jobs.tag(guid[i], port[i]))
    e = tr.episodes()
    got = {(int(g), int(p)): [j["id"] for j in js]
           for g, p, js in zip(e["guid"], e["port"], jobs.jobs(e["tag"]), strict=True)}
    assert got == {_end(f, switch_link): ["a1"], _end(f, idle): [], (int(f.guid[b_host]), 1): ["b1"]}
    assert jobs.jobs(e["tag"][e["tag"] >= 0])[0][0]["tenant"] in ("acme", "globex")
    # the reverse direction of a link a job uses is the same cable: its far end too
    far = (int(f.guid[f.dl_dst[switch_link]]), int(f.dl_dst_port[switch_link]))
    jobs.set_catalog(f, catalog)
    assert jobs.jobs(jobs.tag(np.array([far[0]], np.uint64), np.array([far[1]])))[0][0]["id"] == "a1"


def test_compacting_the_job_sets_keeps_those_of_kept_episodes():
    f, catalog, inc = _fabric_and_catalog()
    jobs = DownJobs()
    jobs.set_catalog(f, catalog)
    tr = DownTracker(DownsConfig(max_episodes=1))
    g, p = _end(f, int(inc[0].indices[0]))
    one = (np.array([g], np.uint64), np.array([p]))
    for k in range(4):  # four downs of one port: the tracker keeps the newest episode only
        tr.observe(2.0 * k, *one, np.array([1]), tag=lambda i: jobs.tag(one[0][i], one[1][i]))
        tr.observe(2.0 * k + 1, *one, np.array([0]), tag=lambda i: jobs.tag(one[0][i], one[1][i]))
    tr.observe(9.0, *one, np.array([1]))
    assert len(jobs) == 4
    tr.retag(*jobs.compact(tr.episodes()["tag"]))
    e = tr.episodes()
    assert len(jobs) == 1 and e["tag"].tolist() == [0] and [j["id"] for j in jobs.jobs(e["tag"])[0]] == ["a1"]


def test_downs_total_counts_every_down_and_never_falls():
    tr = DownTracker(DownsConfig(max_episodes=1))
    g, p = np.array([0xA, 0xB], np.uint64), np.array([1, 1])
    tr.observe(0, g, p, np.array([1, 1]), np.array([0.0, 0.0]))
    tr.observe(10, g, p, np.array([1, 0]), np.array([3.0, 1.0]))  # A: 3 downs only the counter saw; B: down
    assert tr.status()["downs_total"].tolist() == [3, 1]
    tr.observe(20, g, p, np.array([1, 1]), np.array([3.0, 4.0]))  # B back: its counter rose by 4 over the down
    assert tr.status()["downs_total"].tolist() == [3, 4]
    for k in range(3):  # more downs of A than the tracker keeps episodes of
        tr.observe(30 + 2 * k, g, p, np.array([0, 1]), np.array([np.nan, 4.0]))
        tr.observe(31 + 2 * k, g, p, np.array([1, 1]), np.array([np.nan, 4.0]))
    assert tr.status()["downs_total"].tolist() == [6, 4]
    assert tr.status()["downs_24h"].tolist()[0] < 6  # the windows forget; the counter does not
