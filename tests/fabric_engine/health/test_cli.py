"""``python -m fabric_engine health``: link and device files in one call, OpenSM logs as link downs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from fabric_engine.cli import main

DATA = Path(__file__).parents[2] / "data"
DEVICES = DATA / "devices"
DEVICE_KEYS = ("switch_fans", "fan_failures", "psus", "psu_failures", "firmware")


def _json(capsys, *argv: str) -> dict:
    assert main(["health", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_link_files_only_give_zero_device_counts(capsys):
    s = _json(capsys, str(DATA / "health" / "ibdiagnet2.cables"))
    assert {k: s[k] for k in DEVICE_KEYS} == {"switch_fans": 0, "fan_failures": 0, "psus": 0, "psu_failures": 0,
                                             "firmware": {}}
    assert s["ports"] == 2 and s["log_link_downs"] == 0


def test_device_and_link_files_in_one_call(capsys):
    files = [DEVICES / n for n in ("ibswinfo_full.txt", "ibswinfo_categories.txt", "ibdiagnet2_devices.db_csv",
                                   "ibstat_two_cas.txt", "ibv_devinfo_v.txt")]
    s = _json(capsys, str(DATA / "health" / "ibdiagnet2.cables"), *map(str, files))
    assert (s["switch_fans"], s["fan_failures"], s["psus"], s["psu_failures"]) == (10, 2, 4, 1)
    assert s["firmware"]["MT4129"] == {"28.37.1022": 1, "28.39.2048": 4}
    assert s["firmware"]["MQM8700-HS2F"] == {"27.2008.2304": 1} and s["firmware"]["MT54002"] == {"31.2012.1068": 1}
    assert s["ports"] == 2 and s["modules"] == 2  # the link file's rows, untouched by the device files
    assert [(f["kind"], f["ports"], f["records"]) for f in s["files"]] == [
        ("ibdiagnet2.cables", 2, 0), ("ibswinfo", 0, 2), ("ibswinfo", 0, 1), ("ibdiagnet2.db_csv", 0, 12),
        ("ibstat", 0, 5), ("ibv_devinfo", 0, 2)]
    assert s["devices"]["ibdiagnet_errors"] == 2 and s["devices"]["ibdiagnet_warnings"] == 1
    assert {"device": "lid-31", "error": "lid-31: -E- Failed to open device",
            "source": f"{files[0]}:46"} in s["devices"]["errors"]
    assert any(w["source"] == str(files[0]) and w["reason"] == "UTF-8 byte-order mark removed" for w in s["warnings"])


def test_opensm_log_downs_count_as_links_down(tmp_path, capsys):
    log = DEVICES / "opensm_errors.log"
    s = _json(capsys, str(log))
    # one link unlinked: both of its ends are down at the end of the log
    assert s["links_down"] == 2 and s["log_link_downs"] == 2 and s["devices"]["opensm_errors"] == 4
    assert [(w["line"], w["reason"]) for w in s["warnings"]] == [(1, "shell prompt"), (11, "shell prompt")]
    relinked = tmp_path / "opensm.log"
    relinked.write_text(log.read_text().replace("[root@sm01 ~]# \n", "") +
                        "Mar 03 08:16:40 000004 [6B0C9700] 0x08 -> ni_rcv_set_links: Creating new link between:\n"
                        "\t\t\t\tnode 0xb83fd203003c1a41, port number 17 and\n"
                        "\t\t\t\tnode 0x946dae03006c1b70, port number 1\n")
    s = _json(capsys, str(relinked))
    assert s["links_down"] == 0 and s["log_link_downs"] == 2  # down, then up again: not down now


def test_a_port_down_in_a_link_file_and_the_log_counts_once(tmp_path, capsys):
    ufm = DATA / "health" / "ufm_low_freq_debug.csv"  # port 6 of 0xb83fd20300a1b2d0 is down there
    alone = _json(capsys, str(ufm))["links_down"]
    log = tmp_path / "opensm.log"
    log.write_text("Mar 03 08:14:25 209013 [6A8C8700] 0x04 -> Unlinking local node 0xb83fd20300a1b2d0, port 6\n"
                   "\t\t\t\tand remote node 0x946dae03006c1b70, port 1\n")
    s = _json(capsys, str(ufm), str(log))
    assert s["links_down"] == alone + 1 and s["log_link_downs"] == 2  # only the remote end is new


def test_an_ibdiagnet_folder_gives_link_rows_and_firmware(tmp_path, capsys):
    run = tmp_path / "ibdiagnet2"
    run.mkdir()
    shutil.copy(DATA / "captures" / "ibdiagnet" / "ibdiagnet2.db_csv", run / "ibdiagnet2.db_csv")
    s = _json(capsys, str(run))
    assert s["files"][0]["kind"] == "ibdiagnet folder" and s["files"][0]["ports"] > 0
    # its NODES_INFO: four Quantum-2 switches (0xd2f2 = 54002) on one version, a ConnectX-3 Pro (0x1007) on another
    assert s["files"][0]["records"] == 9 and s["firmware"]["MT54002"] == {"31.2012.1068": 4}
    assert s["firmware"]["MT4103"] == {"2.42.5000": 1}


def test_text_output_and_unknown_content(tmp_path, capsys):
    assert main(["health", str(DEVICES / "ibswinfo_full.txt")]) == 0
    out = capsys.readouterr().out
    assert "switch fans:      8 (2 failed)" in out and "PSUs:             2 (1 failed)" in out
    assert "firmware MQM8790-HS2F: 27.2010.3118 x1" in out
    other = tmp_path / "notes.txt"
    other.write_text("nothing to see\n")
    assert main(["health", str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {other}: not a health output this command knows") and "ibswinfo" in err
