"""ibsim net files (issue 3): writing any generated fabric, reading ibsim's own examples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.formats import ibsim
from fabric_engine.topology import SPEEDS, Fabric
from fabric_engine.topology.generate import dragonfly_plus, fat_tree, rail_optimized

EXAMPLES = Path("/usr/share/doc/ibsim-utils/net-examples")

# ibsim's own example (net-examples/net.2sw2path4hca2port), inlined so the test needs no package.
TWO_SWITCHES = """\
Switch\t8 "Switch1"
[1]\t"Hca1"[1]
[2]\t"Hca1"[2]
[3]\t"Switch2"[3]
[5]\t"Switch2"[5]

Switch 8 "Switch2"
[1]\t"Hca2"[1]
[2]\t"Hca2"[2]
[3]\t"Switch1"[3]
[5]\t"Switch1"[5]

Hca\t2 "Hca1"
[1]\t"Switch1"[1]
[2]\t"Switch1"[2]

Hca\t2 "Hca2"
[1]\t"Switch2"[1]
[2]\t"Switch2"[2]
"""


def cables(f: Fabric) -> set:
    return {(frozenset({(str(f.node_name[a]), int(ap)), (str(f.node_name[b]), int(bp))}), int(w), SPEEDS[s])
            for a, ap, b, bp, w, s in zip(f.a_node, f.a_port, f.b_node, f.b_port, f.width, f.speed, strict=True)}


@pytest.mark.parametrize("fabric", [
    fat_tree(hosts=24, radix=8, levels=3, speed="HDR"),
    rail_optimized(nodes=6, gpus_per_node=4, nodes_per_su=4, radix=8, storage_servers=2, mgmt_nodes=1,
                   storage_placement="spread"),
    dragonfly_plus(groups=3, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=3, radix=8, width=1, speed="QDR"),
], ids=["fat-tree", "rail-optimized", "dragonfly-plus"])
def test_round_trip(fabric):
    g = ibsim.read(ibsim.write(fabric))
    assert g.node_name.tolist() == fabric.node_name.tolist()
    for k in ("kind", "guid", "lid", "nports", "role", "tier", "port_lid", "port_guid"):
        assert np.array_equal(getattr(g, k), getattr(fabric, k)), k
    assert cables(g) == cables(fabric)


def test_written_file_uses_ibsims_directives():
    f = fat_tree(hosts=2, radix=4, speed="HDR")
    text = ibsim.write(f)
    assert "switchguid=0x98039b0300000001\nSwitch\t4 \"leaf01\"" in text
    assert 'Hca\t1 "gpu0001"\t\t# "gpu0001 HCA-1"' in text
    assert '[1]\t"leaf01"[1]\t\t# lid 4 lmc 0 "leaf01" lid 1 4xHDR' in text
    no_lids = ibsim.write(f, preset_lids=False)
    assert "lid 4" not in no_lids and '"leaf01" lid 0 4xHDR' in no_lids
    # Without preset LIDs the reader hands out free ones, switches and host ports alike.
    assert ibsim.read(no_lids).meta["lids_filled"] == f.num_switches + f.num_hosts


def test_reads_ibsims_example_with_ibsims_guid_rules():
    f = ibsim.read(TWO_SWITCHES, source="net.2sw2path4hca2port")
    assert f.num_switches == 2 and f.num_hosts == 2 and f.num_links == 6
    # ibsim numbers GUIDs from 0x100000 (switches, +1 each) and 0x200000 (CAs, + ports + 1 each).
    assert [hex(int(g)) for g in f.guid] == ["0x100000", "0x100001", "0x200000", "0x200003"]
    assert f.port_guid[f.port_offset[f.node("Hca2")] + 1] == 0x200005
    # No width/speed given: ibsim's defaults, 4x SDR.
    assert set(f.width.tolist()) == {4} and {SPEEDS[s] for s in f.speed} == {"SDR"}


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="ibsim-utils examples not installed")
@pytest.mark.parametrize("name", ["net", "net.1", "net.2sw2path", "net.2sw2path4hca", "net.2sw2path4hca2port"])
def test_reads_every_installed_example(name):
    f = ibsim.read((EXAMPLES / name).read_text(), source=name)
    assert f.num_links > 0


def test_port_options_are_enable_bitmasks_and_both_ends_agree():
    text = TWO_SWITCHES.replace('[3]\t"Switch2"[3]', '[3]\t"Switch2"[3] w=8 s=4 e=2').replace(
        '[3]\t"Switch1"[3]', '[3]\t"Switch1"[3] w=0x9 e=6')
    f = ibsim.read(text)
    s1, s2 = f.node("Switch1"), f.node("Switch2")
    i = int(np.flatnonzero((f.a_node == s1) & (f.b_node == s2) & (f.a_port == 3))[0])
    # w=8 (12x) & w=0x9 (1x|12x) -> 12x; speeds: {SDR..QDR default?} -> common best is EDR.
    assert f.width[i] == 12 and SPEEDS[f.speed[i]] == "EDR"
    bad = TWO_SWITCHES.replace('[3]\t"Switch2"[3]', '[3]\t"Switch2"[3] w=1').replace(
        '[3]\t"Switch1"[3]', '[3]\t"Switch1"[3] w=2')
    with pytest.raises(FormatError, match="no common link width") as info:
        ibsim.read(bad)
    assert info.value.line == 4


@pytest.mark.parametrize(("edit", "message", "line"), [
    (('[5]\t"Switch1"[5]', '[5]\t"Switch1"[6]'),
     "not confirmed by the other side .*lists 'Switch1'\\[6\\] on line 11", 5),
    (('Hca\t2 "Hca2"', 'Hca\t2 "Hca1"'), "already defined on line 13", 17),
    (('[2]\t"Switch2"[2]', '[3]\t"Switch2"[2]'), "outside 1..2", 19),
    (('[1]\t"Hca1"[1]', '@[1]\t"Hca1"[1]'), "aliases", 2),
    (('[1]\t"Hca1"[1]', '[1]\t"Hca1"[1]\t# "Hca1" lid 3 4xQQR'), "unknown link speed 'QQR'", 2),
])
def test_errors_name_the_line(edit, message, line):
    with pytest.raises(FormatError, match=message) as info:
        ibsim.read(TWO_SWITCHES.replace(*edit, 1), source="t.net")
    assert info.value.line == line


def test_duplicate_guid_from_directives():
    text = 'caguid=0x10\nHca\t1 "a"\n[1]\t"s"[1]\n\ncaguid=0x10\nHca\t1 "b"\n[1]\t"s"[2]\n\n' \
           'Switch\t2 "s"\n[1]\t"a"[1]\n[2]\t"b"[1]\n'
    with pytest.raises(FormatError, match="duplicate GUID 0x0000000000000010") as info:
        ibsim.read(text)
    assert info.value.line == 6


def test_names_ibsim_cannot_take_are_refused():
    f = fat_tree(hosts=2, radix=4, host_prefix="gpu#")
    with pytest.raises(FormatError, match="cannot be an ibsim node id"):
        ibsim.write(f)
