"""updn: Up*/Down* with roots found as OpenSM finds them, or given by name or GUID (issues 4, 16)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.routing import route
from fabric_engine.routing.graph import lid_targets, switch_distances
from fabric_engine.routing.quality import credit_loops, report, switch_hops
from fabric_engine.topology.generate import fat_tree
from tests.fabric_engine.routing.test_routing_fixtures import ring


def test_ring_minhop_has_a_credit_loop_and_updn_has_none():
    f = ring(6, 2)
    assert not credit_loops(route(f, "minhop")).acyclic
    r = route(f, "updn", roots=["sw0"])
    check = credit_loops(r, from_hosts=False)
    assert check.acyclic
    assert report(r).unreachable_pairs == 0


def test_a_ring_has_no_root_by_the_histogram_and_updn_falls_back_to_minhop():  # issue 16
    f = ring(6, 2)
    r = route(f, "updn")
    assert r.info["fallback"]["engine"] == "minhop" and "no switch qualifies as a root" in r.info["fallback"]["reason"]
    assert np.array_equal(r.lft, route(f, "minhop").lft)


def test_a_spine_that_lost_a_leaf_is_no_root():  # issue 16: OpenSM's min-hop histogram
    f = fat_tree(hosts=32, radix=8)
    cut = np.flatnonzero((f.node_name[f.a_node] == "leaf01") & (f.node_name[f.b_node] == "spine02") |
                         (f.node_name[f.b_node] == "leaf01") & (f.node_name[f.a_node] == "spine02"))
    r = route(f.without_links(cut), "updn")
    assert r.info["updn"]["roots"] == ["spine01", "spine03", "spine04"]
    rep = report(r)
    assert rep.unreachable_host_entries == 0  # every spine that is a root still reaches every host
    assert rep.unreachable_entries == 3 * 2  # as in OpenSM, roots do not reach one another (down, then up)
    assert "6 of 528 (switch, LID) entries have no working route" in str(rep)


def test_root_guid_file(tmp_path):
    from fabric_engine.routing.updn import read_root_guids

    f = ring(6, 2)
    path = tmp_path / "roots.txt"
    path.write_text(f"# roots\n0x{int(f.guid[f.node('sw3')]):016x}  trailing words\n\n0x1234\n")
    guids = read_root_guids(path)
    r = route(f, "updn", roots=guids)
    assert r.info["updn"]["roots"] == ["sw3"]
    path.write_text("0x12\nnot-a-guid\n")
    with pytest.raises(FormatError, match="not a GUID") as exc:
        read_root_guids(path)
    assert exc.value.line == 2


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
def test_roots_that_are_no_switch_are_skipped_like_opensm_does(bad):
    r = route(ring(4, 1), "updn", roots=[bad])
    assert r.info["updn"]["roots"] == [] and "none of the given root GUIDs" in r.info["fallback"]["reason"]
