"""minhop: OpenSM's min-hop semantics, closed form (issue 4)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.routing import route
from fabric_engine.routing.graph import lid_targets, switch_distances
from fabric_engine.routing.quality import port_loads, switch_hops
from fabric_engine.topology.generate import dragonfly_plus, fat_tree
from tests.fabric_engine.routing.test_routing_fixtures import degraded, reference_minhop, ring

FABRICS = {
    "2l-full": lambda: fat_tree(hosts=32, radix=8),
    "2l-partial": lambda: fat_tree(hosts=27, radix=8),
    "3l-full": lambda: fat_tree(hosts=128, radix=8, levels=3),
    "3l-parallel": lambda: fat_tree(hosts=32, radix=8, levels=3, cores=4),
    "3l-degraded": lambda: degraded(fat_tree(hosts=128, radix=8, levels=3), 5),
    "2l-degraded": lambda: degraded(fat_tree(hosts=32, radix=8), 3),
    "ring": lambda: ring(7, 2, chords=((0, 3),)),
    "dragonfly": lambda: dragonfly_plus(groups=3, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=2),
}


@pytest.mark.parametrize("name", FABRICS)
def test_minhop_equals_the_switch_by_switch_greedy(name):
    f = FABRICS[name]()
    assert np.array_equal(route(f, "minhop").lft, reference_minhop(f))


@pytest.mark.parametrize("name", FABRICS)
def test_every_route_is_a_shortest_path(name):
    f = FABRICS[name]()
    r = route(f, "minhop")
    tg = lid_targets(f)
    hops = switch_hops(r, tg.lids)
    want = switch_distances(f)[:, tg.target]
    assert np.array_equal(hops, want)


def test_full_fat_tree_spreads_destinations_evenly():
    f = fat_tree(hosts=64, radix=16)  # 8 leaves x 8 hosts, 8 spines
    loads = port_loads(route(f, "minhop"))
    up = loads.up_counts()
    assert up.min() == up.max() == (64 - 8) // 8


def test_degraded_fat_tree_takes_the_greedy_path_on_some_switches():
    r = route(degraded(fat_tree(hosts=32, radix=8), 3), "minhop")
    assert r.info["greedy_switches"] > 0


def test_compiled_greedy_choice_equals_the_numpy_one():
    """Issue 22: with an Aggregation Node on every switch no switch is laminar; both choices give one table."""
    import importlib

    from tests.fabric_engine.routing.test_routing_ftree_superpod import superpod

    mh = importlib.import_module("fabric_engine.routing.minhop")  # the package exports the function minhop

    assert mh._lidgreedy is not None, "the compiled choice is built by `pip install -e .` (make setup)"
    f = superpod(pods=4, leaves_per_pod=4, spines_per_pod=4, hosts_per_leaf=4, cores_per_plane=2, radix=12)
    compiled, info = mh.minhop_tables(f)
    assert info["greedy_switches"] == f.num_switches
    saved, mh._lidgreedy = mh._lidgreedy, None
    try:
        numpy_lft, _ = mh.minhop_tables(f)
    finally:
        mh._lidgreedy = saved
    assert np.array_equal(compiled, numpy_lft)
