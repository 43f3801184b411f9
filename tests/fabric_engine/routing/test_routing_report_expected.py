"""The routing report tells ftree's unrouted switch-to-switch LIDs (by design) from real holes."""

from __future__ import annotations

import dataclasses

import numpy as np

from fabric_engine.routing import route
from fabric_engine.routing.quality import report
from fabric_engine.routing.tables import NO_PATH
from fabric_engine.topology.generate import fat_tree


def test_ftree_leaves_root_to_root_lids_unrouted_as_opensm_does_without_a_warning():
    f = fat_tree(hosts=16, radix=8)  # 4 leaves, 4 spines: spines share no ancestor
    r = report(route(f, "ftree"))
    spines = 4
    assert (r.unreachable_entries, r.unreachable_host_entries, r.unreachable_expected) == (
        spines * (spines - 1), 0, spines * (spines - 1))
    assert r.warnings == [] and "unrouted by design" in str(r)
    assert r.to_dict()["unreachable_expected"] == 12


def test_a_hole_in_other_tables_is_still_a_warning():
    f = fat_tree(hosts=16, radix=8)
    routing = route(f, "minhop")
    lft = routing.lft.copy()
    spine_lid = int(f.port_lid[f.port_offset[f.switches[-1]]])
    lft[0, spine_lid] = NO_PATH  # leaf 0 loses its way to one spine
    r = report(dataclasses.replace(routing, lft=lft))
    bad = r.unreachable_entries  # leaf 0 and the spines whose way down to it went through leaf 0
    assert bad >= 1 and r.unreachable_expected == 0
    assert r.warnings == [f"{bad} of 192 (switch, LID) entries have no working route (0 towards host LIDs)"]
    assert np.array_equal(routing.lft[1:], lft[1:])
