"""Generators: fat tree (2/3 levels), rail-optimized, Dragonfly+, storage and mgmt nodes (issue 3)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.errors import TopologyError
from fabric_engine.topology import KIND_HOST, ROLES, Fabric
from fabric_engine.topology.generate import (
    MAX_UNICAST_LID,
    TopologyDesign,
    dragonfly_plus,
    fat_tree,
    rail_optimized,
)


def neighbours(f: Fabric, name: str) -> list[str]:
    i = f.node(name)
    out = f.port_out_link[f.port_offset[i]: f.port_offset[i] + f.nports[i]]
    return [str(f.node_name[f.dl_dst[d]]) for d in out if d >= 0]


def assert_physical(f: Fabric) -> None:
    """Every port used at most once, within the radix; every cable joins two different nodes."""
    slots = f.port_offset[f.dl_src] + f.dl_src_port - 1
    assert len(np.unique(slots)) == 2 * f.num_links
    assert (f.dl_src_port >= 1).all() and (f.dl_src_port <= f.nports[f.dl_src]).all()
    assert (f.a_node != f.b_node).all()


def test_fat_tree_two_levels_counts_and_wiring():
    f = fat_tree(hosts=512, radix=64)
    assert (f.num_hosts, f.num_switches, f.num_links) == (512, 48, 1024)
    assert_physical(f)
    # Every leaf reaches every spine once; hosts hang off leaves 32 at a time.
    assert sorted(set(neighbours(f, "leaf01")) - {f"gpu{i:04d}" for i in range(1, 33)}) == \
        [f"spine{j:02d}" for j in range(1, 33)]
    assert neighbours(f, "gpu0033") == ["leaf02"]


def test_fat_tree_partial_last_leaf_and_oversubscription():
    f = fat_tree(hosts=100, radix=16, oversubscription=3)
    down, up = 12, 4
    assert f.num_switches == -(-100 // down) + up
    last = f"leaf{-(-100 // down):02d}"
    assert sum(n.startswith("gpu") for n in neighbours(f, last)) == 100 - 8 * down
    assert_physical(f)


def test_fat_tree_three_levels_pods_and_cores():
    f = fat_tree(hosts=300, radix=16, levels=3)
    # radix 16: 8 hosts per leaf, pods of 8 leaves with 8 spines, spines send 8 cables up.
    leaves, pods = 38, 5
    assert f.num_hosts == 300
    assert (f.tier == 1).sum() == leaves and (f.tier == 2).sum() == pods * 8
    cores = np.flatnonzero(f.tier == 3)
    used = np.bincount(f.dl_src, minlength=f.num_nodes)[cores]
    assert (used <= 16).all() and used.sum() == pods * 8 * 8
    assert set(f.group[f.tier == 1]) == set(range(pods))
    assert_physical(f)


def test_fat_tree_three_levels_explicit_cores_and_validation():
    f = fat_tree(hosts=130, radix=16, levels=3, cores=16)
    assert (f.tier == 3).sum() == 16
    with pytest.raises(TopologyError, match="multiple of the spines per pod"):
        fat_tree(hosts=130, radix=16, levels=3, cores=12)
    with pytest.raises(TopologyError, match="exceed the radix"):
        fat_tree(hosts=5000, radix=16, levels=3)
    with pytest.raises(TopologyError, match="levels=3"):
        fat_tree(hosts=2048 + 32, radix=64)
    with pytest.raises(TopologyError, match="levels: 4 is not one of 2, 3"):
        fat_tree(hosts=8, radix=4, levels=4)


def test_generators_are_deterministic():
    a, b = fat_tree(hosts=200, radix=16, levels=3), fat_tree(hosts=200, radix=16, levels=3)
    for k in ("guid", "lid", "port_lid", "a_node", "a_port", "b_node", "b_port"):
        assert np.array_equal(getattr(a, k), getattr(b, k))
    assert a.node_name.tolist() == b.node_name.tolist()


def test_lid_order_switches_then_host_ports():
    f = fat_tree(hosts=20, radix=8, storage_servers=2, storage_ports=3)
    sw = f.switches
    assert f.lid[sw].tolist() == list(range(1, len(sw) + 1))
    stor = f.node("stor001")
    assert f.nports[stor] == 3
    ports = f.port_lid[f.port_offset[stor]: f.port_offset[stor] + 3]
    assert ports.tolist() == [f.lid[stor], f.lid[stor] + 1, f.lid[stor] + 2]


def test_storage_dedicated_leaves_and_mgmt():
    f = fat_tree(hosts=64, radix=16, storage_servers=5, storage_ports=2, mgmt_nodes=3)
    assert [ROLES[r] for r in f.role[[f.node("stor001"), f.node("mgmt01"), f.node("gpu0001")]]] == \
        ["storage", "mgmt", "gpu"]
    # 13 service ports on 8-down-port service leaves: 2 leaves, in the Clos like the others.
    assert set(neighbours(f, "stor001")) == {"sleaf01", "sleaf02"}
    assert {n for n in neighbours(f, "sleaf01") if n.startswith("spine")} == {f"spine{j:02d}" for j in range(1, 9)}
    assert (f.tier[[f.node("sleaf01"), f.node("sleaf02")]] == 1).all()
    assert_physical(f)


def test_storage_spread_over_free_leaf_ports():
    # A fat tree fills leaves in order, so only the last leaf has free ports.
    f = fat_tree(hosts=17, radix=16, storage_servers=3, storage_ports=2, mgmt_nodes=1, storage_placement="spread")
    assert not any(str(n).startswith("sleaf") for n in f.node_name)
    assert set(neighbours(f, "stor001")) == {"leaf03"}
    with pytest.raises(TopologyError, match="need 8 leaf ports; only 7 are free"):
        fat_tree(hosts=17, radix=16, storage_servers=3, storage_ports=2, mgmt_nodes=2, storage_placement="spread")
    # Dragonfly+ leaves with spare ports: round-robin puts a server's two ports on different leaves.
    d = dragonfly_plus(groups=2, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=4, radix=8,
                       storage_servers=2, mgmt_nodes=1)
    assert neighbours(d, "stor001") == ["g01-leaf01", "g01-leaf02"]
    assert neighbours(d, "stor002") == ["g02-leaf01", "g02-leaf02"]
    assert d.group[d.node("stor002")] == 1 and d.role[d.node("mgmt01")] == ROLES.index("mgmt")


def test_rail_optimized_rails_and_scalable_units():
    f = rail_optimized(nodes=64, gpus_per_node=8, nodes_per_su=32, radix=64)
    assert (f.num_hosts, f.num_switches) == (512, 16 + 32)
    # HCA r of a node goes to its SU's rail-r leaf; the same rail of every node of the SU shares it.
    assert neighbours(f, "dgx0001-hca3") == ["su01-leaf3"]
    assert neighbours(f, "dgx0033-hca3") == ["su02-leaf3"]
    hosts_on_leaf = [n for n in neighbours(f, "su02-leaf3") if n.startswith("dgx")]
    assert hosts_on_leaf == [f"dgx{i:04d}-hca3" for i in range(33, 65)]
    assert f.group[f.node("dgx0040-hca1")] == 1
    assert_physical(f)


def test_rail_optimized_three_levels_with_storage():
    f = rail_optimized(nodes=40, gpus_per_node=4, nodes_per_su=8, radix=16, levels=3, storage_servers=2,
                       mgmt_nodes=1)
    assert {int(t) for t in np.unique(f.tier)} == {0, 1, 2, 3}
    assert f.num_hosts == 160 + 3
    assert_physical(f)
    with pytest.raises(TopologyError, match="whole SUs"):
        rail_optimized(nodes=40, gpus_per_node=3, nodes_per_su=8, radix=16, levels=3)


def test_dragonfly_plus_groups_and_global_links():
    f = dragonfly_plus(groups=5, leaves_per_group=3, spines_per_group=3, hosts_per_leaf=5, radix=16, global_links=8)
    assert f.num_hosts == 75
    # Complete bipartite inside a group.
    assert {n for n in neighbours(f, "g02-leaf01") if "spine" in n} == {"g02-spine01", "g02-spine02", "g02-spine03"}
    # Spine j reaches spine j of each other group with global_links / (groups - 1) = 2 cables.
    glob = [n for n in neighbours(f, "g01-spine02") if "leaf" not in n]
    assert sorted(glob) == sorted([f"g{g:02d}-spine02" for g in range(2, 6)] * 2)
    assert set(f.group[f.tier == 2]) == set(range(5))
    assert_physical(f)
    with pytest.raises(TopologyError, match="multiple of groups-1"):
        dragonfly_plus(groups=5, leaves_per_group=3, spines_per_group=3, radix=16, global_links=6)
    with pytest.raises(TopologyError, match="spine radix"):
        dragonfly_plus(groups=17, leaves_per_group=3, spines_per_group=3, radix=16)


def test_radix_is_never_exceeded():
    with pytest.raises(TopologyError, match="hosts \\+ 4 spine links exceed"):
        dragonfly_plus(groups=2, leaves_per_group=2, spines_per_group=4, hosts_per_leaf=5, radix=8)
    with pytest.raises(TopologyError, match="no up-port"):
        rail_optimized(nodes=8, nodes_per_su=16, radix=16)


def test_beyond_one_subnet_is_a_design_not_a_fabric():
    with pytest.raises(TopologyError, match="49,151 unicast LIDs"):
        fat_tree(hosts=65536, radix=64, levels=3)
    with pytest.raises(TopologyError, match="45,300 hosts and 3,880 switches( so far)? need 49,180 LIDs, but one "
                                            "subnet has 49,151 unicast LIDs"):
        fat_tree(hosts=45300, radix=64, levels=3)
    d = fat_tree(hosts=65536, radix=64, levels=3, lids="none")
    assert isinstance(d, TopologyDesign)
    assert d.num_hosts == 65536 and d.num_links == 65536 * 3
    assert d.lids_needed > MAX_UNICAST_LID
    # The same physical checks hold: each (node, port) once, within the radix.
    slots = np.concatenate([d.a_node * 256 + d.a_port, d.b_node * 256 + d.b_port])
    assert len(np.unique(slots)) == len(slots)
    assert (np.concatenate([d.a_port, d.b_port]) <= 64).all()
    small = fat_tree(hosts=64, radix=16, lids="none")
    assert small.to_fabric().num_hosts == 64
    assert (np.asarray(small.kind) == KIND_HOST).sum() == 64


def test_bad_parameters():
    with pytest.raises(TopologyError, match="speed: 'ZDR' is not one of SDR"):
        fat_tree(hosts=8, radix=4, speed="ZDR")
    with pytest.raises(TopologyError, match="storage_placement"):
        fat_tree(hosts=8, radix=4, storage_servers=1, storage_placement="nearby")
    with pytest.raises(TopologyError, match="lids: 'extended' is not one of subnet, none"):
        fat_tree(hosts=8, radix=4, lids="extended")
