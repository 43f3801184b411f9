"""ibnetdiscover reader and writer (issue 3), on real output recorded from ibsim + OpenSM."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.formats import ibnetdiscover
from fabric_engine.topology import ROLES, SPEEDS, TIER_NAMES
from fabric_engine.topology.generate import dragonfly_plus, fat_tree

DATA = Path(__file__).parents[2] / "data"


def read(name: str):
    return ibnetdiscover.read((DATA / name).read_text(), source=name)


def cables(f) -> set:
    """Cables as sets of (name, port) ends plus width and speed name, independent of index order."""
    return {(frozenset({(str(f.node_name[a]), int(ap)), (str(f.node_name[b]), int(bp))}), int(w), SPEEDS[s])
            for a, ap, b, bp, w, s in zip(f.a_node, f.a_port, f.b_node, f.b_port, f.width, f.speed, strict=True)}


def test_real_fat_tree_output_matches_the_generated_design():
    f = read("ibnd_fat_tree_2l.txt")
    want = fat_tree(hosts=8, radix=8, speed="HDR", storage_servers=2, mgmt_nodes=1, name="ft2")
    assert sorted(f.node_name.tolist()) == sorted(want.node_name.tolist())
    assert cables(f) == cables(want)
    idx = [f.node(str(n)) for n in want.node_name]
    for k in ("kind", "guid", "nports", "role", "tier"):
        assert np.array_equal(getattr(f, k)[idx], getattr(want, k)), k
    # The recording let OpenSM assign LIDs (none preset): unique, unicast, one per host port and switch.
    host_ports = f.port_lid[f.kind[f.port_node] == 0]
    assert len(np.unique(np.concatenate([host_ports, f.lid[f.switches]]))) == len(host_ports) + f.num_switches
    assert f.meta["lids_filled"] == 0


def test_lids_widths_and_port_guids_as_printed():
    f = read("ibnd_fat_tree_2l.txt")
    text = (DATA / "ibnd_fat_tree_2l.txt").read_text()
    # The first CA port line: '[1](<portguid>) \t"S-<guid>"[p]\t\t# lid L lmc 0 "<desc>" lid R 4xHDR'
    line = next(ln for ln in text.splitlines() if ln.startswith("[1](b83f"))
    port_guid = int(line[4:line.index(")")], 16)
    lid = int(line.split("# lid ")[1].split()[0])
    node = f.node(port_guid)
    assert f.port_lid[f.port_offset[node]] == lid
    assert f.port_guid[f.port_offset[node]] == port_guid
    assert set(f.width.tolist()) == {4} and {SPEEDS[s] for s in f.speed} == {"HDR"}
    # Storage servers are dual-port HCAs: two LIDs, two cables.
    stor = f.node("stor001")
    assert f.nports[stor] == 2 and (f.port_out_link[f.port_offset[stor]:f.port_offset[stor] + 2] >= 0).all()


def test_sharp_nodes_multi_hca_hosts_unconnected_ports_and_mixed_rates():
    f = read("ibnd_sharp_multi_hca.txt")
    names = set(f.node_name.tolist())
    # Two CAs of one host keep their full descriptions; a unique host loses its " mlx5_0" suffix.
    assert {"node01 HCA-1", "node01 HCA-2", "gpu7", "stor01"} <= names
    # SHARP aggregation nodes share a description: the GUID makes each name unique; never hosts.
    an = sorted(n for n in names if "Aggregation Node" in n)
    assert an == ["Mellanox Technologies Aggregation Node 0x0c42a10300cc0010",
                  "Mellanox Technologies Aggregation Node 0x0c42a10300cc0020"]
    assert {ROLES[f.role[f.node(n)]] for n in an} == {"aggregation"}
    assert sorted(f.node_name[f.aggregation_nodes].tolist()) == an
    assert not set(an) & set(f.node_name[f.hosts].tolist())
    assert ROLES[f.role[f.node("stor01")]] == "storage"
    # Switches take their description as name; both are leaves (aggregation nodes do not count as hosts).
    assert {TIER_NAMES[f.tier[f.node(n)]] for n in ("MF0;sw1:MQM8700/U1", "MF0;sw2:MQM8700/U1")} == {"leaf"}
    # Dual-port HCA with port 2 unconnected: port 2 gets a placeholder LID, counted in meta.
    stor = f.node("stor01")
    assert f.nports[stor] == 2 and f.port_out_link[f.port_offset[stor] + 1] == -1
    assert f.meta["lids_filled"] == 1 and f.meta["aggregation_nodes"] == 2
    rates = {(str(f.node_name[a]), int(w), SPEEDS[s]) for a, b, w, s in zip(f.a_node, f.b_node, f.width, f.speed,
                                                                           strict=True) if f.kind[b] == 0}
    assert ("MF0;sw1:MQM8700/U1", 2, "EDR") in rates and ("MF0;sw2:MQM8700/U1", 4, "EDR") in rates


def test_parallel_cables_between_two_switches():
    f = read("ibnd_sharp_multi_hca.txt")
    sw1, sw2 = f.node("MF0;sw1:MQM8700/U1"), f.node("MF0;sw2:MQM8700/U1")
    between = ((f.a_node == sw1) & (f.b_node == sw2)) | ((f.a_node == sw2) & (f.b_node == sw1))
    assert between.sum() == 2


@pytest.mark.parametrize("fabric", [
    fat_tree(hosts=40, radix=8, levels=3, storage_servers=3, mgmt_nodes=2),
    dragonfly_plus(groups=3, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=3, radix=8, speed="EDR", width=2),
], ids=["fat-tree-3l", "dragonfly-plus"])
def test_write_read_round_trip(fabric):
    text = ibnetdiscover.write(fabric)
    g = ibnetdiscover.read(text)
    assert g.node_name.tolist() == fabric.node_name.tolist()
    for k in ("kind", "guid", "lid", "nports", "role", "tier", "port_lid", "port_guid"):
        assert np.array_equal(getattr(g, k), getattr(fabric, k)), k
    assert cables(g) == cables(fabric)
    assert text.count('"H-') > 0 and "switchguid=0x" in text


def test_reader_reparses_real_output_written_back():
    f = read("ibnd_dragonfly_plus.txt")
    g = ibnetdiscover.read(ibnetdiscover.write(f))
    assert cables(g) == cables(f) and np.array_equal(g.port_lid, f.port_lid)


@pytest.mark.parametrize(("name", "marker", "message"), [
    ("broken_truncated.txt", None, "truncated port line"),
    ("broken_unknown_speed.txt", "4xZDR", "unknown link speed 'ZDR'"),
    ("broken_port_above_count.txt", '[3](', "port 3 is outside 1..1"),
    ("broken_unconfirmed_link.txt", '"[7]', "is not confirmed by the other side"),
])
def test_broken_files_name_the_line(name, marker, message):
    text = (DATA / name).read_text()
    lines = text.splitlines()
    expected = len(lines) if marker is None else next(i for i, ln in enumerate(lines, 1) if marker in ln)
    with pytest.raises(FormatError, match=message) as info:
        ibnetdiscover.read(text, source=name)
    assert info.value.line == expected
    assert str(info.value).startswith(f"{name}:{expected}: ")


def test_duplicate_guid_names_the_second_record():
    text = (DATA / "broken_duplicate_guid.txt").read_text()
    lines = text.splitlines()
    guid_lines = [i for i, ln in enumerate(lines, 1) if ln.startswith("caguid=")]
    dup = next(i for i in guid_lines if lines[i - 1] in {lines[j - 1] for j in guid_lines if j < i})
    with pytest.raises(FormatError, match="duplicate GUID") as info:
        ibnetdiscover.read(text, source="dup")
    assert info.value.line == dup + 1  # the Ca header after the repeated caguid= line


@pytest.mark.parametrize(("text", "message"), [
    ('Switch\t4 "S-01"\t# "a" lid 1\n[1]\t"S-02"[1]\t# "b" lid 2\n', "no link width and speed"),
    ('[1]\t"S-02"[1]\t# "b" lid 2 4xHDR\n', "outside a node record"),
    ('Switch\t4 "S-01"\t# "a" lid 1\n[1]\t"S-02"[1]\t# "b" lid 2 4xHDR\n', "has no record"),
    ('Switch\t4 "S-01"\t# "a" lid 1\n[1]\t"S-02"[1]\t# "b" lid 2 3xHDR\n', "unknown link width 3x"),
    ('Switch\t4 "S-01"\t# "a" lid 1\n[1]\t"S-02"[1]\t# "b" lid 2 4xHDR\n[1]\t"S-02"[2]\t# "b" lid 2 4xHDR\n',
     "listed twice"),
    ("hello\n", r"no node records found \(1 line\(s\) skipped, first line 1: unrecognised line"),
])
def test_small_malformed_inputs(text, message):
    with pytest.raises(FormatError, match=message):
        ibnetdiscover.read(text)


def test_ends_that_disagree_on_speed_read_the_lower_trained_down():
    """Issue 34: a link retraining (or old firmware) prints two rates; the lower is read, with a warning."""
    f = fat_tree(hosts=2, radix=4, speed="HDR")
    text = ibnetdiscover.write(f)
    i = text.index("4xHDR")
    g = ibnetdiscover.read(text[:i] + "4xEDR" + text[i + 5:])
    assert int(g.trained_down.sum()) == 1 and SPEEDS[g.speed[g.trained_down][0]] == "EDR"
    assert set(SPEEDS[s] for s in g.speed[~g.trained_down]) == {"HDR"}
    [w] = g.meta["warnings"]
    assert w["line"] == text[:i].count("\n") + 1
    assert re.fullmatch(r"link rate 4xEDR differs from 4xHDR at the other end \(line \d+\): read as 4xEDR, the lower, "
                        r"and marked trained down", w["reason"]), w["reason"]
