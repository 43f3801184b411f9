"""Issue 22: the CLI reads real captures -- ibdiagnet folders and archives, ``ibnetdiscover -p``, a node name
map -- and prints the lines it skipped on stderr."""

from __future__ import annotations

import json
from pathlib import Path

from fabric_engine import formats
from fabric_engine.cli import main

CAPTURES = Path(__file__).parent / "data" / "captures"


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
