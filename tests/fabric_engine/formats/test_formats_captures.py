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

DATA = Path(__file__).parents[2] / "data" / "captures" / "ibnetdiscover"
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
    # Another tool's output inside a record is never skipped (issue 34).
    (BASE.format(rate="4xNDR") + 'Switch\t: 0x0000000000000011 ports 4 "b" base port 0 lid 2 lmc 0\n'
     + PEER.format(rate="4xNDR"), 4, "ibswitches output inside a node record"),
    # ... nor between a record's vendid= line and its header.
    (BASE.format(rate="4xNDR") + "\nvendid=0x2c9\nsminfo: sm lid 1 sm guid 0x0000000000000010, activity count 5 "
     "priority 15 state 3 SMINFO_MASTER" + PEER.format(rate="4xNDR"), 6, "sminfo output inside a node record"),
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


# ------------------------------------------------------------------ shapes of issue 22 with a fixture each
def link_speeds(f) -> dict[tuple[int, int, int, int], str]:
    """Speed of every cable, keyed as :func:`cables` keys it."""
    out = {}
    for a, ap, b, bp, s in zip(f.a_node, f.a_port, f.b_node, f.b_port, f.speed, strict=True):
        ends = sorted([(int(f.guid[a]), int(ap)), (int(f.guid[b]), int(bp))])
        out[(*ends[0], *ends[1])] = SPEEDS[s]
    return out


def test_ndr_cage_and_split_port_labels_followed_by_the_port_guid():
    """ibdiagnet's `[1](B134D0F0/0/1/1)(<guid>)`: the number before the labels is the port, the labels are not."""
    f = read("ibdiagnet_cage_split_labels.ibnetdiscover")
    assert (f.num_switches, f.num_hosts, len(f.aggregation_nodes), f.num_links) == (2, 4, 2, 8)
    assert f.meta.get("warnings", []) == []
    spine, leaf = 0xB8CEF60300120001, 0xB8CEF60300120002
    hosts = [0x0C42A10300002010 + 0x10 * i for i in range(4)]
    assert cables(f) == {(spine, 1, leaf, 33), (spine, 2, leaf, 34), (spine, 65, spine + 0x1000, 1),
                         (leaf, 65, leaf + 0x1000, 1)} | {(h, 1, leaf, i + 1) for i, h in enumerate(hosts)}
    # the CA's own "(guid)" label is its port GUID; the switch's cage labels never are
    gpu = f.node("gpu-a01")
    assert f.node(0x0C42A10300002011) == gpu and f.meta["node_desc"][str(gpu)] == "gpu-a01 mlx5_0"
    assert int(f.nports[f.node("leaf-a")]) == 65 and set(link_speeds(f).values()) == {"NDR"}


def test_forty_port_switch_in_split_mode_has_its_aggregation_node_on_port_81():
    """A 40-port HDR switch split into 80 ports (2xHDR): ports 1..80, the SHARP Aggregation Node on 81."""
    f = read("hdr_split_mode_an_port_81.ibnetdiscover")
    assert (f.num_switches, f.num_hosts, len(f.aggregation_nodes), f.num_links) == (2, 6, 2, 10)
    leaf, spine = f.node("MF0;leaf-s01:MQM8790/U1"), f.node("MF0;spine-s01:MQM8700/U1")
    assert (int(f.nports[leaf]), int(f.nports[spine])) == (81, 41)
    lg, sg = 0x98039B0300A70001, 0x98039B0300A70002
    c = cables(f)
    assert {(lg, 81, lg + 0x10, 1), (sg, 41, sg + 0x10, 1), (lg, 79, sg, 1), (lg, 80, sg, 2)} <= c
    assert {ROLES[r] for r in f.role[f.aggregation_nodes]} == {"aggregation"}
    assert not np.isin(f.aggregation_nodes, f.hosts).any() and len(f.aggregation_switches) == 2
    assert sorted(TIER_NAMES[t] for t in f.tier[f.switches]) == ["leaf", "spine"]
    assert sorted(f"{w}x{SPEEDS[s]}" for w, s in zip(f.width, f.speed, strict=True)) == ["2xHDR"] * 8 + ["4xHDR"] * 2


def test_hdr_link_trained_down_to_sdr_and_factory_descriptions_on_several_hosts():
    """Three hosts still called `ubuntu mlx5_0`, one HCA whose HDR link came up at SDR."""
    f = read("factory_names_sdr_link.ibnetdiscover")
    assert (f.num_switches, f.num_hosts, len(f.aggregation_nodes), f.num_links) == (1, 4, 0, 4)
    names = f.node_name.tolist()
    assert len(set(names)) == len(names)
    assert sorted(n for n in names if n.startswith("ubuntu")) == [
        f"ubuntu mlx5_0 0x{0x0C42A10300E00000 + 0x100 * i:016x}" for i in range(3)]
    descs = f.meta["node_desc"]
    assert sorted(descs[str(int(n))] for n in f.hosts) == ["gpu04 mlx5_0"] + ["ubuntu mlx5_0"] * 3
    sw = 0x0C42A103007B0001
    assert link_speeds(f) == {(sw, i + 1, 0x0C42A10300E00000 + 0x100 * i, 1): ("SDR" if i == 3 else "HDR")
                              for i in range(4)}
    sdr = int(np.flatnonzero(np.array([SPEEDS[s] for s in f.speed]) == "SDR")[0])
    assert float(f.capacity_gbps[sdr]) == 8.0  # 4 lanes x 2.5 Gb/s, 8b/10b


# ------------------------------------------------------------------ shapes of issue 34 with a fixture each
def test_capture_whose_tabs_a_terminal_logger_dropped_reads_with_one_warning():
    """`Switch41 "S-..."# "..."` and `[1]"H-..."[1](guid) # ...`: every header and port line without its tabs."""
    name = "tabless_logger_hdr.txt"
    assert formats.detect((DATA / name).read_text()) == "ibnetdiscover"
    f = read(name)
    assert (f.num_switches, f.num_hosts, f.num_links) == (3, 4, 8)
    leaf = f.node("MF0;sat11-0101:MQM8700/U1")
    assert int(f.lid[leaf]) == 3894 and int(f.nports[leaf]) == 41
    sw, spine = 0x0C42A10300A9B026, 0x0C42A10300A9B066
    assert {(sw, 39, spine, 1), (sw, 40, spine, 2), (sw, 1, 0x1C34DA03005503DC, 1)} <= cables(f)
    host = f.node("SAT111092710053 ibp11s0f0")
    assert f.node(0x1C34DA03005503DC) == host and int(f.nports[host]) == 2
    assert set(link_speeds(f).values()) == {"HDR"} and not f.trained_down.any()
    w = f.meta["warnings"]
    assert [x["line"] for x in w] == [1, 11, 42, 65]
    assert w[1]["reason"].startswith("tabs missing") and w[1]["text"].startswith('Switch41 "S-0c42a10300a9b026"#')
    assert sum("tabs missing" in x["reason"] for x in w) == 1  # once, though every line lost them
    # The same file with its tabs is the same fabric.
    tabbed = formats.read(formats.write(f, "ibnetdiscover"))
    assert cables(tabbed) == cables(f) and "warnings" not in tabbed.meta


def test_ends_printing_different_rates_read_the_lower_and_mark_the_link_trained_down():
    """Voltaire SDR fabric: ISR9024 port 10 prints 4xSDR, its peer SW-6IB4 port 1 prints 1xSDR; a host 4xDDR/4xSDR."""
    f = read("voltaire_sdr_ends_differ.ibnetdiscover")
    assert (f.num_switches, f.num_hosts, f.num_links) == (2, 5, 7)
    isr, sw6 = 0x0008F10400411F56, 0x0008F104004121B8
    rates = {k: f"{int(f.width[i])}x{SPEEDS[f.speed[i]]}" for i, k in enumerate(
        tuple(sorted([(int(f.guid[a]), int(ap)), (int(f.guid[b]), int(bp))])) for a, ap, b, bp in
        zip(f.a_node, f.a_port, f.b_node, f.b_port, strict=True))}
    assert rates[((isr, 10), (sw6, 1))] == "1xSDR" and rates[((isr, 11), (sw6, 2))] == "4xSDR"
    node05 = f.node("node05")
    down = np.flatnonzero(f.trained_down)
    assert sorted(tuple(sorted((f.node_name[f.a_node[c]], f.node_name[f.b_node[c]]))) for c in down) == [
        ("ISR9024 Voltaire", "SW-6IB4 Voltaire"), ("SW-6IB4 Voltaire", "node05")]
    c05 = int(np.flatnonzero((f.a_node == node05) | (f.b_node == node05))[0])
    assert (int(f.width[c05]), SPEEDS[f.speed[c05]]) == (4, "SDR")
    assert float(f.capacity_gbps[down].min()) == 2.0  # 1 lane x 2.5 Gb/s, 8b/10b
    w = f.meta["warnings"]
    assert [(x["line"], x["reason"]) for x in w] == [
        (15, "link rate 4xSDR differs from 1xSDR at the other end (line 23): read as 1xSDR, the lower, and marked "
             "trained down"),
        (26, "link rate 4xDDR differs from 4xSDR at the other end (line 61): read as 4xSDR, the lower, and marked "
             "trained down")]
    # Kept through ibweb's JSON (the feed's snapshot carries it with the link rates) and when cables are removed.
    assert formats.json_format.to_json(f, as_read=())["links"]["trained_down"] == f.trained_down.tolist()
    pair = formats.read(BASE.format(rate="4xSDR") + PEER.format(rate="1xSDR"))
    doc = formats.json_format.to_json(pair, as_read=())
    assert doc["links"]["trained_down"] == [True] and formats.json_format.from_json(doc).trained_down.tolist() == [True]
    fewer = f.without_links([0])
    assert fewer.trained_down.tolist() == f.trained_down[1:].tolist()
    assert "trained_down" not in formats.json_format.to_json(read(NDR.name))["links"]
    with pytest.raises(FormatError, match=r"links.trained_down: expected 1 booleans"):
        formats.json_format.from_json({**doc, "links": {**doc["links"], "trained_down": [1]}})


def test_one_end_unknown_is_no_mismatch_and_both_known_take_the_lower_of_each():
    f = formats.read(BASE.format(rate="4xNDR") + PEER.format(rate="2xHDR"))
    assert (int(f.width[0]), SPEEDS[f.speed[0]], f.trained_down.tolist()) == (2, "HDR", [True])
    f = formats.read(BASE.format(rate="4x???") + PEER.format(rate="4xNDR"))
    assert not f.trained_down.any() and "trained_down" not in f.meta


SESSION = (
    "[root@mgmt ~]# ibswitches\n"
    'Switch\t: 0x0000000000000010 ports 4 "a" base port 0 lid 1 lmc 0\n'
    'Switch\t: 0x0000000000000011 ports 4 "b" base port 0 lid 2 lmc 0\n'
    "[root@mgmt ~]# sminfo\n"
    "sminfo: sm lid 1 sm guid 0x0000000000000010, activity count 5 priority 15 state 3 SMINFO_MASTER\n"
    "[root@mgmt ~]# ibstat\n"
    "CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n\t\tBase lid: 3\n"
    "user@mgmt:~$ ibnetdiscover\n")


def test_a_terminal_session_of_several_tools_skips_the_others_with_one_warning_each():
    text = SESSION + BASE.format(rate="4xNDR") + PEER.format(rate="4xNDR") + "\nSwitch\t: 0x0000000000000012 ports 4 " \
        '"c" base port 0 lid 3 lmc 0\n'
    f = formats.read(text)
    assert f.num_links == 1 and f.node_name.tolist() == ["a", "b"]
    w = [(x["line"], x["reason"]) for x in f.meta["warnings"]]
    assert w == [(1, "shell prompt skipped"), (2, "ibswitches output skipped (lines 2-3, 22)"),
                 (4, "shell prompt skipped"), (5, "sminfo output skipped (line 5)"), (6, "shell prompt skipped"),
                 (7, "ibstat output skipped (lines 7-12)"), (13, "shell prompt skipped")]
    # ibsim net files and `ibnetdiscover -p` read a session alike.
    net = formats.read(SESSION + 'Switch 4 "a"\n[1] "b"[1]\n\nSwitch 4 "b"\n[1] "a"[1]\n', "ibsim")
    assert [x["reason"] for x in net.meta["warnings"]][1] == "ibswitches output skipped (lines 2-3)"
    ports = (DATA / "ports_p.txt").read_text()
    p = formats.read(SESSION.replace("ibnetdiscover", "ibnetdiscover -p") + ports, "ibnetdiscover-ports")
    assert p.num_links == 13 and "ibstat output skipped (lines 7-12)" in [x["reason"] for x in p.meta["warnings"]]
    # A line no tool prints is still an error naming it.
    with pytest.raises(FormatError, match="not an 'ibnetdiscover -p' port line") as info:
        formats.read(SESSION + "hello\n" + ports, "ibnetdiscover-ports")
    assert info.value.line == 14
