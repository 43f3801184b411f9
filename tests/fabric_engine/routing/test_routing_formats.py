"""opensm-lfts.dump and ibroute output: read, write, map onto a fabric (issue 4); whole files only (issue 16)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.formats import opensm_lfts
from fabric_engine.routing import route
from fabric_engine.routing.quality import switch_hops
from fabric_engine.topology.generate import fat_tree

# The first table of a real dump: OpenSM 3.3.23 minhop on ibsim, GUIDs chosen by ibsim
# (they match nothing in our fabric), LIDs assigned by OpenSM.
REAL_DUMP_HEAD = """\
Unicast lids [0-14] of switch Lid 2 guid 0x0000000000200000 ('leaf01'):
0x0001 001 # Channel Adapter portguid 0x0000000000100001: 'gpu0001'
0x0002 000 # Switch portguid 0x0000000000200000: 'leaf01'
0x0003 003 # Switch portguid 0x0000000000200001: 'leaf02'
0x0004 003 # Switch portguid 0x0000000000200002: 'leaf03'
0x0005 002 # Channel Adapter portguid 0x0000000000100003: 'gpu0002'
0x0006 003 # Switch portguid 0x0000000000200003: 'leaf04'
0x0007 003 # Switch portguid 0x0000000000200004: 'spine01'
0x0008 003 # Channel Adapter portguid 0x0000000000100005: 'gpu0003'
0x0009 004 # Switch portguid 0x0000000000200005: 'spine02'
0x000a 004 # Channel Adapter portguid 0x0000000000100007: 'gpu0004'
0x000b 003 # Channel Adapter portguid 0x0000000000100009: 'gpu0005'
0x000c 004 # Channel Adapter portguid 0x000000000010000b: 'gpu0006'
0x000d 003 # Channel Adapter portguid 0x000000000010000d: 'gpu0007'
0x000e 004 # Channel Adapter portguid 0x000000000010000f: 'gpu0008 HCA-1'
14 lids dumped
"""

REAL_IBROUTE = """\
Unicast lids [0x0-0xe] of switch Lid 2 guid 0x0000000000200000 (leaf01):
  Lid  Out   Destination
       Port     Info\x20
0x0001 001 : (Channel Adapter portguid 0x0000000000100001: 'gpu0001')
0x0002 000 : (Switch portguid 0x0000000000200000: 'leaf01')
0x0009 004 : (Switch portguid 0x0000000000200005: 'spine02')
0x000e 004 : (Channel Adapter portguid 0x000000000010000f: 'gpu0008')
4 valid lids dumped\x20
"""


@pytest.mark.parametrize("engine", ["minhop", "ftree", "updn"])
@pytest.mark.parametrize("style", ["opensm", "ibroute"])
def test_round_trip(engine, style):
    f = fat_tree(hosts=27, radix=8)
    r = route(f, engine)
    back = opensm_lfts.read(opensm_lfts.write(r, style), f)
    assert np.array_equal(back.lft, r.lft)
    assert back.engine == "opensm-dump" and back.info["switches_missing"] == []


def test_a_foreign_dump_maps_by_name_onto_our_lids():
    f = fat_tree(hosts=8, radix=4)
    r = opensm_lfts.read(REAL_DUMP_HEAD, f, "opensm-lfts.dump")
    leaf = f.switch_index[f.node("leaf01")]
    assert r.lft[leaf, f.lid[f.node("gpu0001")]] == 1
    assert r.lft[leaf, f.lid[f.node("gpu0002")]] == 2
    assert r.lft[leaf, f.lid[f.node("gpu0008")]] == 4
    assert r.lft[leaf, f.lid[f.node("leaf01")]] == 0
    assert r.info["unmapped_entries"] == 0
    assert len(r.info["switches_missing"]) == 5
    # hosts on other leaves go up (ports 3 and 4), and the other switches have no table: walks break there
    remote = [f.lid[f.node(f"gpu000{i}")] for i in range(3, 9)]
    assert set(r.lft[leaf, remote].tolist()) == {3, 4}
    assert (switch_hops(r)[leaf] >= 0).sum() == 2


def test_ibroute_output_loads():
    f = fat_tree(hosts=8, radix=4)
    r = opensm_lfts.read(REAL_IBROUTE, f, "ibroute.txt")
    leaf = f.switch_index[f.node("leaf01")]
    assert r.lft[leaf, f.lid[f.node("spine02")]] == 4
    assert r.lft[leaf, f.lid[f.node("gpu0008")]] == 4


@pytest.mark.parametrize(("text", "line", "what"), [
    (REAL_DUMP_HEAD.replace("0x0005 002", "0x0005 two"), 6, "cannot parse"),
    (REAL_DUMP_HEAD.replace("'leaf01'):", "'leaf99'):").replace("0x0000000000200000 (", "0x00000000002000ff ("), 1,
     "leaf99"),
    (REAL_DUMP_HEAD.replace("0x0007 003", "0x0007 009"), 8, "port 9 is outside"),
    ("0x0001 001 # x\n", 1, "outside a"),
    ("nothing here\n", 1, "cannot parse"),
    (REAL_DUMP_HEAD + REAL_DUMP_HEAD, 17, "second table"),
])
def test_bad_input_names_the_line(text, line, what):
    f = fat_tree(hosts=8, radix=4)
    with pytest.raises(FormatError, match=what) as exc:
        opensm_lfts.read(text, f, "dump.txt")
    assert exc.value.line == line and exc.value.source == "dump.txt"


def test_empty_text_is_an_error():
    with pytest.raises(FormatError, match="no 'Unicast lids"):
        opensm_lfts.read("\n", fat_tree(hosts=8, radix=4))


def test_detect():
    assert opensm_lfts.detect(REAL_DUMP_HEAD) and opensm_lfts.detect(REAL_IBROUTE)
    assert not opensm_lfts.detect("Switch 8 \"leaf01\"\n")


# issue 16: a truncated, partial, edited or binary dump is an error naming the file and line.
@pytest.mark.parametrize(("text", "line", "what"), [
    (REAL_DUMP_HEAD.rsplit("\n", 2)[0] + "\n", 15, "ends inside the table"),  # footer cut off
    (REAL_DUMP_HEAD.split("0x000e")[0] + "0x000e 00", 15, "partial entry"),  # cut inside the last entry
    (REAL_DUMP_HEAD.split("0x000e")[0] + "0x000e", 15, "cannot parse"),
    (REAL_DUMP_HEAD.replace("14 lids dumped", "15 lids dumped"), 16, "says 15 lids dumped but has 14"),
    (REAL_DUMP_HEAD.replace("0x000e 004", "0x000f 004"), 15, "outside the table's range"),
    (REAL_DUMP_HEAD.replace("0x000e 004", "0x000d 004"), 15, "appears twice"),
    (REAL_DUMP_HEAD.replace("14 lids dumped\n", "") + REAL_DUMP_HEAD.replace("leaf01", "leaf02"), 16,
     "ends without its 'lids dumped'"),
    (REAL_IBROUTE.replace("4 valid", "5 valid"), 8, "says 5 lids dumped"),
    # numbers longer than any LID, port or GUID are refused by the line pattern, never handed to int()
    (REAL_DUMP_HEAD.replace("0x000e 004", "0x" + "f" * 5000 + " 004"), 15, "cannot parse"),
    (REAL_DUMP_HEAD.replace("14 lids dumped", "9" * 5000 + " lids dumped"), 16, "cannot parse"),
    (REAL_DUMP_HEAD.replace("[0-14]", "[0-014]").replace("0x000e 004", "0x000f 004"), 15, "outside the table"),
])
def test_truncated_or_edited_dumps_name_the_line(text, line, what):
    f = fat_tree(hosts=8, radix=4)
    with pytest.raises(FormatError, match=what) as exc:
        opensm_lfts.read(text, f, "dump.txt")
    assert exc.value.line == line and exc.value.source == "dump.txt"


def test_missing_switches_are_an_error_when_the_dump_must_be_complete(tmp_path):
    from fabric_engine.routing import load_lfts

    f = fat_tree(hosts=8, radix=4)
    path = tmp_path / "head.dump"
    path.write_text(REAL_DUMP_HEAD)
    with pytest.raises(FormatError, match=r"no table for 5 of the 6 switches of 'fat-tree-8': leaf02, leaf03"):
        load_lfts(f, path)
    assert load_lfts(f, path, complete=False).info["switches_missing"][0] == "leaf02"


def test_gzip_dump_loads_and_binary_data_is_refused(tmp_path):
    from fabric_engine.routing import load_lfts

    f = fat_tree(hosts=27, radix=8)
    r = route(f, "ftree")
    (tmp_path / "lfts.dump.gz").write_bytes(gzip.compress(opensm_lfts.write(r).encode()))
    assert np.array_equal(load_lfts(f, tmp_path / "lfts.dump.gz").lft, r.lft)
    (tmp_path / "cut.gz").write_bytes(gzip.compress(opensm_lfts.write(r).encode())[:-40])
    with pytest.raises(FormatError, match="truncated gzip data") as exc:
        load_lfts(f, tmp_path / "cut.gz")
    assert exc.value.source.endswith("cut.gz")
    (tmp_path / "bin.dump").write_bytes(opensm_lfts.write(r).encode()[:300] + bytes(range(128, 256)))
    with pytest.raises(FormatError, match="not UTF-8|binary") as exc:
        load_lfts(f, tmp_path / "bin.dump")
    assert exc.value.line == opensm_lfts.write(r)[:300].count("\n") + 1
    (tmp_path / "nul.dump").write_bytes(b"Unicast lids\x00\x00")
    with pytest.raises(FormatError, match="binary data"):
        load_lfts(f, tmp_path / "nul.dump")
