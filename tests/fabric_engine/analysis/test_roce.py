"""RoCEv2 ECMP model against the balls-into-bins expectation of uniform hashing, and the comparison (issue 16).

Uniform hashing of ``n`` flows over ``m`` equal-cost ports is ``n`` balls thrown into ``m`` bins
(Mitzenmacher, "The Power of Two Choices in Randomized Load Balancing", 2001): each port's count is
Binomial(n, 1/m), the expected number of empty ports is ``m (1 - 1/m)^n``, two flows collide with
probability ``1/m`` and the expected maximum load follows from ``P(max <= k) = n!/m^n [x^n] (sum_{j<=k}
x^j/j!)^m``. The model's first hop out of a leaf is checked against these over thousands of
independent hashings (one QP index each).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fabric_engine.analysis.roce import EcmpModel, compare, flow_keys, mix64
from fabric_engine.errors import FabricEngineError
from fabric_engine.scenario import _jobs
from fabric_engine.topology.generate import fat_tree

TRIALS = 4000


def first_hop_counts(n_flows: int, trials: int = TRIALS, seed: int = 7) -> tuple[np.ndarray, int]:
    """Flows per uplink of leaf 0, ``[trials, m]``: ``n_flows`` flows to other leaves, one hashing per trial."""
    f = fat_tree(hosts=128, radix=16)  # 16 leaves of 8 hosts, 8 spines: m = 8 uplinks per leaf
    model = EcmpModel(f, qps=1, seed=seed)
    leaf = f.switch_index[f.host_leaf[f.hosts]]
    src_hosts = f.hosts[leaf == leaf[0]]
    dst_hosts = f.hosts[leaf != leaf[0]]
    src = np.resize(src_hosts, n_flows)
    dst = dst_hosts[:n_flows]
    s_sw = np.full(n_flows * trials, leaf[0])
    d_sw = np.tile(f.switch_index[f.host_leaf[dst]], trials)
    keys = flow_keys(np.tile(src, trials), np.tile(dst, trials), np.repeat(np.arange(trials), n_flows), seed)
    rows, links = model.qp_walk(s_sw, d_sw, keys)  # hop-major: the first hops of all QPs come first
    first = np.zeros(len(rows), dtype=bool)
    first[np.unique(rows, return_index=True)[1]] = True  # the first link of every QP leaves the source leaf
    up = links[first]
    ports = np.unique(up)
    m = len(ports)
    trial = rows[first] // n_flows
    counts = np.zeros((trials, m), dtype=np.int64)
    np.add.at(counts, (trial, np.searchsorted(ports, up)), 1)
    return counts, m


def expected_max_load(n: int, m: int) -> float:
    """E[max bin load] of n balls in m bins, exactly (polynomial coefficients)."""
    e = 0.0
    for k in range(n + 1):
        poly = np.array([1.0 / math.factorial(j) for j in range(k + 1)])
        acc = np.array([1.0])
        for _ in range(m):
            acc = np.convolve(acc, poly)[: n + 1]
        p_le = (acc[n] if len(acc) > n else 0.0) * math.factorial(n) / m**n
        e += 1.0 - p_le  # E[max] = sum_k P(max > k)
    return e


def test_mix_is_a_bijection_with_avalanche():
    x = np.arange(1 << 16, dtype=np.uint64)
    assert len(np.unique(mix64(x))) == len(x)
    flipped = mix64(x ^ np.uint64(1)) ^ mix64(x)
    bits = np.unpackbits(flipped.view(np.uint8)).reshape(len(x), 64).sum(axis=1)
    assert abs(bits.mean() - 32) < 0.5  # one input bit flips half the output bits


def test_flows_per_port_are_binomial():
    n = 8
    counts, m = first_hop_counts(n)
    assert m == 8 and (counts.sum(axis=1) == n).all()
    observed = np.bincount(counts.ravel(), minlength=n + 1)
    expected = stats.binom.pmf(np.arange(n + 1), n, 1 / m) * counts.size
    keep = expected >= 5  # chi-square needs 5 expected per cell: pool the tail
    obs = np.r_[observed[keep], observed[~keep].sum()]
    exp = np.r_[expected[keep], expected[~keep].sum()]
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3


def test_empty_ports_collisions_and_max_load_match_balls_into_bins():
    n = 8
    counts, m = first_hop_counts(n)
    empty = (counts == 0).sum(axis=1).mean()
    assert empty == pytest.approx(m * (1 - 1 / m) ** n, rel=0.03)
    # two given flows share a port with probability 1/m
    pairs, _ = first_hop_counts(2)
    assert (pairs.max(axis=1) == 2).mean() == pytest.approx(1 / m, abs=3 * math.sqrt((1 / m) * (1 - 1 / m) / TRIALS))
    assert counts.max(axis=1).mean() == pytest.approx(expected_max_load(n, m), rel=0.03)
    # ideal (LFT) spreading puts one flow per port; hashing collides about n / e flows of them
    collisions = (n - (counts > 0).sum(axis=1)).mean()
    assert collisions == pytest.approx(n - m * (1 - (1 - 1 / m) ** n), rel=0.05)


def test_one_seed_on_every_switch_polarizes_a_three_level_tree():
    f = fat_tree(hosts=128, radix=8, levels=3)
    leaf = f.switch_index[f.host_leaf[f.hosts]]
    src = np.repeat(f.hosts[leaf == leaf[0]], 32)
    far = f.hosts[f.group[f.hosts] != f.group[f.hosts[0]]] if f.group is not None else f.hosts[-64:]
    dst = np.resize(far, len(src))
    used = {}
    for same in (False, True):
        counts = EcmpModel(f, qps=1, seed=3, same_seed=same).qp_link_counts(src, dst)
        core = (f.tier[f.dl_src] == 2) & (f.tier[f.dl_dst] == 3)
        used[same] = int((counts[core] > 0).sum())
    assert used[True] < used[False]  # the aggregation layer repeats the leaf's choice


def test_compare_three_sides_on_the_same_jobs():
    f = fat_tree(hosts=128, radix=16)
    jobs = _jobs(f, [{"name": f"j{i}", "tenant": "t", "hosts": 32, "placement": "scattered",
                      "pattern": "ring_allreduce"} for i in range(2)])
    one = compare(f, jobs, engine="ftree", qps=1, seed=2).as_dict()
    many = compare(f, jobs, engine="ftree", qps=16, seed=2).as_dict()
    kinds = [s["kind"] for s in one["sides"]]
    assert kinds == ["lft", "adaptive", "ecmp"]
    lft, ar, ecmp = one["sides"]
    assert lft["collisions"] == 0 and lft["max_flows_on_link"] == 1  # D-mod-k: these rings never share a link
    assert ar["collisions"] is None and ar["imbalance"] == pytest.approx(1.0)  # split evenly over every minimal hop
    assert ecmp["collisions"] > 0 and ecmp["max_flows_on_link"] >= 2 and ecmp["imbalance"] > lft["imbalance"]
    assert many["sides"][2]["imbalance"] < ecmp["imbalance"]  # more QPs, more entropy, better spread
    for job in one["summary"]:
        assert job["vs_lft"][0] == 1.0 and job["vs_lft"][2] >= 1.0
    assert one["params"]["qps"] == 1 and many["params"]["qps"] == 16


def test_qps_are_checked():
    f = fat_tree(hosts=16, radix=8)
    for bad in (0, 129, 1.5, True):
        with pytest.raises(FabricEngineError, match="qps"):
            EcmpModel(f, qps=bad)


def test_cli_prints_the_three_sides(tmp_path, capsys):
    import json

    from fabric_engine import formats
    from fabric_engine.cli import main

    path = tmp_path / "ft.json"
    path.write_text(formats.write(fat_tree(hosts=64, radix=16), "json"))
    assert main(["roce", str(path), "--jobs", "2", "--job-hosts", "16", "--qps", "2", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["kind"] for s in out["sides"]] == ["lft", "adaptive", "ecmp"] and out["params"]["qps"] == 2
    assert main(["roce", str(path), "--jobs", "1", "--job-hosts", "8", "--qps", "0", "--quiet"]) == 2
    assert "qps must be an integer in 1..128" in capsys.readouterr().err
