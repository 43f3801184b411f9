"""updn: Up*/Down* with roots by rank or by name (issue 4)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.errors import RoutingError
from fabric_engine.routing import route
from fabric_engine.routing.graph import lid_targets, switch_distances
from fabric_engine.routing.quality import credit_loops, report, switch_hops
from fabric_engine.topology.generate import fat_tree
from tests.engine.test_routing_fixtures import ring


def test_ring_minhop_has_a_credit_loop_and_updn_has_none():
    f = ring(6, 2)
    assert not credit_loops(route(f, "minhop")).acyclic
    r = route(f, "updn")
    check = credit_loops(r, from_hosts=False)
    assert check.acyclic
    assert report(r).unreachable_pairs == 0


def test_fat_tree_roots_are_the_top_tier_and_paths_are_shortest():
    f = fat_tree(hosts=128, radix=8, levels=3)
    r = route(f, "updn")
    assert all(n.startswith("core") for n in r.info["updn"]["roots"])
    tg = lid_targets(f)
    host = tg.is_host
    assert np.array_equal(switch_hops(r, tg.lids[host]), switch_distances(f)[:, tg.target[host]])


def test_roots_by_name_change_the_routes():
    f = ring(6, 2)
    a = route(f, "updn", roots=["sw0"])
    b = route(f, "updn", roots=["sw3"])
    assert a.info["updn"]["roots"] == ["sw0"]
    assert not np.array_equal(a.lft, b.lft)
    assert credit_loops(b, from_hosts=False).acyclic


@pytest.mark.parametrize("bad", ["nope", "h00"])
def test_bad_root_is_a_clear_error(bad):
    with pytest.raises(RoutingError, match=bad):
        route(ring(4, 1), "updn", roots=[bad])
