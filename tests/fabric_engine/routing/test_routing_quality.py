"""Routing quality report and the credit-loop check on the channel dependency graph (issue 4)."""

from __future__ import annotations

import numpy as np

from fabric_engine.routing import route
from fabric_engine.routing.quality import credit_loops, port_loads, report
from fabric_engine.topology.generate import fat_tree
from tests.fabric_engine.routing.test_routing_fixtures import ring


def test_port_loads_count_the_lft_entries_of_host_lids():
    f = fat_tree(hosts=8, radix=4)
    loads = port_loads(route(f, "minhop"))
    # every leaf routes the 6 remote hosts up over 2 ports, every spine routes all 8 down to 4 leaves
    assert sorted(set(loads.up_counts())) == [3]
    assert loads.summary() == {"max": 3, "min": 2, "mean": 2.5, "spread": 1}


def test_report_of_a_two_level_tree():
    f = fat_tree(hosts=8, radix=4)
    rep = report(route(f, "minhop"))
    assert rep.hop_histogram == {2: 8, 4: 48}
    assert rep.host_pairs == 56 and rep.unreachable_pairs == 0
    assert rep.credit_loops.acyclic
    assert "acyclic" in str(rep) and rep.to_dict()["credit_loops"]["acyclic"]


def test_unreachable_pairs_are_counted():
    f = fat_tree(hosts=8, radix=4)
    host_cable = int(np.flatnonzero(f.b_node == f.node("gpu0008"))[0])
    rep = report(route(f.without_links([host_cable]), "minhop"))
    assert rep.unreachable_pairs == 14  # 7 pairs from and 7 to gpu0008


def test_the_cycle_found_is_a_real_cycle_of_channels():
    f = ring(5, 1)
    r = route(f, "minhop")
    check = credit_loops(r)
    assert not check.acyclic
    c = check.cycle
    assert len(c) >= 3
    for a, b in zip(c, c[1:] + c[:1], strict=True):
        assert f.dl_dst[a] == f.dl_src[b]
    assert "credit loop" in check.describe(f)
