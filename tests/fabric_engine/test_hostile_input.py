"""Issue 14: hostile input is refused quickly, with bounded memory, naming the file and line or the field.

Each example of the issue is a regression test here (the inputs are built by
``tests/support/hostile.py``, whose ``python -m tests.support.hostile`` prints what each costs).
Memory is asserted with tracemalloc (numpy reports its buffers to it); time never is.
"""

from __future__ import annotations

import pytest

from fabric_engine.errors import FabricEngineError, FormatError, TopologyError
from fabric_engine.formats import read
from fabric_engine.scenario import build_fabric
from fabric_engine.telemetry import CounterSamples, parse_iblinkinfo, read_discovery
from fabric_engine.topology.generate import fat_tree, rail_optimized
from tests.support import hostile
from tests.support.hostile import peak_memory

MB = 2**20


def test_ibnetdiscover_with_a_switch_at_lid_100_million_is_refused_at_its_line():
    """Issue 14: 860 MB before its 400 (a LID table sized by the largest LID)."""
    text = hostile.ibnetdiscover_far_lid()
    err, peak = peak_memory(lambda: read(text, source="far-lid.topo"))
    assert isinstance(err, FormatError), err
    bad = next(i for i, ln in enumerate(text.splitlines(), 1) if str(hostile.FAR_LID) in ln)
    assert (err.source, err.line) == ("far-lid.topo", bad)
    assert err.message == "lid 100000000 is above the highest unicast LID 49151 (0xBFFF)"
    assert peak < 4 * MB


def test_json_fabric_with_10000_ports_on_a_node_is_refused_naming_the_field():
    """Issue 14: accepted (200) before, then 581 MB each time the engine rebuilt it."""
    doc = hostile.json_nports()
    err, peak = peak_memory(lambda: build_fabric({"fabric": doc, "source": "nports.json"}))
    assert isinstance(err, FormatError), err
    assert str(err) == "nports.json: nodes.nports[0]: 10000 is outside 1..254 (port numbers are 1..254)"
    assert peak < 4 * MB


def test_fat_tree_of_radix_800_is_refused_naming_the_field():
    """Issue 14: accepted before, then 586 MB to route."""
    err, peak = peak_memory(lambda: build_fabric(hostile.fat_tree_radix()))
    assert isinstance(err, TopologyError), err
    assert str(err).startswith("topology.radix: 800 is above 254 (port numbers are 8 bits")
    assert peak < MB


@pytest.mark.parametrize(("topology", "words"), [
    ({"generator": "fat_tree", "hosts": 10**9}, "topology.hosts: 1000000000 is above 49151"),
    ({"generator": "fat_tree", "hosts": 64, "radix": 64, "levels": 3, "cores": 10**9}, "topology.cores: 1000000000"),
    ({"generator": "rail_optimized", "nodes": 10**6}, "topology.nodes: 1000000 is above 49151"),
    ({"generator": "rail_optimized", "nodes": 49151, "gpus_per_node": 8}, "393,208 host ports"),
    ({"generator": "dragonfly_plus", "groups": 10**6}, "topology.groups: 1000000 is above 254"),
    ({"generator": "dragonfly_plus", "groups": 200, "leaves_per_group": 50, "spines_per_group": 200, "radix": 254},
     "540,000 host ports need as many LIDs"),
    ({"generator": "dragonfly_plus", "groups": 200, "leaves_per_group": 50, "spines_per_group": 200, "radix": 254,
      "hosts_per_leaf": 0}, "2,540,000 ports so far, more than one subnet's fabric holds"),
    ({"generator": "fat_tree", "hosts": 8, "radix": 4, "lids": "none"}, "topology.lids"),
    ({"generator": "fat_tree", "hosts": 8, "radix": 4, "storage_ports": 10**6}, "topology.storage_ports"),
    ({"generator": "fat_tree", "hosts": 8, "radix": 4, "host_prefix": "x" * 10**6}, "topology.host_prefix"),
    ({"generator": "fat_tree", "hosts": 8.5}, "topology.hosts: expected an integer"),
    ({"generator": "fat_tree", "hosts": True}, "topology.hosts: expected an integer"),
    ({"generator": "fat_tree", "hosts": 8, "oversubscription": float("inf")}, "finite"),
    ({"generator": "fat_tree", "hosts": 8, "exploit": 1}, "topology.exploit: not a parameter"),
])
def test_generator_sizes_are_checked_before_anything_is_built(topology, words):
    err, peak = peak_memory(lambda: build_fabric(topology))
    assert isinstance(err, FabricEngineError) and words in str(err), err
    assert peak < 2 * MB


def test_the_largest_legitimate_designs_are_still_accepted():
    """A 32,768-GPU rail-optimized 3-level NDR fabric and the largest radix-64 3-level tree of a subnet."""
    rail = build_fabric({"generator": "rail_optimized", "nodes": 4096, "gpus_per_node": 8, "nodes_per_su": 32,
                         "radix": 64, "levels": 3})
    assert (rail.num_hosts, rail.num_switches) == (32768, 2560)
    assert fat_tree(hosts=45248, radix=64, levels=3).max_lid == 49126
    assert rail_optimized(nodes=8192, gpus_per_node=8, radix=64, levels=3, lids="none").num_hosts == 65536


def test_iblinkinfo_with_a_lid_of_100_million_is_refused_at_its_line():
    """Issue 14: accepted (201) before, then 762 MB every time the engine rebuilt from it."""
    text = hostile.iblinkinfo_far_lid()
    err, peak = peak_memory(lambda: read_discovery(text, source="push.iblinkinfo"))
    assert isinstance(err, FormatError), err
    bad = next(i for i, ln in enumerate(text.splitlines(), 1) if str(hostile.FAR_LID) in ln)
    assert (err.source, err.line) == ("push.iblinkinfo", bad)
    assert "LID 100000000" in err.message and "0xBFFF" in err.message
    assert peak < 4 * MB


def test_pushed_sample_with_lid_2_to_the_40_is_a_format_error():
    """Issue 14: a 500 before (OverflowError out of numpy)."""
    err, peak = peak_memory(lambda: CounterSamples.from_records(hostile.sample_huge_lid()["samples"], "samples"))
    assert isinstance(err, FormatError), err
    assert (err.source, err.line) == ("samples", 1) and "lid 1099511627776" in err.message
    assert peak < MB


@pytest.mark.parametrize(("record", "words"), [
    ({"lid": 2, "port": 3, "t": 1.0, "counters": {"PortXmitData": 2**64}}, "does not fit in 32 bits"),
    ({"lid": 2, "port": 3, "t": 1.0, "extended": True, "counters": {"PortXmitData": 2**64}}, "does not fit in 64"),
    ({"lid": 2, "port": 256, "t": 1.0, "counters": {}}, "out of range"),
    ({"lid": True, "port": 1, "t": 1.0, "counters": {}}, "out of range"),
    ({"lid": 2.5, "port": 1, "t": 1.0, "counters": {}}, "out of range"),
    ({"lid": "9" * 5000, "port": 1, "t": 1.0, "counters": {}}, "out of range"),
    ({"lid": 2, "port": 1, "t": float("nan"), "counters": {}}, "t: nan"),
    ({"lid": 2, "port": 1, "t": "soon", "counters": {}}, "t: 'soon'"),
    ({"lid": 2, "port": 1, "t": 1.0, "extended": "yes", "counters": {}}, "extended"),
    ({"lid": 2, "port": 1, "t": 1.0, "counters": [1, 2]}, "counters: expected an object"),
    ({"lid": 2, "port": 1, "t": 1.0, "counters": {"PortXmitData": 1.5}}, "not an integer"),
    ({"lid": 2, "port": 1, "t": 1.0, "counters": {"PortXmitData": None}}, "not an integer"),
    ({"lid": 2, "port": 1, "t": 1.0}, "no 'counters'"),
    ([1, 2], "an object"),
])
def test_bad_sample_records_are_format_errors_naming_the_record(record, words):
    with pytest.raises(FormatError) as err:
        CounterSamples.from_records([{"lid": 1, "port": 1, "t": 0.0, "counters": {}}, record], source="samples")
    assert err.value.line == 2 and words in err.value.message


@pytest.mark.parametrize(("line", "words"), [
    ('           1    0[  ] ==( 4X  2.5 Gbps Active/  LinkUp)==>  2  1[  ] "h" ( )', "port 0 is outside 1..254"),
    ('           1  255[  ] ==( 4X  2.5 Gbps Active/  LinkUp)==>  2  1[  ] "h" ( )', "port 255 is outside"),
    ('           1    1[  ] ==( 4X  2.5 Gbps Active/  LinkUp)==>  2  999[  ] "h" ( )', "port 999 is outside"),
    ('           1    1[  ] ==( 4X  2.5 Gbps Active/  LinkUp)==>  49152  1[  ] "h" ( )', "LID 49152 is above"),
    ('           1    1[  ] ==( 4X  2.5 Gbps Active/  LinkUp)==>  2  1[  ] "' + "h" * 300 + '" ( )', "longer than"),
    ('           1    1[  ] ==( 99X  2.5 Gbps Active/  LinkUp)==>  2  1[  ] "h" ( )', "unknown link width"),
    ("           " + "1" * 5000, "line of 5,011 characters"),
])
def test_iblinkinfo_bounds_name_the_line(line, words):
    with pytest.raises(FormatError) as err:
        parse_iblinkinfo(f"Switch: 0x01 sw:\n{line}\n", source="lab")
    assert (err.value.source, err.value.line) == ("lab", 2) and words in err.value.message


def test_iblinkinfo_refuses_a_guid_wider_than_64_bits():
    with pytest.raises(FormatError) as err:
        parse_iblinkinfo("Switch: 0x1" + "0" * 16 + " sw:\n")
    assert err.value.line == 1 and "64-bit" in err.value.message


@pytest.mark.parametrize("text", [
    "Switch: 0x01 sw:\n",
    "Switch: 0x01 sw:\n           1    1[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n"
    "Switch: 0x02 sw2:\n",
])
def test_discovery_without_ports_is_a_format_error(text):
    with pytest.raises(FormatError) as err:
        read_discovery(text, source="lab")
    assert err.value.source == "lab"


def _iblinkinfo(fabric) -> str:
    """``iblinkinfo`` output of ``fabric`` (every cabled port, as infiniband-diags prints it)."""
    from fabric_engine.telemetry.linkinfo import SIGNALLING_GBPS
    from fabric_engine.topology import KIND_SWITCH

    gbps = {code: text for text, code in SIGNALLING_GBPS.items()}
    f = fabric
    src, dst = f.dl_src.tolist(), f.dl_dst.tolist()
    sp, dp = f.dl_src_port.tolist(), f.dl_dst_port.tolist()
    width, speed = [int(w) for w in f.width] * 2, [int(s) for s in f.speed] * 2
    lid_of_port = f.port_lid.tolist()
    offset = f.port_offset.tolist()
    by_node: dict[int, list[int]] = {}
    for d in range(len(src)):
        by_node.setdefault(src[d], []).append(d)
    out = []
    for n in range(f.num_nodes):
        switch = f.kind[n] == KIND_SWITCH
        out.append(f"Switch: 0x{int(f.guid[n]):016x} {f.node_name[n]}:" if switch else f"CA: {f.node_name[n]}:")
        for d in sorted(by_node.get(n, []), key=lambda d: sp[d]):
            r, rp = dst[d], dp[d]
            here = f"{lid_of_port[offset[n] + sp[d] - 1]:5d} {sp[d]:4d}[  ]"
            if not switch:
                here = f"0x{int(f.port_guid[offset[n] + sp[d] - 1]):016x} {here}"
            out.append(f"      {here} ==( {width[d]}X {gbps[speed[d]]:>10s} Gbps Active/  LinkUp)==> "
                       f"{lid_of_port[offset[r] + rp - 1]:6d} {rp:4d}[  ] \"{f.node_name[r]}\" ( )")
    return "\n".join(out) + "\n"


def test_discoveries_of_a_32768_gpu_fabric_are_accepted():
    """The bounds leave room for the largest real fabrics: its ibnetdiscover output, JSON and iblinkinfo output.

    (ibsim net files share the ibnetdiscover reader and its bounds.)
    """
    big = rail_optimized(nodes=4096, gpus_per_node=8, nodes_per_su=32, radix=64, levels=3)
    from fabric_engine.formats import write

    for fmt in ("ibnetdiscover", "json"):
        back = read(write(big, fmt), fmt=fmt, source=f"big.{fmt}")
        assert (back.num_hosts, back.num_switches, back.num_links) == (32768, 2560, 98304), fmt
    found = read_discovery(_iblinkinfo(big), source="big.iblinkinfo")
    assert (found.num_hosts, found.num_switches, found.num_links) == (32768, 2560, 98304)
    assert sorted(found.lid.tolist()) == sorted(big.lid.tolist())
