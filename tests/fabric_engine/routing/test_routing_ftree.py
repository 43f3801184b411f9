"""ftree: OpenSM's fat-tree routing, degraded trees included (issue 4)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.routing import route
from fabric_engine.routing.ftree import ftree
from fabric_engine.routing.graph import lid_targets, switch_distances
from fabric_engine.routing.quality import credit_loops, port_loads, report, switch_hops
from fabric_engine.topology.generate import dragonfly_plus, fat_tree
from tests.fabric_engine.routing.test_routing_fixtures import degraded, ring

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
def test_routes_are_shortest_and_cover_every_lid_but_root_to_root(name):
    f = FULL[name]()
    tg = lid_targets(f)
    hops = switch_hops(route(f, "ftree"), tg.lids)
    want = switch_distances(f)[:, tg.target]
    # as OpenSM's ftree (connect_roots off), switches that share no root above them have no route
    # to each other: the roots of a 2-level tree, cores, spines of one pod at other positions
    top = f.tier[f.switches] == f.tier[f.switches].max()
    assert np.array_equal(hops[:, tg.is_host], want[:, tg.is_host])
    assert (hops[np.ix_(top, ~tg.is_host)][:, top[tg.target[~tg.is_host]]] < 0).sum() == top.sum() * (top.sum() - 1)
    ok = hops >= 0
    assert np.array_equal(hops[ok], want[ok])


def test_partial_leaves_are_padded_with_dummy_nodes():
    r = route(fat_tree(hosts=30, radix=8), "ftree")
    assert r.info["ftree"]["dummy_nodes"] == 2
    assert _worst_shift_contention(r) <= 2


def test_degraded_tree_falls_back_to_minhop_like_opensm_and_says_so():  # issue 16
    f = degraded(fat_tree(hosts=128, radix=8, levels=3), 4, seed=3)
    r = route(f, "ftree")
    assert np.array_equal(r.lft, route(f, "minhop").lft)
    assert r.info["fallback"]["engine"] == "minhop"
    assert "ERR AB09: Different number of upward port groups" in r.info["fallback"]["reason"]
    rep = report(r)
    assert any("routed with minhop as OpenSM does" in w for w in rep.warnings)


def test_degraded_tree_is_routed_not_refused_and_explained_on_request():
    f = degraded(fat_tree(hosts=128, radix=8, levels=3), 4, seed=3)
    r = route(f, "ftree", on_irregular="balance")
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
    ft, mh = route(f, "ftree", on_irregular="balance"), route(f, "minhop")
    assert ft.info["ftree"]["leaf_detours"] > 0
    assert _all_to_all_max_link_flows(ft) < _all_to_all_max_link_flows(mh)
    assert port_loads(ft).summary()["max"] <= port_loads(mh).summary()["max"]


def test_a_ring_is_no_fat_tree_and_says_so():
    r = route(ring(6, 2), "ftree")
    assert r.info["fallback"]["engine"] == "minhop" and "not a fat-tree" in r.info["fallback"]["reason"]
    info = route(ring(6, 2), "ftree", on_irregular="balance").info["ftree"]
    assert info["shortest_path_fallbacks"] > 0
    assert any("same level" in n for n in info["notes"])


def _up_neighbour(f, lft, sw: int, lid: int) -> int:
    """Switch index the switch ``sw`` forwards ``lid`` to (-1 for an adapter or no route)."""
    p = int(lft[sw, lid])
    d = np.flatnonzero((f.dl_src == f.switches[sw]) & (f.dl_src_port == p))
    return int(f.switch_index[f.dl_dst[d[0]]]) if len(d) else -1


def test_dragonfly_plus_is_routed_over_spine_cables_in_the_main_path_plane():  # issue 16
    f = dragonfly_plus(groups=4, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=4, radix=8)
    r = ftree(f)
    info = r.info["ftree"]
    assert "fallback" not in r.info and info["shortest_path_fallbacks"] == 0
    assert info["sibling_cables"] == 12 and info["sibling_far_routes"] == 0
    assert any("join roots" in n for n in info["notes"])
    names = f.node_name[f.switches]
    group = np.array([str(n)[:3] for n in names])
    spine = np.array(["spine" in str(n) for n in names])
    for h in f.hosts:
        lid = int(f.lid[h])
        leaf = int(f.switch_index[f.dl_dst[np.flatnonzero(f.dl_src == h)[0]]])
        same = np.flatnonzero(~spine & (group == group[leaf]) & (np.arange(len(names)) != leaf))
        main = _up_neighbour(f, r.lft, int(same[0]), lid)  # the destination's main-path spine
        for x in np.flatnonzero(~spine & (group != group[leaf])):
            via = _up_neighbour(f, r.lft, int(x), lid)  # climbs to its own spine of the main path's plane
            assert group[via] == group[x] and str(names[via])[-2:] == str(names[main])[-2:]
        for x in np.flatnonzero(spine & (group != group[leaf])):
            via = _up_neighbour(f, r.lft, int(x), lid)  # one global cable to the destination's group
            assert group[via] == group[leaf] and str(names[via])[-2:] == str(names[x])[-2:]
    assert report(r).unreachable_pairs == 0


def test_up_groups_outside_the_indexed_part_swing_back_and_forth():  # issue 16
    # OpenSM indexes switches from the first leaf through up and down cables only; in a Dragonfly+ the other
    # groups stay unindexed and their leaves take spine 1, 2, 2, 1 (bubble sort keeps equal loads in place).
    f = dragonfly_plus(groups=2, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=4, radix=8)
    r = ftree(f)
    names = f.node_name[f.switches]
    picks = {}
    for h in f.hosts:
        leaf = int(f.switch_index[f.dl_dst[np.flatnonzero(f.dl_src == h)[0]]])
        other = int(np.flatnonzero((np.char.find(names.astype(str), str(names[leaf])[:3]) == 0)
                                   & (np.char.find(names.astype(str), "leaf") >= 0)
                                   & (np.arange(len(names)) != leaf))[0])
        picks.setdefault(str(names[leaf]), []).append(str(names[_up_neighbour(f, r.lft, other, int(f.lid[h]))])[-7:])
    assert picks["g01-leaf01"] == ["spine01", "spine02", "spine01", "spine02"]  # indexed: round robin
    assert picks["g02-leaf01"] == ["spine01", "spine02", "spine02", "spine01"]  # unindexed: back and forth
