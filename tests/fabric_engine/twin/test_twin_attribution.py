"""Per-job attribution on a real fabric's LFTs (issue 17): the links of each job, its bandwidth, jobs on a link."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree, rail_optimized
from fabric_engine.twin import HostMap, SchedulerJob, place_jobs
from fabric_engine.twin.attribution import attribute_links, job_bandwidth, job_links, link_jobs, uplinks


def brute_force(routing, jobs) -> np.ndarray:
    """Union of the routed paths of every ordered pair within every rail of every job, dense ``(J, 2L)``."""
    f = routing.fabric
    out = np.zeros((len(jobs), 2 * f.num_links), dtype=bool)
    for k, rails in enumerate(jobs):
        for nodes in rails.values():
            src, dst = np.meshgrid(nodes, nodes, indexing="ij")
            keep = src != dst
            m = routing.paths(src[keep], dst[keep])
            out[k, np.unique(m.indices)] = True
    return out


@pytest.mark.parametrize("engine", ["minhop", "ftree", "updn"])
def test_job_links_equal_the_union_of_every_pair_path(engine):
    f = fat_tree(hosts=32, radix=8, speed="HDR")
    r = route(f, engine)
    rng = np.random.default_rng(3)
    jobs = [{1: rng.choice(f.hosts, size=n, replace=False)} for n in (2, 5, 9, 16)]
    jobs.append({1: f.hosts[:3]})  # shares hosts with nothing in particular; on one leaf
    inc = job_links(r, jobs, chunk=7)  # tiny chunks: the chunked union must equal the one-shot one
    assert inc.shape == (len(jobs), 2 * f.num_links)
    assert np.array_equal(inc.toarray() > 0, brute_force(r, jobs))
    assert np.array_equal(inc.toarray(), job_links(r, jobs).toarray())


def test_job_links_per_rail_stay_on_their_rail():
    f = rail_optimized(nodes=8, gpus_per_node=2, nodes_per_su=4, radix=16)
    r = route(f)
    index = HostMap("{host}-hca{rail}").index(f)
    known, _ = place_jobs([SchedulerJob("1", "a", ("dgx0001", "dgx0002", "dgx0006"))], index)
    inc = job_links(r, [k.rails for k in known])
    assert np.array_equal(inc.toarray() > 0, brute_force(r, [k.rails for k in known]))
    # the rail-1 HCAs' traffic never touches a rail-2 leaf
    rail2_leaves = [f.node("su01-leaf2"), f.node("su02-leaf2")]
    used = inc.indices
    rail1_hcas = known[0].rails[1]
    for d in used:
        src, dst = f.dl_src[d], f.dl_dst[d]
        if src in rail1_hcas or dst in rail1_hcas:
            assert src not in rail2_leaves and dst not in rail2_leaves


def test_a_single_host_job_uses_no_link_and_empty_jobs_work():
    f = fat_tree(hosts=8, radix=4)
    r = route(f)
    inc = job_links(r, [{1: f.hosts[:1]}, {}])
    assert inc.shape == (2, 2 * f.num_links) and inc.nnz == 0
    assert job_links(r, []).shape == (0, 2 * f.num_links)


def test_job_bandwidth_from_hca_uplinks_and_shared_hosts():
    f = fat_tree(hosts=8, radix=4)
    rate = np.zeros(2 * f.num_links)
    up = uplinks(f, f.hosts)
    rate[up] = np.arange(1, 9) * 10.0  # host i sends 10 (i+1) Gb/s
    rate[np.asarray(f.reverse(up))] = 5.0  # and receives 5
    jobs = [{1: f.hosts[:2]}, {1: f.hosts[1:4]}]  # host 1 is shared
    sent, received = job_bandwidth(f, jobs, rate)
    assert sent.tolist() == [10 + 20 / 2, 20 / 2 + 30 + 40]
    assert received.tolist() == [5 + 2.5, 2.5 + 5 + 5]
    w = sp.csr_matrix(([3.0, 1.0], ([0, 1], [f.hosts[1], f.hosts[1]])), shape=(2, f.num_nodes))
    sent_w, _ = job_bandwidth(f, jobs, rate, w)
    assert sent_w.tolist() == [10 + 20 * 0.75, 20 * 0.25 + 30 + 40]


def test_jobs_on_a_link_and_their_shares():
    f = fat_tree(hosts=16, radix=8)
    r = route(f)
    jobs = [{1: f.hosts[[0, 8]]}, {1: f.hosts[[1, 8]]}, {1: f.hosts[[2, 3]]}]
    inc = job_links(r, jobs)
    up0 = int(uplinks(f, f.hosts[[0]])[0])
    up2 = int(uplinks(f, f.hosts[[2]])[0])
    into8 = int(f.reverse(int(uplinks(f, f.hosts[[8]])[0])))  # both cross-leaf jobs send to host 8
    assert [x.tolist() for x in link_jobs(inc, [up0, up2, into8])] == [[0], [2], [0, 1]]
    rate = np.full(2 * f.num_links, 30.0)
    even = attribute_links(rate, [into8], inc)[0]
    assert sorted(k for k, _ in even) == [0, 1] and [g for _, g in even] == [15.0, 15.0]
    by_rate = attribute_links(rate, [into8], inc, job_gbps=np.array([10.0, 20.0, 0.0]))[0]
    assert by_rate == [(1, 20.0), (0, 10.0)]
    expected = sp.csr_matrix(([6.0, 2.0], ([0, 1], [up0, up0])), shape=(3, 2 * f.num_links))
    assert attribute_links(rate, [up0], inc, job_rates=expected)[0] == [(0, 30.0)]


def test_no_job_is_given_more_of_a_link_than_its_hosts_sent():
    f = fat_tree(hosts=16, radix=8)
    r = route(f)
    jobs = [{1: f.hosts[[0, 8]]}, {1: f.hosts[[1, 8]]}]
    inc = job_links(r, jobs)
    into8 = int(f.reverse(int(uplinks(f, f.hosts[[8]])[0])))
    rate = np.zeros(2 * f.num_links)
    rate[into8] = 120.0
    # job 0's hosts sent nothing: none of the 120 Gb/s is its; job 1 sent 50, so at most 50 is job 1's
    assert attribute_links(rate, [into8], inc, sent_gbps=np.array([0.0, 50.0]))[0] == [(1, 50.0), (0, 0.0)]
    # what one job cannot have carried goes to the other, up to what that one sent
    shares = attribute_links(rate, [into8], inc, job_gbps=np.array([3.0, 1.0]), sent_gbps=np.array([60.0, 100.0]))[0]
    assert shares == [(0, 60.0), (1, 60.0)]
    # caps that allow the proportional split leave it as it was
    assert attribute_links(rate, [into8], inc, job_gbps=np.array([3.0, 1.0]),
                           sent_gbps=np.array([500.0, 500.0]))[0] == [(0, 90.0), (1, 30.0)]
