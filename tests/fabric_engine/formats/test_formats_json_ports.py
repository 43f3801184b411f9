"""Port LIDs and GUIDs in ibweb's JSON (``port_lids``, ``as_read.port_guids``): captures survive the round trip."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pytest

from fabric_engine import formats
from fabric_engine.errors import FormatError
from fabric_engine.formats.json_format import from_json, to_json
from fabric_engine.topology import Fabric
from fabric_engine.topology.generate import fat_tree

CAPTURES = Path(__file__).parents[2] / "data" / "captures"
VOLTAIRE = CAPTURES / "ibnetdiscover" / "voltaire_sdr_ends_differ.ibnetdiscover"
#: Every topology capture (perfquery and iblinkinfo captures are counters, not fabrics; ibdiagnet's
#: .lst/.net_dump/.pm are parts of its folder, read with it in the archives).
TOPOLOGIES = sorted([*(CAPTURES / "ibnetdiscover").iterdir(), CAPTURES / "ibdiagnet" / "ibdiagnet2.db_csv",
                     CAPTURES / "ibdiagnet" / "ibdiagnet2_capture.tar.gz",
                     CAPTURES / "ibdiagnet" / "ibdiagnet2_capture.zip"])
_SAME = ("kind", "node_name", "guid", "lid", "nports", "role", "tier", "group", "port_lid", "port_guid", "a_node",
         "a_port", "b_node", "b_port", "width", "speed", "trained_down")


def round_trip(f):
    return from_json(json.dumps(to_json(f)), "stored.json")


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.name)
def test_every_capture_round_trips_with_its_lids_and_links(path):
    f = formats.read(path)
    g = round_trip(f)
    for k in _SAME:
        assert np.array_equal(getattr(g, k), getattr(f, k)), k
    assert np.array_equal(g.lid_to_slot, f.lid_to_slot)
    assert [g.node(int(x)) for x in f.guid] == [f.node(int(x)) for x in f.guid]  # lookups by GUID as read
    assert to_json(g) == to_json(f)


def test_voltaire_port_2_lids_are_carried_only_where_they_break_the_rule():
    f = formats.read(VOLTAIRE)  # 2-port HCAs on LIDs 11..15, port 2 unconnected: the reader gave it free LIDs
    hosts = f.hosts
    assert f.lid[hosts].tolist() == [11, 12, 13, 14, 15]
    doc = to_json(f)
    table = doc["port_lids"]
    assert table["node"] == hosts.tolist() and table["port"] == [2] * 5
    assert table["lid"] == f.port_lid[f.port_offset[hosts] + 1].tolist() == [1, 2, 4, 5, 7]
    g = from_json(doc)
    assert [g.node_by_lid(x) for x in (11, 1, 6, 3)] == [hosts[0], hosts[0], f.node("ISR9024 Voltaire"),
                                                         f.node("SW-6IB4 Voltaire")]
    # The JSON written before the table existed cannot be built: the error names the LID and both ports.
    del doc["port_lids"]
    with pytest.raises(FormatError, match=r"^old\.json: nodes\.lid\[3\]: LID 12 is held by both port 2 of node01 "
                                          r"and port 1 of node02; LIDs are unique"):
        from_json(doc, "old.json")


def test_ordinary_fabrics_keep_their_json_and_old_json_reads_the_same():
    f = fat_tree(hosts=16, radix=8, storage_servers=2)
    doc = to_json(f)
    assert "port_lids" not in doc and list(doc) == ["format", "version", "name", "nodes", "links"]
    g = from_json(doc)
    assert np.array_equal(g.port_lid, f.port_lid) and to_json(g) == doc
    assert from_json({**doc, "port_lids": {"node": [], "port": [], "lid": []}}).port_lid.tolist() == \
        f.port_lid.tolist()


def lmc(text: str, bits: int) -> str:
    """The capture as the subnet manager would print it at LMC ``bits``: base LIDs ``2**bits`` apart."""
    text = re.sub(r"\blid (\d+)", lambda m: f"lid {int(m.group(1)) << bits}", text)
    return text.replace("lmc 0", f"lmc {bits}")


def test_lmc_above_0_and_switch_lids_round_trip():
    f = formats.read(lmc(VOLTAIRE.read_text(), 2), source="lmc2.ibnetdiscover")
    assert f.lid[f.hosts].tolist() == [44, 48, 52, 56, 60] and f.lid[f.switches].tolist() == [24, 12]
    g = round_trip(f)
    for k in ("lid", "port_lid"):
        assert np.array_equal(getattr(g, k), getattr(f, k)), k
    sw_slots = np.flatnonzero(np.isin(f.port_node, f.switches))
    assert np.array_equal(g.port_lid[sw_slots], g.lid[g.port_node[sw_slots]])  # switch ports: the switch LID
    # A dual-rail host at LMC 2, both ports cabled: base LIDs 4 apart, port 2 off the rule and carried.
    dual = Fabric.build("lmc2", kind=[1, 0], node_name=["leaf", "gpu01"], guid=[0x10, 0x20], lid=[1, 4],
                        nports=[4, 2], role=[3, 0], tier=[1, 0], port_lid=[1, 1, 1, 1, 4, 8],
                        a_node=[1, 1], a_port=[1, 2], b_node=[0, 0], b_port=[1, 2])
    assert to_json(dual)["port_lids"] == {"node": [1], "port": [2], "lid": [8]}
    assert round_trip(dual).port_lid.tolist() == [1, 1, 1, 1, 4, 8]


def _voltaire_doc() -> dict:
    return to_json(formats.read(VOLTAIRE))


def _set(key, value):
    def mutate(d):
        d["port_lids"][key] = value
    return mutate


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d.update(port_lids=[1, 2]), r"port_lids: expected an object of the lists node, port, lid"),
    (lambda d: d["port_lids"].pop("lid"), r"port_lids: expected an object of the lists"),
    (lambda d: d["port_lids"].update(extra=[]), r"port_lids: expected an object of the lists"),
    (_set("lid", [1, 2]), r"port_lids: node, port and lid differ in length"),
    (_set("lid", [1, 2, "4", 5, 7]), r"port_lids\.lid: expected a list of 5 integers"),
    (lambda d: d.update(port_lids={k: [2] * 125 for k in ("node", "port", "lid")}),
     r"port_lids: 125 entries; the nodes have 58 ports"),
    (_set("node", [2, 3, 4, 5, 7]), r"port_lids\.node\[4\]: 7 is not a node index \(0\.\.6\)"),
    (_set("port", [2, 2, 3, 2, 2]), r"port_lids\.port\[2\]: node03 has no port 3 \(nodes\.nports: 2\)"),
    (_set("lid", [1, 2, 0, 5, 7]), r"port_lids\.lid\[2\]: 0 is outside 1\.\.49151"),
    (_set("lid", [1, 2, 0xC000, 5, 7]), r"port_lids\.lid\[2\]: 49152 is outside"),
    (_set("node", [2, 3, 4, 4, 6]), r"port_lids\.port\[3\]: port 2 of node03 is listed twice"),
    (_set("lid", [1, 2, 4, 5, 13]), r"port_lids\.lid\[4\]: LID 13 is held by both port 1 of node03 and "
                                    r"port 2 of node05"),
    (_set("lid", [1, 2, 4, 5, 6]), r"port_lids\.lid\[4\]: LID 6 is held by both ISR9024 Voltaire and port 2 of "
                                   r"node05"),
])
def test_bad_port_lid_tables_name_the_field(mutate, message):
    doc = copy.deepcopy(_voltaire_doc())
    mutate(doc)
    with pytest.raises(FormatError, match=r"^bad\.json: " + message):
        from_json(json.dumps(doc), "bad.json")


def test_sizes_are_checked_before_values_and_rule_lids_beyond_the_last_unicast_lid_are_named():
    doc = _voltaire_doc()
    doc["port_lids"] = {k: ["x"] * 10_000 for k in ("node", "port", "lid")}  # refused by its length alone
    with pytest.raises(FormatError, match=r"port_lids: 10,000 entries; the nodes have 58 ports"):
        from_json(doc)
    doc = _voltaire_doc()
    doc["nodes"]["lid"][2] = 49151  # node01: its port 2 by the rule would be 49152
    doc["port_lids"] = {k: v[1:] for k, v in doc["port_lids"].items()}
    with pytest.raises(FormatError, match=r"nodes\.lid\[2\]: port 2 of node01 gets LID 49152 "
                                          r"\(nodes\.lid \+ port - 1\), outside 1\.\.49151; list it in port_lids"):
        from_json(doc)


def test_port_guids_off_the_rule_are_kept_for_operators_only():
    """ConnectX-4 and later give port 1 the node GUID; by the rule (guid + 1) a SHARP Aggregation Node's port
    would take the next one's node GUID, and a lookup by that GUID would find the wrong node."""
    f = formats.read(CAPTURES / "ibnetdiscover" / "ibdiagnet_ndr.ibnetdiscover")
    an = f.aggregation_nodes
    doc = to_json(f)
    table = doc["as_read"]["port_guids"]
    assert set(an.tolist()) <= set(table["node"]) and table["guid"][table["node"].index(int(an[0]))] == \
        f"0x{int(f.guid[an[0]]):016x}"
    assert "port_guids" not in json.dumps(to_json(f, as_read=()))  # the live feed's topology: no port GUIDs
    g = from_json(doc)
    assert [g.node(int(x)) for x in f.guid[an]] == an.tolist()
    assert "port_guids" not in g.meta
    # JSON without the table (older, or the feed's) reads with the rule: the lookup goes wrong, as before.
    old = from_json(to_json(f, as_read=()))
    assert old.node(int(f.guid[an[1]])) == an[0]


@pytest.mark.parametrize(("table", "message"), [
    ({"node": [2], "port": [1]}, r"as_read\.port_guids: expected an object of the lists node, port, guid"),
    ({"node": [2], "port": [1], "guid": ["0x1", "0x2"]}, r"as_read\.port_guids: node, port and guid differ"),
    ({"node": [2], "port": [3], "guid": ["0x1"]}, r"as_read\.port_guids\.port\[0\]: node01 has no port 3"),
    ({"node": [2, 2], "port": [1, 1], "guid": ["0x1", "0x2"]}, r"as_read\.port_guids\.port\[1\]: port 1 of node01 "
                                                                r"is listed twice"),
    ({"node": [2], "port": [1], "guid": ["zz"]}, r"as_read\.port_guids\.guid\[0\]: expected a hex string"),
    ({"node": [2], "port": [1], "guid": ["0x0"]}, r"as_read\.port_guids\.guid\[0\]: 0x0 is not a non-zero"),
    ({"node": [2] * 59, "port": [1] * 59, "guid": ["0x1"] * 59}, r"as_read\.port_guids: 59 entries; the nodes "
                                                                  r"have 58 ports"),
])
def test_bad_port_guid_tables_name_the_field(table, message):
    doc = _voltaire_doc()
    doc["as_read"] = {**doc.get("as_read", {}), "port_guids": table}
    with pytest.raises(FormatError, match=r"^bad\.json: " + message):
        from_json(doc, "bad.json")
