"""Issue 22: the CLI reads real captures -- ibdiagnet folders and archives, ``ibnetdiscover -p``, a node name
map -- and prints the lines it skipped on stderr."""

from __future__ import annotations

import json
from pathlib import Path

from fabric_engine import formats
from fabric_engine.cli import main

CAPTURES = Path(__file__).parents[1] / "data" / "captures"


def info(capsys, *args: str) -> tuple[dict, str]:
    assert main(["info", "--json", *args]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def test_info_of_an_ibdiagnet_folder_and_archive_counts_nodes_and_counters(capsys):
    folder, _ = info(capsys, str(CAPTURES / "ibdiagnet"))
    for archive in ("ibdiagnet2_capture.tar.gz", "ibdiagnet2_capture.zip"):
        d, _ = info(capsys, str(CAPTURES / "ibdiagnet" / archive))
        assert d["nodes"] == folder["nodes"] == {"hosts": 4, "switches": 4, "host_systems": 4}
        assert d["sharp"] == {"aggregation_nodes": 1, "switches": 1}
        assert d["counters"]["ports"] == folder["counters"]["ports"] == 20
        assert d["counters"]["with_errors"] == 3


def test_info_prints_the_skipped_lines_of_a_capture_on_stderr(capsys):
    assert main(["info", str(CAPTURES / "ibnetdiscover" / "captured_putty_crlf.txt")]) == 0
    out = capsys.readouterr()
    assert "fabric captured_putty_crlf: 7 hosts, 3 switches, 13 links" in out.out
    assert "SHARP:            3 Aggregation Nodes on 3 switches (not hosts)" in out.out
    assert "loopbacks:        1 (spine01[10]-[11]), not routed" in out.out
    lines = out.err.splitlines()
    assert lines[0].endswith("captured_putty_crlf.txt:1: terminal logger banner skipped: "
                             "=~=~=~=~=~=~=~=~=~=~=~= PuTTY log 2026.11.30 09:12:40 =~=~=~=~=~=~=~=~=~=~=~=")
    assert len(lines) == 6 and ":114: shell prompt skipped" in lines[-1]


def test_convert_keeps_chassis_and_reads_ports_reports_and_name_maps(tmp_path, capsys):
    out = tmp_path / "director.ibnd"
    assert main(["convert", str(CAPTURES / "ibnetdiscover" / "director_cs7500.ibnetdiscover"), str(out)]) == 0
    assert formats.read(out).meta["chassis"][0]["guid"] == "0x0002c90300c0ffee"
    capsys.readouterr()
    names = tmp_path / "names.map"
    names.write_text('0xb8cef603000a0002 "leaf-a01"\n')
    d, err = info(capsys, str(CAPTURES / "ibnetdiscover" / "ports_p.txt"), "--from", "ibnetdiscover-ports")
    assert d["nodes"]["hosts"] == 7 and [w["line"] for w in d["warnings"]] == [1, 29, 54, 58] and err == ""
    assert main(["convert", str(CAPTURES / "ibnetdiscover" / "ibdiagnet_ndr.ibnetdiscover"), str(tmp_path / "n.json"),
                 "--node-name-map", str(names)]) == 0
    assert "leaf-a01" in formats.read(tmp_path / "n.json").node_name.tolist()


def test_info_of_perfquery_captures_shows_detail_counters_as_errors(capsys):
    """`info` of `perfquery -x`, `perfquery`, `-E` and `-D` of one port, captured together (issue 22)."""
    d, err = info(capsys, str(CAPTURES / "perfquery" / "x_basic_E_D_one_port.txt"))
    assert (d["ports"], d["lids"], d["with_errors"]) == (1, [12], 1)
    assert {"PortLocalPhysicalErrors", "PortSwHOQLifetimeLimitDiscards", "PortXmitWait"} <= set(d["counters"])
    assert d["errors"] == {"SymbolErrorCounter": {"total": 4, "ports": 1},
                           "LinkErrorRecoveryCounter": {"total": 1, "ports": 1},
                           "PortRcvErrors": {"total": 21, "ports": 1}, "PortXmitDiscards": {"total": 9, "ports": 1},
                           "PortLocalPhysicalErrors": {"total": 17, "ports": 1},
                           "PortBufferOverrunErrors": {"total": 3, "ports": 1},
                           "PortLoopingErrors": {"total": 1, "ports": 1},
                           "PortInactiveDiscards": {"total": 9, "ports": 1}}
    assert [w["line"] for w in d["warnings"]] == [1, 13, 36, 46] and err == ""
    assert main(["info", str(CAPTURES / "perfquery" / "E_D_several_lids.txt")]) == 0
    out = capsys.readouterr()
    assert "perfquery E_D_several_lids.txt: 4 ports sampled, 10 counters read, 4 ports with error counts" in out.out
    assert "PortSwHOQLifetimeLimitDiscards              7 on 1 port\n" in out.out
    assert out.err.splitlines()[1].endswith("E_D_several_lids.txt:29: shell prompt: [root@ufm01 ~]# perfquery -E -a 21")


def test_info_of_a_broken_perfquery_detail_line_names_file_and_line(capsys):
    path = str(CAPTURES / "perfquery" / "broken_detail_value.txt")
    assert main(["info", path]) != 0
    err = capsys.readouterr().err
    assert "broken_detail_value.txt" in err and "6" in err and "PortBufferOverrunErrors: '3O'" in err


def test_route_prints_the_skipped_lines_of_a_noisy_capture_on_stderr(capsys):
    """`route` reads a PuTTY log like `info` does: the tables on stdout, every skipped line on stderr."""
    path = str(CAPTURES / "ibnetdiscover" / "captured_putty_crlf.txt")
    assert main(["route", path, "--engine", "minhop", "--dump-lfts", "-"]) == 0
    out = capsys.readouterr()
    assert "warning" not in out.out and "Unicast lids" in out.out
    warnings = [ln for ln in out.err.splitlines() if ln.startswith("warning: ")]
    assert [ln.split(":")[2] for ln in warnings] == ["1", "2", "3", "4", "84", "114"]
    assert warnings[0].endswith("captured_putty_crlf.txt:1: terminal logger banner skipped: "
                                "=~=~=~=~=~=~=~=~=~=~=~= PuTTY log 2026.11.30 09:12:40 =~=~=~=~=~=~=~=~=~=~=~=")
    assert ":3: tool diagnostic (stderr) skipped: src/query_smp.c:195;" in warnings[2]
    assert warnings[-1].endswith(":114: shell prompt skipped: [root@ufm01 ~]#")


def test_info_oversubscription_leaves_aggregation_node_cables_out(capsys):
    """The leaf of a split-mode HDR switch: 6 x 100 Gb/s down, 2 x 100 up; its AN's 200 Gb/s is not host traffic."""
    d, _ = info(capsys, str(CAPTURES / "ibnetdiscover" / "hdr_split_mode_an_port_81.ibnetdiscover"))
    assert d["oversubscription"] == {"leaf": 3.0}
    assert (d["nodes"]["hosts"], d["nodes"]["switches"], d["sharp"], d["links"]["total"]) == (
        6, 2, {"aggregation_nodes": 2, "switches": 2}, 10)
    d, _ = info(capsys, str(CAPTURES / "ibnetdiscover" / "ibdiagnet_cage_split_labels.ibnetdiscover"))
    assert d["oversubscription"] == {"leaf": 2.0}  # 4 x 400 down, 2 x 400 up


def test_info_of_the_issue_34_shapes_prints_their_warnings_and_the_trained_down_links(capsys, tmp_path):
    """Tabs dropped by a logger, ends printing different rates, a session of several tools (issue 34)."""
    path = str(CAPTURES / "ibnetdiscover" / "voltaire_sdr_ends_differ.ibnetdiscover")
    assert main(["info", path]) == 0
    out = capsys.readouterr()
    assert "trained down:     2 links (their two ends printed different rates; the lower is read)" in out.out
    assert out.err.splitlines() == [
        f"warning: {path}:15: link rate 4xSDR differs from 1xSDR at the other end (line 23): read as 1xSDR, the "
        "lower, and marked trained down",
        f"warning: {path}:26: link rate 4xDDR differs from 4xSDR at the other end (line 61): read as 4xSDR, the "
        "lower, and marked trained down"]
    d, err = info(capsys, str(CAPTURES / "ibnetdiscover" / "tabless_logger_hdr.txt"))
    assert d["nodes"]["hosts"] == 4 and d["links"]["trained_down"] == 0 and err == ""
    assert [w["line"] for w in d["warnings"]] == [1, 11, 42, 65] and "tabs missing" in d["warnings"][1]["reason"]
    session = tmp_path / "session.log"
    session.write_text("[root@mgmt ~]# ibswitches\n"
                       'Switch\t: 0x0000000000000010 ports 4 "a" base port 0 lid 1 lmc 0\n'
                       'Switch\t: 0x0000000000000011 ports 4 "b" base port 0 lid 2 lmc 0\n'
                       "[root@mgmt ~]# ibnetdiscover\n"
                       + (CAPTURES / "ibnetdiscover" / "director_cs7500.ibnetdiscover").read_text())
    assert main(["info", str(session)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[1] == (f'warning: {session}:2: ibswitches output skipped (lines 2-3): '
                      'Switch\t: 0x0000000000000010 ports 4 "a" base port 0 lid 1 lmc 0')
    assert len(err) == 3
