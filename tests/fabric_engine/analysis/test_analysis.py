"""Effective bisection bandwidth, pair patterns, what-if comparisons and the eBB command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fabric_engine import formats
from fabric_engine.analysis import (
    bisection_pairs,
    effective_bisection_bandwidth,
    link_map,
    pattern_bandwidth,
    permutation_pairs,
    shift_pairs,
    what_if,
)
from fabric_engine.analysis.cli import main
from fabric_engine.errors import FabricEngineError
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree
from fabric_engine.workload import Job

GB = 1e9


@pytest.fixture(scope="module")
def ft64():
    return fat_tree(hosts=64, radix=16)  # 8 leaves x 8 hosts, 8 spines: full bisection


def test_bisection_pairs_are_perfect_matchings_both_ways():
    s, d = bisection_pairs(np.arange(10, 20), 5, np.random.default_rng(1))
    assert s.shape == d.shape == (5, 10)
    for p in range(5):
        assert sorted(s[p]) == list(range(10, 20)) and sorted(d[p]) == list(range(10, 20))
        pairs = set(zip(s[p].tolist(), d[p].tolist(), strict=True))
        assert all((b, a) in pairs for a, b in pairs) and all(a != b for a, b in pairs)


def test_permutation_and_shift_pairs():
    s, d = permutation_pairs(np.arange(7), 20, np.random.default_rng(2))
    assert not (s == d).any() and all(sorted(row) == list(range(7)) for row in d)
    s, d = shift_pairs(np.array([3, 4, 5, 6]), [1, 2])
    assert d.tolist() == [[4, 5, 6, 3], [5, 6, 3, 4]]
    with pytest.raises(FabricEngineError, match="multiple"):
        shift_pairs(np.arange(4), [4])


def test_hand_computed_pattern_bandwidth(ft64):
    r = route(ft64)
    h = ft64.hosts
    # Pairs inside one leaf never leave the leaf: full bandwidth.
    bw = pattern_bandwidth(r, h[None, :4], h[None, [1, 0, 3, 2]])
    assert bw.tolist() == [[1.0, 1.0, 1.0, 1.0]]
    # Three hosts of leaf 1 all send to one host of leaf 2: its down-link is shared three ways.
    bw = pattern_bandwidth(r, h[None, 0:3], h[None, [8, 8, 8]])
    np.testing.assert_allclose(bw, 1 / 3)
    mm = pattern_bandwidth(r, h[None, 0:3], h[None, [8, 8, 8]], method="maxmin")
    np.testing.assert_allclose(mm, 1 / 3)


def test_ebb_of_a_crossbar_is_one():
    f = fat_tree(hosts=8, radix=16)  # one leaf holds every host
    assert effective_bisection_bandwidth(route(f), 20, 1).ebb == 1.0


def test_ebb_static_routing_below_full_and_oversubscription_lower(ft64):
    full = effective_bisection_bandwidth(route(ft64), 200, 1)
    assert 0.4 < full.ebb < 1.0 and len(full.per_pattern) == 200
    thin = effective_bisection_bandwidth(route(fat_tree(hosts=64, radix=16, oversubscription=3)), 200, 1)
    assert thin.ebb < full.ebb and thin.ebb <= 0.5
    again = effective_bisection_bandwidth(route(ft64), 200, 1)
    assert again.ebb == full.ebb  # seeded
    assert set(full.as_dict()) >= {"ebb", "patterns", "hosts", "method", "min", "max", "std"}


def test_maxmin_variant_never_below_count(ft64):
    r = route(ft64)
    s, d = bisection_pairs(ft64.hosts, 20, np.random.default_rng(4))
    count = pattern_bandwidth(r, s, d, "count")
    mm = pattern_bandwidth(r, s, d, "maxmin")
    assert (mm >= count - 1e-12).all() and (mm <= 1 + 1e-12).all()


def test_progress_and_patterns(ft64):
    seen = []
    res = effective_bisection_bandwidth(route(ft64), 25, 1, pattern="permutation", batch=10, progress=seen.append)
    assert seen == [0.4, 0.8, 1.0] and res.pattern == "permutation"
    assert effective_bisection_bandwidth(route(ft64), 5, 1, pattern="shift").patterns == 5
    with pytest.raises(FabricEngineError, match="method"):
        effective_bisection_bandwidth(route(ft64), 5, 1, method="nope")


def test_link_map(ft64):
    m = link_map(ft64, [0, 5])
    assert len(m) == 2 * (ft64.num_links - 2) and not np.isin([0, 5, ft64.num_links, ft64.num_links + 5], m).any()
    g = ft64.without_links([0, 5])
    assert (g.dl_src == ft64.dl_src[m]).all() and (g.dl_dst == ft64.dl_dst[m]).all()


def test_what_if_failed_spine_slows_cross_leaf_jobs(ft64):
    h = ft64.hosts
    jobs = [Job("cross", "t", h[::8], buffer_bytes=GB), Job("local", "t", h[1:4], buffer_bytes=GB)]
    spine = int(np.flatnonzero(ft64.tier == 2)[0])
    failed = np.flatnonzero((ft64.a_node == spine) | (ft64.b_node == spine))
    w = what_if(ft64, jobs, failed_cables=failed)
    base = {j["id"]: j for j in w.baseline.jobs}
    alt = {j["id"]: j for j in w.alternative.jobs}
    assert base["local"]["slowdown"] == alt["local"]["slowdown"] == 1.0
    assert alt["cross"]["comm_s"] >= base["cross"]["comm_s"]
    dead = np.concatenate([failed, failed + ft64.num_links])
    assert (w.alternative.rate_gbps[dead] == 0).all()
    assert w.alternative.unrouted_flows == 0
    json.dumps(w.as_dict(), allow_nan=False)
    same = what_if(ft64, jobs, other_engine="minhop")
    assert [d["comm_ratio"] for d in same.delta] == [1.0, 1.0]


def test_what_if_cut_off_host_reports_unrouted_flows(ft64):
    h = ft64.hosts
    cable = int(np.flatnonzero(ft64.b_node == h[0])[0])
    w = what_if(ft64, [Job("j", "t", h[:4], buffer_bytes=GB)], failed_cables=[cable], ebb_patterns=10)
    assert w.alternative.unrouted_flows == 2 and w.alternative.jobs[0]["comm_s"] is None
    assert w.baseline.ebb is not None and w.alternative.ebb < w.baseline.ebb
    with pytest.raises(FabricEngineError, match="outside"):
        what_if(ft64, [], failed_cables=[10_000])


def test_cli_prints_ebb_json(tmp_path, capsys, ft64):
    path = tmp_path / "ft.json"
    path.write_text(formats.write(ft64, "json"))
    assert main(["ebb", str(path), "--patterns", "30", "--seed", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["patterns"] == 30 and out["hosts"] == 64
    assert out["ebb"] == pytest.approx(effective_bisection_bandwidth(route(ft64), 30, 1).ebb, abs=1e-6)
    assert main(["ebb", str(path), "--lfts", str(tmp_path / "missing.dump")]) == 2


def test_ebb_registers_with_the_fabric_engine_cli(tmp_path, capsys, ft64):
    import fabric_engine.analysis.cli  # noqa: F401  (registers the command)
    from fabric_engine import cli

    path = tmp_path / "ft.json"
    path.write_text(formats.write(ft64, "json"))
    assert "ebb" in cli.COMMANDS
    assert cli.COMMANDS["ebb"].run(cli.build_parser().parse_args(["ebb", str(path), "--patterns", "5"])) == 0
    assert json.loads(capsys.readouterr().out)["patterns"] == 5


EBB = {"patterns": 20, "seed": 1, "method": "count", "pattern": "bisection"}
SCENARIO = {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8},
            "jobs": [{"name": "a", "tenant": "t", "hosts": 8, "placement": "scattered"}]}


def test_run_analysis_uses_the_routing_it_is_given_and_routes_its_fabric_for_another_engine(monkeypatch):
    from fabric_engine.analysis import run as run_module
    from fabric_engine.analysis import run_analysis

    given = route(fat_tree(hosts=16, radix=8, name="the record's"), "updn")
    built = []
    monkeypatch.setattr("fabric_engine.scenario.build_fabric", lambda spec: built.append(spec))
    routed = []
    monkeypatch.setattr(run_module, "route", lambda f, engine: routed.append((f, engine)) or route(f, engine))
    same = run_analysis("ebb", EBB, SCENARIO, routing=given, jobs=[])
    assert same["engine"] == "updn" and same["patterns"] == 20 and routed == [] and same["adaptive"] is False
    other = run_analysis("ebb", {**EBB, "engine": "minhop"}, SCENARIO, routing=given, jobs=[])
    assert other["engine"] == "minhop" and routed == [(given.fabric, "minhop")] and built == []  # the record's fabric


def test_run_analysis_builds_the_scenario_without_a_routing_and_names_the_field_it_cannot_answer():
    from fabric_engine.analysis import AnalysisInputError, run_analysis

    out = run_analysis("whatif_links", {"failed_cables": [0], "ebb_patterns": 0, "seed": 1}, SCENARIO)
    assert out["summary"]["jobs"] == 1
    given = route(fat_tree(hosts=16, radix=8), "minhop")
    with pytest.raises(AnalysisInputError) as err:
        run_analysis("whatif_engine", {"engine": "updn", "ebb_patterns": 0, "seed": 1}, SCENARIO, routing=given,
                     jobs=[])
    assert err.value.field == "ebb_patterns"
    with pytest.raises(AnalysisInputError, match="RoCEv2") as err:
        run_analysis("whatif_roce", {"qps": 1, "seed": 1, "same_seed": False}, SCENARIO, routing=given, jobs=[])
    assert err.value.field == "kind" and isinstance(err.value, FabricEngineError)
    with pytest.raises(AnalysisInputError, match="whatif_live"):
        run_analysis("whatif_live", {}, SCENARIO)
