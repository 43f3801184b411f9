"""ibweb JSON form (issue 3): from_json inverts to_json; format inference and read/write."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fabric_engine import formats
from fabric_engine.errors import FormatError
from fabric_engine.formats.json_format import from_json, to_json
from fabric_engine.topology.generate import dragonfly_plus, fat_tree

DATA = Path(__file__).parents[2] / "data"


def test_from_json_inverts_to_json():
    f = fat_tree(hosts=40, radix=8, levels=3, storage_servers=3, mgmt_nodes=2)
    doc = to_json(f)
    g = from_json(doc)
    assert to_json(g) == doc
    for k in ("guid", "lid", "port_lid", "port_guid", "role", "tier", "group"):
        assert np.array_equal(getattr(g, k), getattr(f, k)), k
    assert from_json(json.dumps(doc)).num_links == f.num_links


def test_to_json_shape_is_unchanged():
    doc = to_json(fat_tree(hosts=2, radix=4))
    assert list(doc) == ["format", "version", "name", "nodes", "links"]
    assert list(doc["nodes"]) == ["kind", "name", "guid", "lid", "nports", "role", "tier", "group"]
    assert list(doc["links"]) == ["a_node", "a_port", "b_node", "b_port", "width", "speed", "capacity_gbps",
                                  "length_m"]
    assert doc["nodes"]["guid"][0] == "0x98039b0300000001" and doc["links"]["capacity_gbps"][0] == 400.0


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d.update(version=2), "version"),
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d["nodes"]["kind"].__setitem__(0, "router"), r"nodes.kind\[0\]: unknown value 'router'"),
    (lambda d: d["links"]["speed"].__setitem__(0, "ZDR"), r"links.speed\[0\]: unknown value 'ZDR'"),
    (lambda d: d["nodes"]["lid"].pop(), "nodes: arrays differ in length"),
    (lambda d: d["nodes"]["guid"].__setitem__(0, "zz"), "nodes.guid"),
    (lambda d: d["links"].pop("a_port"), "links.a_port: missing"),
    (lambda d: d["links"]["a_port"].__setitem__(0, 9), "port 9 of leaf01 is outside 1..4"),
])
def test_bad_documents_name_the_field(mutate, message):
    doc = to_json(fat_tree(hosts=2, radix=4))
    mutate(doc)
    with pytest.raises(FormatError, match=message):
        from_json(doc, source="api")


def test_json_syntax_error_names_the_line():
    with pytest.raises(FormatError) as info:
        from_json('{\n  "format": "ibweb-fabric",\n  "version": 1,,\n}', source="upload.json")
    assert info.value.line == 3 and str(info.value).startswith("upload.json:3: invalid JSON")


@pytest.mark.parametrize("fmt", formats.WRITABLE)
def test_read_infers_every_format(fmt):
    f = dragonfly_plus(groups=2, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=2, radix=8)
    text = formats.write(f, fmt)
    assert formats.detect(text) == fmt
    g = formats.read(text)
    assert g.node_name.tolist() == f.node_name.tolist()
    assert formats.read(text.encode()).num_links == f.num_links


def test_read_from_path_and_by_extension(tmp_path):
    f = fat_tree(hosts=4, radix=4)
    p = tmp_path / "fabric.net"
    p.write_text(formats.write(f, "ibsim"))
    assert formats.read(p).name == "fabric"
    with pytest.raises(FormatError, match="cannot tell the format"):
        formats.read(str(p))  # a str is the text, never a file name (issue 26)
    assert formats.format_from_name("x.json") == "json" and formats.format_from_name("x.topo") == "ibnetdiscover"
    assert formats.detect("# nothing here\n", name="up.ibnd") == "ibnetdiscover"
    with pytest.raises(FormatError, match="cannot tell the format"):
        formats.read("just some words\nand more\n")
    with pytest.raises(FormatError, match="unknown format 'xml'"):
        formats.read(formats.write(f, "json"), fmt="xml")


def test_read_errors_name_the_path(tmp_path):
    p = tmp_path / "bad.ibnd"
    p.write_text((DATA / "broken_unknown_speed.txt").read_text())
    with pytest.raises(FormatError) as info:
        formats.read(p)
    assert info.value.source == str(p) and info.value.line is not None
    with pytest.raises(FormatError, match="not UTF-8") as info:
        formats.read(b"Switch 4 \xff\xfe\n", source="upload")
    assert info.value.line == 1
