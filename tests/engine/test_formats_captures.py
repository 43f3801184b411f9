"""Issue 22: topology text as real clusters write it -- ibdiagnet's dialect, directors, SHARP
Aggregation Nodes, loopbacks, ``ibnetdiscover -p`` and ``-g``, and captured terminal text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fabric_engine import formats
from fabric_engine.errors import FormatError
from fabric_engine.formats import json_meta, node_name_map
from fabric_engine.topology import ROLES, SPEEDS, TIER_NAMES

DATA = Path(__file__).parent / "data" / "captures" / "ibnetdiscover"
NDR = DATA / "ibdiagnet_ndr.ibnetdiscover"
AN = "Mellanox Technologies Aggregation Node"


def read(name: str, **kw):
    return formats.read(DATA / name, **kw)


def cables(f) -> set[tuple[int, int, int, int]]:
    """Every cable as (GUID, port, GUID, port), smaller end first, with its rate folded in."""
    out = set()
    for a, ap, b, bp in zip(f.a_node, f.a_port, f.b_node, f.b_port, strict=True):
        ends = sorted([(int(f.guid[a]), int(ap)), (int(f.guid[b]), int(bp))])
        out.add((*ends[0], *ends[1]))
    return out


def test_ibdiagnet_dialect_counts_aggregation_nodes_and_loopback():
    f = read(NDR.name)
    assert (f.num_switches, f.num_hosts, f.num_links) == (3, 7, 13)
    # Aggregation Nodes: routed CAs, never hosts; every switch can aggregate.
    assert len(f.aggregation_nodes) == 3 and {ROLES[r] for r in f.role[f.aggregation_nodes]} == {"aggregation"}
    assert not np.isin(f.aggregation_nodes, f.hosts).any()
    assert len(f.aggregation_switches) == 3 and f.meta["aggregation_nodes"] == 3
    assert set(f.kind_label[f.aggregation_nodes]) == {"aggregation"} and set(f.kind_label[f.hosts]) == {"host"}
    # With Aggregation Nodes on every switch, the spine is still a spine.
    spine = f.node("spine01")
    assert TIER_NAMES[f.tier[spine]] == "spine"
    assert sorted(TIER_NAMES[t] for t in f.tier[f.switches]) == ["leaf", "leaf", "spine"]
    # The loopback cable is kept aside, never among the cables that routing sees.
    assert f.meta["loopbacks"] == [["spine01", 10, 11, "4xNDR"]]
    assert not (f.a_node == f.b_node).any()
    # Port labels and zero-padded GUIDs: CA port GUIDs read from "(guid)", labels "(1/1/1)" ignored.
    assert f.node(0x0C42A10300000011) == f.node("dgx01 mlx5_0")
    # A link trained down to EDR between NDR ports.
    rates = {SPEEDS[s] for s in f.speed}
    assert rates == {"NDR", "HDR", "EDR"}


def test_display_names_are_unique_and_descriptions_kept_as_given():
    f = read(NDR.name)
    names = f.node_name.tolist()
    assert len(set(names)) == len(names)
    leaves = sorted(n for n in names if n.startswith("Quantum-2"))
    assert leaves == ["Quantum-2 Mellanox Technologies 0xb8cef603000a0002",
                      "Quantum-2 Mellanox Technologies 0xb8cef603000a0003"]
    assert sorted(n for n in names if n.startswith("localhost")) == [
        "localhost HCA-1 0x0c42a10300000050", "localhost HCA-1 0x0c42a10300000060"]
    # Runs and leading blanks are collapsed for display; the NodeDescription itself is kept.
    stor = f.node("stor01")
    assert f.meta["node_desc"][str(stor)] == "  stor01   HCA-1"
    assert ROLES[f.role[stor]] == "storage"
    # Rails of one host (CAs sharing a system image GUID) count as one system.
    assert f.meta["host_systems"] == 5
    assert {"dgx01 mlx5_0", "dgx01 mlx5_1"} <= set(names)


def test_permissive_lid_gets_a_free_lid_with_a_warning():
    f = read(NDR.name)
    w = f.meta["warnings"]
    assert [x["line"] for x in w] == [80]
    assert "65535" in w[0]["reason"] and "lid 65535" in w[0]["text"]
    lid = f.port_lid[f.port_offset[f.node("localhost HCA-1 0x0c42a10300000060")]]
    assert 0 < lid < 0xC000 and f.meta["lids_filled"] == 2  # and port 2 of stor01, not cabled


@pytest.mark.parametrize(("name", "lines", "reasons"), [
    ("captured_putty_crlf.txt", [1, 2, 3, 4, 84, 114],
     ["terminal logger banner", "shell prompt", "tool diagnostic", "tool diagnostic", "65535", "shell prompt"]),
    ("captured_bom_prompt.txt", [1, 1, 81], ["byte-order mark", "shell prompt", "65535"]),
])
def test_captured_terminal_text_reads_like_the_clean_file_with_warnings(name, lines, reasons):
    clean, f = read(NDR.name), read(name)
    assert formats.detect((DATA / name).read_text(encoding="utf-8")) == "ibnetdiscover"
    assert cables(f) == cables(clean) and f.node_name.tolist() == clean.node_name.tolist()
    w = f.meta["warnings"]
    assert [x["line"] for x in w] == lines
    assert all(r in x["reason"] for r, x in zip(reasons, w, strict=True))


def test_director_asics_are_switches_of_one_chassis():
    for name in ("director_cs7500.ibnetdiscover", "grouped_g.ibnetdiscover"):
        f = read(name)
        assert (f.num_switches, f.num_hosts, f.num_links) == (3, 2, 4)
        # Node GUIDs are the ASICs' own (in parentheses), the chassis GUID groups them.
        assert sorted(int(g) for g in f.guid[f.switches]) == [0x2C90300C00001, 0x2C90300C00002, 0x2C90300C00003]
        assert f.meta["chassis"] == [{"guid": "0x0002c90300c0ffee", "switches": [
            "MF0;cs7500-01:CS7500/S01/U1", "MF0;cs7500-01:CS7500/L01/U1", "MF0;cs7500-01:CS7500/L02/U1"]}]
        assert "warnings" not in f.meta
        # One group on the map: the chassis' ASICs are laid out together, as a generator's pod is.
        assert f.group[f.switches].tolist() == [0, 0, 0] and f.group[f.hosts].tolist() == [-1, -1]


def test_ports_report_p_reads_the_same_fabric():
    clean, f = read(NDR.name), read("ports_p.txt")
    assert formats.detect((DATA / "ports_p.txt").read_text()) == "ibnetdiscover-ports"
    assert (f.num_switches, f.num_hosts, f.num_links) == (3, 7, 13)
    assert len(f.aggregation_nodes) == 3 and f.meta["loopbacks"] == [["spine01", 10, 11, "4xNDR"]]
    # Switch GUIDs are exact; CA ports keep their port GUIDs.
    assert sorted(int(g) for g in f.guid[f.switches]) == sorted(int(g) for g in clean.guid[clean.switches])
    assert f.node(0x0C42A10300000011) == f.node("dgx01 mlx5_0")
    # "4x ???" at both ends: the fabric's most common speed, said on both lines.
    w = f.meta["warnings"]
    assert [x["line"] for x in w] == [1, 29, 54, 58]
    assert "speed unknown" in w[1]["reason"] and "NDR" in w[1]["reason"]


def test_node_name_map_renames_nodes():
    names = node_name_map.read('# site names\n0xb8cef603000a0002 "leaf-a01"\n0xb8cef603000a0003 leaf-a02 # row 2\n')
    f = read(NDR.name, node_name_map=names)
    assert {"leaf-a01", "leaf-a02"} <= set(f.node_name.tolist())
    with pytest.raises(FormatError, match=r"map:2: expected"):
        node_name_map.read("# x\nleaf01 0x1\n", "map")


def test_round_trip_keeps_loopbacks_and_descriptions():
    f = read(NDR.name)
    g = formats.read(formats.write(f, "ibnetdiscover"))
    assert cables(g) == cables(f) and g.meta["loopbacks"] == f.meta["loopbacks"]
    assert g.node_name.tolist() == f.node_name.tolist() and g.meta["node_desc"] == f.meta["node_desc"]
    net = formats.read(formats.write(f, "ibsim"), "ibsim")
    assert net.meta["loopbacks"] == f.meta["loopbacks"]
    js = formats.read(formats.write(f, "json"))
    assert {k: js.meta.get(k) for k in json_meta.KEYS} == {k: f.meta.get(k) for k in json_meta.KEYS}
    assert ROLES[js.role[js.aggregation_nodes[0]]] == "aggregation" and js.num_hosts == f.num_hosts


@pytest.mark.parametrize(("as_read", "message"), [
    ({"loopbacks": [["nope", 1, 2, "4xNDR"]]}, r"as_read.loopbacks\[0\]: expected \[node name"),
    ({"node_desc": {"99": "x"}}, "not a node index"),
    ({"warnings": [{"line": "1", "text": "", "reason": ""}]}, r"warnings\[0\]: expected an integer"),
    ({"other": 1}, "keys among"),
])
def test_json_as_read_is_checked(as_read, message):
    doc = formats.json_format.to_json(read(NDR.name))
    doc["as_read"] = as_read
    with pytest.raises(FormatError, match=message):
        formats.json_format.from_json(doc)


BASE = 'switchguid=0x10(10)\nSwitch\t4 "S-10"\t# "a" enhanced port 0 lid 1 lmc 0\n[1]\t"S-11"[1]\t# "b" lid 2 {rate}\n'
PEER = ('\nswitchguid=0x11(11)\nSwitch\t4 "S-11"\t# "b" enhanced port 0 lid 2 lmc 0\n'
        '[1]\t"S-10"[1]\t# "a" lid 1 {rate}\n')


def test_unknown_speed_at_one_end_takes_the_other_ends():
    f = formats.read(BASE.format(rate="4x???") + PEER.format(rate="4xNDR"))
    assert SPEEDS[f.speed[0]] == "NDR" and "warnings" not in f.meta
    f = formats.read(BASE.format(rate="?????") + PEER.format(rate="4xHDR"))
    assert (int(f.width[0]), SPEEDS[f.speed[0]]) == (4, "HDR")


@pytest.mark.parametrize(("text", "line", "message"), [
    # Garbage inside a record is never skipped.
    (BASE.format(rate="4xNDR") + "hello world\n" + PEER.format(rate="4xNDR"), 4, "inside a node record"),
    # A caguid= line that does not match the node id after it.
    ('caguid=0x20\nCa\t1 "H-21"\t# "h"\n[1](21)\t"S-10"[1]\t# lid 3 lmc 0 "a" lid 1 4xNDR\n', 2, "does not match"),
    # Widths still disagreeing where both ends know them.
    (BASE.format(rate="4xNDR") + PEER.format(rate="2xNDR"), 3, "differs"),
    # A multicast-range LID is an error, not "none assigned".
    (BASE.format(rate="4xNDR").replace("lid 1 lmc", "lid 49153 lmc") + PEER.format(rate="4xNDR"), 2, "unicast"),
])
def test_broken_records_name_the_line(text, line, message):
    with pytest.raises(FormatError, match=message) as info:
        formats.read(text, "ibnetdiscover")
    assert info.value.line == line


def test_only_noise_is_an_error_naming_what_was_skipped():
    with pytest.raises(FormatError, match=r"no node records found \(2 line\(s\) skipped, first line 1: shell"):
        formats.read("[root@ufm01 ~]# ibnetdiscover\nibwarn: [1] mad_rpc: failed\n", "ibnetdiscover")


def test_sharp_uses_the_fabrics_aggregation_node_inventory():
    from fabric_engine.routing import route
    from fabric_engine.sharp import AggregationManager, SharpConfig

    text = NDR.read_text()
    # Leaf B without its Aggregation Node: drop the node's record and the leaf's port line to it.
    text = "\n\n".join(r for r in text.split("\n\n") if 'Ca\t1 "H-b8cef603000a1003"' not in r)
    text = "\n".join(ln for ln in text.splitlines() if '"H-b8cef603000a1003"' not in ln)
    f = formats.read(text)
    assert len(f.aggregation_switches) == 2
    am = AggregationManager(route(f, "minhop"), SharpConfig("quantum2"))
    on_a = [f.node("dgx01 mlx5_0"), f.node("dgx02 mlx5_0")]
    on_b = [f.node("dgx01 mlx5_1"), f.node("dgx02 mlx5_1")]
    assert am.allocate("a", "t", np.array(on_a)).tree is not None
    refused = am.allocate("b", "t", np.array(on_b))
    assert refused.tree is None and "has no SHARP Aggregation Node" in refused.reason
