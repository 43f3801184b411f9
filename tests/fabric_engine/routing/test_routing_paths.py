"""Routing paths: static, adaptive, traces with latency, failures (issue 4)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.errors import RoutingError
from fabric_engine.routing import ENGINES, engine_choices, route
from fabric_engine.routing.failures import diff_paths, reroute_without
from fabric_engine.routing.latency import LatencyModel, latency_claim, path_latency_ns
from fabric_engine.scenario import DEMO_SPEC, build_fabric
from fabric_engine.topology.generate import fat_tree
from tests.fabric_engine.routing.test_routing_fixtures import spine_cables


def test_engines_have_human_names_and_unknown_engines_fail_clearly():
    assert set(ENGINES) >= {"minhop", "updn", "ftree", "dfsssp"}
    assert ("ftree", "Fat tree") in engine_choices()
    with pytest.raises(RoutingError, match="unknown routing engine 'nope'"):
        route(fat_tree(hosts=8, radix=4), "nope")


def test_adaptive_paths_split_evenly_over_the_up_ports():
    f = fat_tree(hosts=128, radix=8, levels=3)
    r = route(f, "ftree")
    m = r.paths(f.hosts[:1], f.hosts[-1:], adaptive=True)
    vals = np.sort(m.data)
    assert np.isclose(vals.sum(), 6.0)  # six cables on the way
    assert np.isclose(vals.min(), 1 / 16)  # 4 spines x 4 cores
    static = r.paths(f.hosts[:1], f.hosts[-1:])
    assert static.nnz == 6 and np.all(static.data == 1)


def test_a_million_pairs_build_without_python_loops():
    f = fat_tree(hosts=512, radix=64)
    r = route(f, "minhop")
    rng = np.random.default_rng(0)
    s, d = rng.choice(f.hosts, 100_000), rng.choice(f.hosts, 100_000)
    m = r.paths(s, d)
    assert m.shape == (100_000, 2 * f.num_links)
    links = np.asarray(m.sum(axis=1)).ravel()
    same_leaf = f.host_leaf[s] == f.host_leaf[d]
    assert np.all(links[(s != d) & ~same_leaf] == 4) and np.all(links[(s != d) & same_leaf] == 2)


def test_trace_shows_the_hops_and_their_latency():
    f = fat_tree(hosts=8, radix=4)
    hops = route(f, "minhop").trace("gpu0001", "gpu0008")
    assert [h["name"][:4] for h in hops] == ["gpu0", "leaf", "spin", "leaf", "gpu0"]
    assert hops[-1]["latency_ns"] == pytest.approx(3 * 130 + 4 * 3.0 * 5)


def test_a_trace_to_itself_is_the_host_alone_and_a_looping_chain_is_an_error():
    """A host traced to itself once looped forever, the hop list growing (``/path/?src=h&dst=h``)."""
    f = fat_tree(hosts=8, radix=4)
    r = route(f, "minhop")
    hops = r.trace("gpu0001", "gpu0001")
    assert [(h["name"], h["link"], h["latency_ns"]) for h in hops] == [("gpu0001", None, 0.0)]
    leaf = int(f.host_leaf[f.node("gpu0008")])
    r.lft[f.switch_index[leaf]] = r.lft[f.switch_index[leaf]][f.node("gpu0001")]  # every LID back up: a loop
    with pytest.raises(RoutingError, match="no route|loops"):
        r.trace("gpu0001", "gpu0008")


def test_demo_fabric_latency_claim_holds_with_the_stated_switch_latency():
    r = route(build_fabric(DEMO_SPEC["topology"]), "minhop")
    claim = latency_claim(r)
    assert claim["holds"] and claim["worst_ns"] == pytest.approx(450.0)
    slow = latency_claim(r, model=LatencyModel(switch_ns=330.0))
    assert not slow["holds"]  # the claim depends on the switch: the check can fail


def test_path_latency_is_nan_for_broken_paths():
    f = fat_tree(hosts=8, radix=4)
    cut = f.without_links([int(np.flatnonzero(f.b_node == f.node("gpu0008"))[0])])
    ns = path_latency_ns(route(cut, "minhop"), cut.hosts[:2], cut.hosts[-2:])
    assert np.isnan(ns[1]) and ns[0] > 0


def test_removing_spine_cables_changes_some_paths_and_breaks_none():
    f = fat_tree(hosts=32, radix=8)
    r = route(f, "ftree")
    after, diff = reroute_without(r, spine_cables(f)[:2])
    s = diff.summary()
    assert s["changed"] > 0 and s["broken"] == 0 and after.engine == "ftree"
    assert diff_paths(r, r).summary()["changed"] == 0


def test_removing_a_host_cable_breaks_its_pairs():
    f = fat_tree(hosts=8, radix=4)
    cable = int(np.flatnonzero(f.b_node == f.node("gpu0003"))[0])
    _, diff = reroute_without(route(f, "minhop"), [cable])
    assert diff.summary()["broken"] == 14
    assert set(map(int, np.unique(diff.broken_pairs))) >= {f.node("gpu0003")}
