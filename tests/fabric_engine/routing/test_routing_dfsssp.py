"""dfsssp: balanced shortest paths with virtual lanes against credit loops (issue 4)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.errors import RoutingError
from fabric_engine.routing import route
from fabric_engine.routing.graph import lid_targets
from fabric_engine.routing.quality import credit_loops, report
from fabric_engine.topology.generate import fat_tree
from tests.fabric_engine.routing.test_routing_fixtures import degraded, ring


def test_ring_needs_two_lanes_and_each_lane_is_acyclic():
    f = ring(6, 2, chords=((0, 3),))
    r = route(f, "dfsssp")
    assert r.info["dfsssp"]["vls"] >= 2
    assert credit_loops(r).acyclic
    tg = lid_targets(f)
    lids = tg.lids[tg.is_host]
    assert not credit_loops(r, lids, vl=np.zeros(len(lids))).acyclic  # one lane: the loop is there
    assert report(r).unreachable_pairs == 0


def test_one_lane_is_not_enough_for_a_ring():
    with pytest.raises(RoutingError, match="virtual lanes"):
        route(ring(6, 2), "dfsssp", max_vls=1)


def test_full_fat_tree_needs_one_lane():
    assert route(fat_tree(hosts=32, radix=8), "dfsssp").info["dfsssp"]["vls"] == 1


def test_degraded_fat_tree_is_deadlock_free_and_balanced():
    f = degraded(fat_tree(hosts=128, radix=8, levels=3), 4)
    r = route(f, "dfsssp")
    assert 1 <= r.info["dfsssp"]["vls"] <= 8
    rep = report(r)
    assert rep.unreachable_pairs == 0 and rep.credit_loops.acyclic
    # balanced by traffic: all-to-all puts no more flows on its busiest link than minhop does
    h = f.hosts
    src, dst = np.repeat(h, len(h)), np.tile(h, len(h))
    keep = src != dst

    def busiest(engine):
        return route(f, engine).paths(src[keep], dst[keep]).sum(axis=0).max()

    assert busiest("dfsssp") <= busiest("minhop")
