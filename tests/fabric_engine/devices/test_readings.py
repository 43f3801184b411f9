"""read_devices dispatches by content; summary counts fans, PSUs and firmware per device type."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from fabric_engine.devices import KINDS, detect, read_devices, summary
from fabric_engine.devices import readings as readings_module
from fabric_engine.errors import FormatError

DATA = Path(__file__).parents[2] / "data" / "devices"
FILES = ("ibswinfo_full.txt", "ibswinfo_categories.txt", "ibdiagnet2_devices.db_csv", "ibdiagnet2.nodes_info",
         "ibstat_two_cas.txt", "ibv_devinfo_v.txt", "opensm_errors.log")


def test_every_fixture_is_detected():
    kinds = [detect((DATA / f).read_text()) for f in FILES]
    assert kinds == ["ibswinfo", "ibswinfo", "ibdiagnet2.db_csv", "ibdiagnet2.nodes_info", "ibstat", "ibv_devinfo",
                     "OpenSM log"]
    assert set(kinds) == set(KINDS)


def test_summary_over_every_kind(tmp_path):
    gz = tmp_path / "ibstat.txt.gz"
    gz.write_bytes(gzip.compress((DATA / "ibstat_two_cas.txt").read_bytes()))
    texts = [DATA / f for f in FILES if f != "ibstat_two_cas.txt"]
    r = read_devices([*texts, str(gz), (DATA / "ibswinfo_categories.txt").read_text().replace("ib-spine-01", "s2")])
    assert len(r.vitals) == 6 and len(r.hca_ports) == 7 and len(r.nodes_info) == 7 and len(r.opensm_errors) == 4
    assert r.files[-1] == {"file": "<text 8>", "kind": "ibswinfo", "records": 1}
    s = summary(r)
    # leaf-07: 6 tachos (fan#4 at 0 rpm) and 2 PSU fans (PSU1's ERROR); spine-01 and its copy: 2 fans each
    assert (s["switch_fans"], s["fan_failures"], s["psus"], s["psu_failures"]) == (12, 2, 6, 1)
    # one count per device: ibdiagnet's node info first, then the switches and adapters it does not list
    assert s["firmware"]["MT4129"] == {"28.37.1022": 1, "28.39.2048": 4}
    assert s["firmware"]["MT54000"] == {"27.2010.3118": 1} and s["firmware"]["MQM8700-HS2F"] == {"27.2008.2304": 2}
    assert s["firmware"]["MT4099"] == {"2.42.5000": 1} and s["firmware"]["MT48438"] == {"7.2.0000": 1}


def test_fan_status_error_without_a_failed_fan_counts_one():
    text = "fan status         | ERROR\nfan#1 (rpm)        | 9000\n"
    assert summary(read_devices([text + "\n"]))["fan_failures"] == 1


def test_unknown_content_and_size(tmp_path, monkeypatch):
    other = tmp_path / "other.txt"
    other.write_text("hello\n")
    with pytest.raises(FormatError, match=r"other.txt: not a device health output this reader knows"):
        read_devices([other])
    monkeypatch.setattr(readings_module, "MAX_DEVICE_BYTES", 3)
    with pytest.raises(FormatError, match=r"larger than 3 bytes"):
        read_devices([other])
