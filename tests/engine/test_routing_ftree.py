"""ftree: OpenSM's fat-tree routing, degraded trees included (issue 4)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.routing import route
from fabric_engine.routing.graph import lid_targets, switch_distances
from fabric_engine.routing.quality import credit_loops, port_loads, switch_hops
from fabric_engine.topology.generate import fat_tree
from tests.engine.test_routing_fixtures import degraded, ring

FULL = {
    "2l": lambda: fat_tree(hosts=32, radix=8),
    "3l": lambda: fat_tree(hosts=128, radix=8, levels=3),
    "3l-parallel-cables": lambda: fat_tree(hosts=32, radix=8, levels=3, cores=4),
}


def _worst_shift_contention(r) -> int:
    h = r.fabric.hosts
    worst = 0
    for k in range(1, len(h)):
        m = r.paths(h, np.roll(h, -k))
        worst = max(worst, int(m.sum(axis=0).max()))
    return worst


@pytest.mark.parametrize("name", FULL)
def test_shift_permutations_are_contention_free_on_full_trees(name):
    assert _worst_shift_contention(route(FULL[name](), "ftree")) == 1


def test_minhop_is_not_contention_free_so_the_shift_test_can_fail():
    assert _worst_shift_contention(route(FULL["3l"](), "minhop")) > 1


@pytest.mark.parametrize("name", FULL)
def test_every_up_port_of_a_level_carries_the_same_number_of_destinations(name):
    f = FULL[name]()
    r = route(f, "ftree")
    loads = port_loads(r)
    lv = r.info["ftree"]
    assert lv["levels"] == (2 if name == "2l" else 3)
    levels = f.tier[f.switches]
    for tier in np.unique(levels)[:-1]:
        c = loads.counts[(levels == tier)[:, None] & loads.is_up]
        assert c.size and c.min() == c.max(), (tier, np.unique(c))


@pytest.mark.parametrize("name", FULL)
def test_routes_are_shortest_and_cover_every_lid(name):
    f = FULL[name]()
    tg = lid_targets(f)
    hops = switch_hops(route(f, "ftree"), tg.lids)
    assert np.array_equal(hops, switch_distances(f)[:, tg.target])


def test_partial_leaves_are_padded_with_dummy_nodes():
    r = route(fat_tree(hosts=30, radix=8), "ftree")
    assert r.info["ftree"]["dummy_nodes"] == 2
    assert _worst_shift_contention(r) <= 2


def test_degraded_tree_is_routed_not_refused_and_explained():
    f = degraded(fat_tree(hosts=128, radix=8, levels=3), 4, seed=3)
    r = route(f, "ftree")
    h = f.hosts
    s, d = np.repeat(h, len(h)), np.tile(h, len(h))
    keep = s != d
    _, broken = r.paths(s[keep], d[keep], return_broken=True)
    assert not broken.any()
    notes = " ".join(r.info["ftree"]["notes"])
    assert "fewer than 4 up links" in notes
    assert credit_loops(r).acyclic


def _all_to_all_max_link_flows(r) -> int:
    h = r.fabric.hosts
    s, d = np.repeat(h, len(h)), np.tile(h, len(h))
    keep = s != d
    return int(r.paths(s[keep], d[keep]).sum(axis=0).max())


def test_degraded_tree_keeps_the_balance_better_than_minhop():
    f = degraded(fat_tree(hosts=64, radix=16), 6, seed=2)
    ft, mh = route(f, "ftree"), route(f, "minhop")
    assert ft.info["ftree"]["leaf_detours"] > 0
    assert _all_to_all_max_link_flows(ft) < _all_to_all_max_link_flows(mh)
    assert port_loads(ft).summary()["max"] <= port_loads(mh).summary()["max"]


def test_a_ring_is_no_fat_tree_and_says_so():
    r = route(ring(6, 2), "ftree")
    info = r.info["ftree"]
    assert info["shortest_path_fallbacks"] > 0
    assert any("same level" in n for n in info["notes"])
