"""ibdiagnet output (db_csv, lst, pm, net_dump) and its archives as fabric and counter input."""

from __future__ import annotations

import gzip
import io
import re
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.formats import ibdiagnet as ib
from fabric_engine.telemetry.counters import COLUMN, CounterSamples
from fabric_engine.topology import KIND_HOST, ROLE_AGGREGATION, ROLES, SPEEDS, TIER_NAMES

DATA = Path(__file__).parents[2] / "data" / "captures" / "ibdiagnet"
DB_CSV = (DATA / "ibdiagnet2.db_csv").read_text()
LST = (DATA / "ibdiagnet2.lst").read_text()
PM = (DATA / "ibdiagnet2.pm").read_text()
LEAF01, LEAF02 = "MF0;leaf01:MQM9700/U1", "MF0;leaf02:MQM8700/U1"
SPINE01, SPINE02 = "MF0;spine01:MQM9700/U1", "MF0;spine02:MQM9700/U1"
AN = "Mellanox Technologies Aggregation Node"
MTIME = 1767268800.0  # the archives' member times


def cables(f) -> dict:
    """Cable -> (lanes, speed name), keyed by the two (name, port) ends."""
    return {frozenset({(str(f.node_name[a]), int(ap)), (str(f.node_name[b]), int(bp))}): (int(w), SPEEDS[s])
            for a, ap, b, bp, w, s in zip(f.a_node, f.a_port, f.b_node, f.b_port, f.width, f.speed, strict=True)}


def by_name(f) -> dict:
    """Node facts by name: kind, GUID, LID, ports, role, tier, port LIDs, port GUIDs."""
    out = {}
    for i, name in enumerate(f.node_name.tolist()):
        s = slice(int(f.port_offset[i]), int(f.port_offset[i]) + int(f.nports[i]))
        out[name] = (int(f.kind[i]), int(f.guid[i]), int(f.lid[i]), int(f.nports[i]), ROLES[f.role[i]],
                     TIER_NAMES[f.tier[i]], f.port_lid[s].tolist(), [int(g) for g in f.port_guid[s]])
    return out


def edge(a: str, ap: int, b: str, bp: int) -> frozenset:
    return frozenset({(a, ap), (b, bp)})


@pytest.fixture(scope="module")
def fabric():
    return ib.read_db_csv(DB_CSV, "ibdiagnet2.db_csv")


# ------------------------------------------------------------------ topology


def test_db_csv_nodes_hosts_switches_and_links(fabric):
    f = fabric
    assert (f.num_nodes, f.num_hosts, len(f.switches), f.num_links) == (9, 4, 4, 10)
    assert sorted(f.node_name[f.hosts].tolist()) == ["gpu001", "gpu002", "gpu003", "stor001"]
    assert sorted(f.node_name[f.switches].tolist()) == sorted([LEAF01, LEAF02, SPINE01, SPINE02])
    roles = {n: v[4] for n, v in by_name(f).items()}
    assert roles == {SPINE01: "switch", SPINE02: "switch", LEAF01: "switch", LEAF02: "switch", AN: "aggregation",
                     "gpu001": "gpu", "gpu002": "gpu", "gpu003": "gpu", "stor001": "storage"}
    tiers = {n: v[5] for n, v in by_name(f).items() if v[0] != KIND_HOST}
    assert tiers == {SPINE01: "spine", SPINE02: "spine", LEAF01: "leaf", LEAF02: "leaf"}
    assert f.meta["source_format"] == "ibdiagnet_db_csv" and f.meta["lids_filled"] == 0


def test_speeds_and_widths_ndr_hdr_fdr_and_the_port_trained_down_to_1x(fabric):
    c = cables(fabric)
    assert c[edge(LEAF01, 33, SPINE01, 1)] == (4, "NDR") and c[edge(LEAF01, 34, SPINE02, 1)] == (4, "NDR")
    assert c[edge(LEAF02, 37, SPINE01, 2)] == (4, "HDR") and c[edge(LEAF02, 38, SPINE02, 2)] == (4, "HDR")
    assert c[edge("gpu001", 1, LEAF01, 1)] == (4, "NDR")
    assert c[edge("gpu002", 1, LEAF01, 2)] == (1, "NDR")  # trained down: a quarter of the lanes
    assert c[edge("gpu003", 1, LEAF02, 1)] == (4, "HDR")
    assert c[edge("stor001", 1, LEAF01, 3)] == (4, "FDR") and c[edge("stor001", 2, LEAF02, 2)] == (4, "FDR")
    assert c[edge(AN, 1, LEAF01, 65)] == (4, "NDR")
    speeds = [s for _, s in c.values()]
    assert (speeds.count("NDR"), speeds.count("HDR"), speeds.count("FDR")) == (5, 3, 2)
    gpu002 = fabric.node("gpu002")
    assert fabric.capacity_gbps[fabric.out_link(gpu002, 1)] == 100.0


def test_guids_lids_and_port_guids_as_the_file_gives_them(fabric):
    n = by_name(fabric)
    assert n[SPINE01][1:4] == (0xB83FD20300A10001, 1, 65) and n[LEAF02][1:4] == (0x043F720300B20004, 4, 41)
    assert set(n[LEAF01][6]) == {3}  # switch ports carry the switch LID
    # mlx5 HCAs: the port GUID is the node GUID (not node GUID + 1, the Fabric default).
    assert n["gpu001"][1] == 0x946DAE0300C30010 and n["gpu001"][7] == [0x946DAE0300C30010]
    assert [n[h][2] for h in ("gpu001", "gpu002", "gpu003")] == [6, 7, 8]
    assert n[AN][1:3] == (0xB83FD20300A1000B, 5)


def test_dual_port_hca_is_one_node_with_two_cabled_ports(fabric):
    kind, guid, lid, nports, role, _, port_lids, port_guids = by_name(fabric)["stor001"]
    assert (kind, guid, lid, nports, role) == (KIND_HOST, 0x0002C90300E50040, 9, 2, "storage")
    assert port_lids == [9, 10] and port_guids == [0x0002C90300E50041, 0x0002C90300E50042]
    s = fabric.node("stor001")
    assert (fabric.port_out_link[fabric.port_offset[s]:fabric.port_offset[s] + 2] >= 0).all()


def test_aggregation_node_is_no_host_and_marks_its_switch(fabric):
    an = fabric.node(AN)
    assert fabric.role[an] == ROLE_AGGREGATION and an not in fabric.hosts
    assert fabric.aggregation_nodes.tolist() == [an]
    assert fabric.node_name[fabric.aggregation_switches].tolist() == [LEAF01]
    assert fabric.meta["aggregation_nodes"] == 1


def test_aggregation_node_is_told_by_its_system_image_guid_alone():
    text = DB_CSV.replace(f'"{AN}"', '"sharp-an leaf01"')
    f = ib.read_db_csv(text, "renamed.db_csv")
    an = f.node("sharp-an leaf01")
    assert f.role[an] == ROLE_AGGREGATION and f.num_hosts == 4
    # A host sharing no system GUID with its switch stays a host even when named alike.
    assert f.role[f.node("gpu001")] == ROLES.index("gpu")


def test_lst_gives_the_fabric_the_db_csv_gives(fabric):
    f = ib.read_lst(LST, "ibdiagnet2.lst")
    assert cables(f) == cables(fabric)
    assert by_name(f) == by_name(fabric)
    assert f.meta["source_format"] == "ibdiagnet_lst" and f.meta["aggregation_nodes"] == 1


def _hex_dialect(line: str) -> str:
    """A line as other writers print it: 0x-prefixed numbers, SPD before LOG, signalling rates."""
    line = re.sub(r"\b(Ports|SystemGUID|NodeGUID|PortGUID|VenID|DevID|Rev|LID|PN):([0-9A-Fa-f]+)",
                  lambda m: f"{m.group(1)}:0x{m.group(2).lstrip('0') or '0'}", line)
    rate = {"100": "106.25", "50": "53.125", "14": "14.0625"}
    phy, log, spd = re.search(r"(PHY=\S+) (LOG=\S+) SPD=(\S+)$", line).groups()
    return line[: line.index("PHY=")] + f"{phy} SPD={rate[spd]} {log}"


def test_lst_hex_dialect_with_signalling_rates_reads_alike(fabric):
    text = "\n".join(_hex_dialect(ln) for ln in LST.splitlines())
    assert "Ports:0x41" in text and "SPD=106.25 LOG=ACT" in text
    assert cables(ib.read_lst(text)) == cables(fabric)


def test_lst_links_listed_from_both_ends_and_down_links(fabric):
    lines = LST.splitlines()
    end = r"(\{ \S+ Ports:.*? PN:\w+ \})"
    swapped = [re.sub(rf"^{end} {end} (PHY.*)$", r"\2 \1 \3", ln) for ln in lines]
    assert swapped != lines
    down = lines[0].replace("PN:21 }", "PN:05 }", 1).replace("PN:01 }", "PN:07 }").replace("LOG=ACT", "LOG=DWN")
    f = ib.read_lst("\n".join(lines + swapped + [down]) + "\n")
    assert cables(f) == cables(fabric)
    assert f.meta["links_down"] == 1


# ------------------------------------------------------------------ counters


def _row(s: CounterSamples, lid: int, port: int) -> int:
    return int(np.flatnonzero((s.lid == lid) & (s.port == port))[0])


def test_counter_sample_from_db_csv_pm_info():
    s = ib.counters_from_db_csv(DB_CSV, "ibdiagnet2.db_csv", t=1000.0)
    assert isinstance(s, CounterSamples) and len(s) == 20  # both ends of the 10 cables
    assert s.values.shape == (20, len(COLUMN)) and s.lid.dtype == np.int32 and s.port.dtype == np.int16
    g = _row(s, 7, 1)  # gpu002, trained down and erroring
    assert s.values[g, COLUMN["SymbolErrorCounter"]] == 1234 and s.bits[g, COLUMN["SymbolErrorCounter"]] == 64
    assert s.values[g, COLUMN["LinkDownedCounter"]] == 3 and s.values[g, COLUMN["LinkErrorRecoveryCounter"]] == 7
    sw = _row(s, 3, 2)  # its leaf port: addressed through the switch LID
    assert s.values[sw, COLUMN["SymbolErrorCounter"]] == 987 and s.values[sw, COLUMN["PortRcvErrors"]] == 12
    assert s.values[_row(s, 3, 33), COLUMN["PortXmitDiscards"]] == 42
    w = _row(s, 4, 37)  # the 32-bit PortXmitWait saturated; the 64-bit one is read
    assert s.values[w, COLUMN["PortXmitWait"]] == 123456789012 and s.bits[w, COLUMN["PortXmitWait"]] == 64
    k = _row(s, 6, 1)  # gpu001: data counters from PortCountersExtended, in 4-octet words
    assert s.bits[k, COLUMN["PortXmitData"]] == 64 and s.values[k, COLUMN["PortXmitData"]] > 0xFFFFFFFF
    assert s.values[k, COLUMN["PortXmitPkts"]] == s.values[k, COLUMN["PortUnicastXmitPkts"]] + \
        s.values[k, COLUMN["PortMulticastXmitPkts"]]
    c = _row(s, 9, 1)  # a ConnectX-3: no 64-bit error counters (0xfffffffffffffffe), the basic ones stand
    assert s.bits[c, COLUMN["SymbolErrorCounter"]] == 16 and s.bits[c, COLUMN["PortXmitWait"]] == 32
    assert s.bits[c, COLUMN["QP1Dropped"]] == 0 and s.t[c, COLUMN["QP1Dropped"]] == 0.0
    assert s.t[g, COLUMN["SymbolErrorCounter"]] == 1000.0


def test_counter_sample_from_pm_equals_the_db_csv_one():
    a = ib.counters_from_db_csv(DB_CSV, t=5.0).merged()
    b = ib.counters_from_pm(PM, "ibdiagnet2.pm", t=5.0).merged()
    # ibdiagnet2.pm also has PortRcvErrorDetails' port_local_physical_errors, which this db_csv's PM_INFO lacks
    local = COLUMN["PortLocalPhysicalErrors"]
    assert (a.bits[:, local] == 0).all() and sorted(b.bits[:, local].tolist()) == [0] * 2 + [16] * 18  # 2 NA
    assert not b.values[:, local].any()
    b = type(b)(b.lid, b.port, b.values, np.where(np.arange(b.bits.shape[1]) == local, 0, b.bits).astype(np.uint8),
                np.where(np.arange(b.t.shape[1]) == local, 0.0, b.t))
    for attr in ("lid", "port", "values", "bits", "t"):
        assert np.array_equal(getattr(a, attr), getattr(b, attr)), attr


# ------------------------------------------------------------------ detection, folders, archives


def test_is_ibdiagnet_tells_each_file_by_content():
    for name, kind in (("ibdiagnet2.db_csv", "db_csv"), ("ibdiagnet2.lst", "lst"), ("ibdiagnet2.pm", "pm"),
                       ("ibdiagnet2.net_dump", "net_dump")):
        assert ib.is_ibdiagnet((DATA / name).read_text()) == kind
    assert ib.is_ibdiagnet('Switch 36 "S-0002c90300000001"  # "sw" lid 1\n') is None
    assert ib.is_ibdiagnet("START_NODES\nNodeGUID,NodeType,NodeDesc\nEND_NODES\n") is None  # opensm-smdb.dump
    with pytest.raises(FormatError, match="no topology"):
        ib.read(PM, "x.pm")


@pytest.mark.parametrize("archive", ["ibdiagnet2_capture.tar.gz", "ibdiagnet2_capture.zip"])
def test_archives_of_the_folder_read_like_the_files(fabric, archive):
    data = (DATA / archive).read_bytes()
    f = ib.read_archive(data, archive)
    assert f.name == "ibdiagnet2_capture" and cables(f) == cables(fabric) and by_name(f) == by_name(fabric)
    cap = ib.load_archive(data, archive)
    assert cap.files == {"db_csv": "ibdiagnet2/ibdiagnet2.db_csv"}
    want = ib.counters_from_db_csv(DB_CSV, t=1.0)
    assert np.array_equal(cap.counters.values, want.values) and np.array_equal(cap.counters.keys, want.keys)
    if archive.endswith(".tar.gz"):
        assert cap.counters.t.max() == MTIME  # the member's time: when ibdiagnet wrote it


def _tar(members: dict[str, bytes], mode: str = "w:gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_archive_without_db_csv_uses_the_lst_and_the_pm(fabric):
    data = _tar({"run/ibdiagnet2.lst": LST.encode(), "run/ibdiagnet2.pm": PM.encode(), "run/ibdiagnet2.log": b"x"})
    cap = ib.load_archive(data, "lst-only.tgz", t=7.0)
    assert cables(cap.fabric) == cables(fabric) and cap.fabric.meta["source_format"] == "ibdiagnet_lst"
    assert cap.files == {"lst": "run/ibdiagnet2.lst", "pm": "run/ibdiagnet2.pm"} and len(cap.counters) == 20


def test_one_gzipped_file_is_an_upload_too(fabric):
    f = ib.read_archive(gzip.compress(LST.encode()), "upload.bin")  # told by content, not name
    assert cables(f) == cables(fabric)
    assert ib.read_archive(DB_CSV.encode(), "ibdiagnet2.db_csv").num_links == 10


def test_folder_in_any_subfolder(tmp_path, fabric):
    assert cables(ib.read_folder(DATA)) == cables(fabric)
    (tmp_path / "var" / "ibdiagnet2").mkdir(parents=True)
    (tmp_path / "var" / "ibdiagnet2" / "ibdiagnet2.lst").write_text(LST)
    cap = ib.load_folder(tmp_path)
    assert cables(cap.fabric) == cables(fabric) and cap.counters is None
    assert cap.files == {"lst": "var/ibdiagnet2/ibdiagnet2.lst"}
    (tmp_path / "empty").mkdir()
    with pytest.raises(FormatError, match="no ibdiagnet2.db_csv or ibdiagnet2.lst"):
        ib.read_folder(tmp_path / "empty")


def test_archive_with_a_path_traversal_member_is_refused():
    for bad in ("../ibdiagnet2.db_csv", "ibdiagnet2/../../etc/passwd", "/etc/ibdiagnet2.lst"):
        with pytest.raises(FormatError, match="outside the archive"):
            ib.read_archive(_tar({"ibdiagnet2/ibdiagnet2.db_csv": DB_CSV.encode(), bad: b"x"}), "evil.tgz")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ibdiagnet2/ibdiagnet2.lst", LST)
        zf.writestr("../../ibdiagnet2.pm", PM)
    with pytest.raises(FormatError, match="outside the archive"):
        ib.read_archive(buf.getvalue(), "evil.zip")


def test_oversized_members_are_refused_before_they_are_read():
    data = (DATA / "ibdiagnet2_capture.tar.gz").read_bytes()
    with pytest.raises(FormatError, match=r"ibdiagnet2.db_csv is [\d,]+ bytes, more than the 1,000 read"):
        ib.load_archive(data, "capture.tgz", max_bytes=1000)
    with pytest.raises(FormatError, match="more than the 1,000 read"):
        ib.load_archive((DATA / "ibdiagnet2_capture.zip").read_bytes(), "capture.zip", max_bytes=1000)
    # A tar header declaring a 5 GiB member: refused on the header, nothing is inflated.
    info = tarfile.TarInfo("ibdiagnet2/ibdiagnet2.db_csv")
    info.size = 5 * 2**30
    with pytest.raises(FormatError, match="bytes"):
        ib.read_archive(info.tobuf(format=tarfile.GNU_FORMAT) + b"\0" * 1024, "huge.tar")


def test_tar_extended_headers_are_bounded_before_tarfile_reads_them():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        info = tarfile.TarInfo("ibdiagnet2/ibdiagnet2.lst")
        info.pax_headers = {"comment": "x" * (2 << 20)}  # a gzip bomb would make this gigabytes
        info.size = len(LST)
        tf.addfile(info, io.BytesIO(LST.encode()))
    with pytest.raises(FormatError, match="extended header of 2,097,1"):
        ib.read_archive(gzip.compress(buf.getvalue()), "pax.tgz")


def test_other_archive_abuse_is_refused():
    two = _tar({"a/ibdiagnet2.db_csv": DB_CSV.encode(), "b/ibdiagnet2.db_csv": DB_CSV.encode()})
    with pytest.raises(FormatError, match="two ibdiagnet2.db_csv"):
        ib.read_archive(two, "two.tgz")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        link = tarfile.TarInfo("ibdiagnet2/ibdiagnet2.db_csv")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        tf.addfile(link)
    with pytest.raises(FormatError, match="is a link"):
        ib.read_archive(buf.getvalue(), "link.tar")
    with pytest.raises(FormatError, match=r"more than 10,000 members"):
        ib.read_archive(_tar({f"f{i}": b"" for i in range(10_001)}, "w"), "many.tar")
    data = (DATA / "ibdiagnet2_capture.tar.gz").read_bytes()
    with pytest.raises(FormatError) as exc:
        ib.read_archive(data[: len(data) // 2], "cut.tgz")
    assert exc.value.source.startswith("cut.tgz")


# ------------------------------------------------------------------ broken files


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_truncated_db_csv_names_its_last_line():
    cut = DB_CSV[: DB_CSV.index("START_LINKS") + 200]
    with pytest.raises(FormatError, match="ends inside section LINKS .* truncated") as exc:
        ib.read_db_csv(cut, "cut.db_csv")
    assert exc.value.line == cut.count("\n") + 1 and exc.value.source == "cut.db_csv"
    with pytest.raises(FormatError, match="no START_LINKS section"):
        ib.read_db_csv(DB_CSV[: DB_CSV.index("START_LINKS")])


@pytest.mark.parametrize(("old", "new", "needle", "words"), [
    ("0x946dae0300c30020,1,0xb83fd20300a10003,2\n", "0x946dae0300c30020,1\n", "0x946dae0300c30020,1\n",
     "has 2 fields, its header 4"),
    ('"gpu003 mlx5_0",1,1', '"gpu003 mlx5_0",x1,1', '"gpu003 mlx5_0",x1', "NumPorts: 'x1' is not a number"),
    ("0x0c42a10300d40030,1,0x043f720300b20004,1", "0x0c42a10300d40031,1,0x043f720300b20004,1",
     "0x0c42a10300d40031,1,", "has no NODES record"),
    ("0x0c42a10300d40030,1,0x043f720300b20004,1", "0x0c42a10300d40030,1,0x043f720300b20004,2",
     "0x0002c90300e50040,2,0x043f720300b20004,2", "port 2 of node 'MF0;leaf02:MQM8700/U1' is cabled twice"),
    ("0x0c42a10300d40030,1,0x043f720300b20004,1", "0x0c42a10300d40030,1,0x043f720300b20004,9",
     "0x0c42a10300d40030,1,0x043f720300b20004,9", "port 9 of 'MF0;leaf02:MQM8700/U1' has no PORTS row"),
    ('"stor001 HCA-1",2,1', '"stor001 HCA-1",2,3', '"stor001 HCA-1",2,3', "router"),
    ('"gpu003 mlx5_0",1', '"gpu003 mlx5_0,1', '"gpu003 mlx5_0,1', "unbalanced quote"),
])
def test_broken_db_csv_rows_name_their_line(old, new, needle, words):
    assert old in DB_CSV
    text = DB_CSV.replace(old, new, 1)
    with pytest.raises(FormatError, match=re.escape(words)) as exc:
        ib.read_db_csv(text, "broken.db_csv")
    assert exc.value.line == _line_of(text, needle)


def test_duplicate_node_guid_and_bad_lid_name_their_line():
    row = next(ln for ln in DB_CSV.splitlines() if ln.startswith('"gpu003'))
    text = DB_CSV.replace(row, row + "\n" + row.replace("gpu003", "gpu004"), 1)
    with pytest.raises(FormatError, match="duplicate NodeGUID") as exc:
        ib.read_db_csv(text)
    assert exc.value.line == _line_of(text, '"gpu004')
    port = next(ln for ln in DB_CSV.splitlines() if ln.startswith("0x0c42a10300d40030,0x0c42a10300d40030,1,"))
    fields = port.split(",")
    fields[6] = "50000"
    text = DB_CSV.replace(port, ",".join(fields), 1)
    with pytest.raises(FormatError, match="LID 50000 is above") as exc:
        ib.read_db_csv(text)
    assert exc.value.line == _line_of(text, ",".join(fields))


@pytest.mark.parametrize(("mangle", "words"), [
    (lambda ln: ln[:100], "malformed or truncated link line"),
    (lambda ln: ln.replace("SPD=50", "SPD=75"), "unknown link speed SPD=75"),
    (lambda ln: ln.replace("PHY=4x", "PHY=3x"), "unknown link width PHY=3x"),
    (lambda ln: ln.replace("{ SW Ports:29", "{ Rt Ports:29", 1), "router (Rt) nodes are not supported"),
    (lambda ln: ln.replace("PN:01 }", "PN:02 }", 1), "port 2 is outside 1..1"),
])
def test_broken_lst_lines_name_their_line(mangle, words):
    lines = LST.splitlines()
    k = next(i for i, ln in enumerate(lines) if "gpu003" in ln)
    lines[k] = mangle(lines[k])
    with pytest.raises(FormatError, match=re.escape(words)) as exc:
        ib.read_lst("\n".join(lines), "broken.lst")
    assert exc.value.line == k + 1


def test_lst_port_on_two_cables_and_conflicting_nodes_name_their_line():
    lines = LST.splitlines()
    other = lines[6].replace("PN:02 }", "PN:07 }")  # gpu002 port 1 also to leaf01 port 7
    with pytest.raises(FormatError, match="cabled twice") as exc:
        ib.read_lst("\n".join([*lines, other]))
    assert exc.value.line == len(lines) + 1
    changed = lines[7].replace("{ CA Ports:01 SystemGUID:0c42", "{ SW Ports:01 SystemGUID:0c42")
    with pytest.raises(FormatError, match="is SW with 1 ports here but CA"):
        ib.read_lst("\n".join([*lines, changed]))


@pytest.mark.parametrize(("old", "new", "words"), [
    ("symbol_error_counter=0x00000000000004d2", "symbol_error_counter=0xQQ", "'0xQQ' is not a counter value"),
    ("port_xmit_wait=0x0000000000003a98", "port_xmit_wait=0x1000000000", "does not fit in 32 bits"),
    ("Port=1 Lid=0x0007", "Pert=1 Lid=0x0007", "not an ibdiagnet2.pm line"),
])
def test_broken_pm_names_its_line(old, new, words):
    assert old in PM
    text = PM.replace(old, new, 1)
    with pytest.raises(FormatError, match=re.escape(words)) as exc:
        ib.counters_from_pm(text, "broken.pm")
    assert exc.value.line == _line_of(text, new)
    with pytest.raises(FormatError, match="before any 'Port=") as exc:
        ib.counters_from_pm("symbol_error_counter=0x0\n" + PM)
    assert exc.value.line == 1


def test_pm_info_of_an_unknown_port_and_a_missing_section_are_format_errors():
    pm_row = next(ln for ln in DB_CSV.split("START_PM_INFO")[1].splitlines()[2:] if ln.startswith("0x0c42"))
    text = DB_CSV.replace(pm_row, pm_row.replace("0x0c42a10300d40030", "0x0c42a10300d40099"), 1)
    with pytest.raises(FormatError, match="counters of a node that has no NODES record") as exc:
        ib.counters_from_db_csv(text)
    assert exc.value.line == _line_of(text, "0x0c42a10300d40099")
    with pytest.raises(FormatError, match="no START_PM_INFO"):
        ib.counters_from_db_csv(DB_CSV[: DB_CSV.index("START_PM_INFO")])


def test_lst_of_a_terminal_session_skips_prompts_and_other_tools_with_warnings():
    """Issue 34: `cat ibdiagnet2.lst` in a session that ran ibswitches first reads like the file alone."""
    session = ("[root@mgmt ~]# ibswitches\n"
               'Switch\t: 0x0000000000000010 ports 4 "a" base port 0 lid 1 lmc 0\n'
               "[root@mgmt ~]# cat /var/tmp/ibdiagnet2/ibdiagnet2.lst\n")
    f = ib.read_lst(session + LST + "[root@mgmt ~]# \n", "session.txt")
    assert cables(f) == cables(ib.read_lst(LST))
    n = LST.count("\n")
    assert [(w["line"], w["reason"]) for w in f.meta["warnings"]] == [
        (1, "shell prompt skipped"), (2, "ibswitches output skipped (line 2)"), (3, "shell prompt skipped"),
        (n + 4, "shell prompt skipped")]
    with pytest.raises(FormatError, match="malformed or truncated link line") as err:
        ib.read_lst("hello\n" + LST)
    assert err.value.line == 1


def test_lst_link_listed_from_both_ends_at_two_rates_is_read_lower_and_trained_down(fabric):
    """Issue 34: the ends of one link disagree (a retrain between the two reads): the lower, flagged."""
    lines = LST.splitlines()
    end = r"(\{ \S+ Ports:.*? PN:\w+ \})"
    first = re.sub(rf"^{end} {end} (PHY.*)$", r"\2 \1 \3", lines[0]).replace("PHY=4x", "PHY=1x")
    f = ib.read_lst("\n".join(lines + [first]) + "\n")
    assert set(cables(f)) == set(cables(fabric)) and f.meta["rate_mismatches"] == 1
    assert f.trained_down.tolist() == [True] + [False] * (f.num_links - 1)
    assert cables(f)[frozenset({("MF0;leaf01:MQM9700/U1", 33), ("MF0;spine01:MQM9700/U1", 1)})] == (1, "NDR")
    assert "trained_down" not in ib.read_lst(LST).meta
