"""ibswinfo output (full and ``-o``) against fixtures written from stanford-rc/ibswinfo's ``ibswinfo.sh``."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric_engine.devices import ibswinfo
from fabric_engine.devices.vitals import Fan, Psu, Temperature
from fabric_engine.errors import FormatError

DATA = Path(__file__).parents[2] / "data" / "devices"


def _read(name: str):
    warnings: list = []
    return ibswinfo.read((DATA / name).read_text(), name, warnings), warnings


def test_full_output_with_failures_and_an_unreachable_switch():
    (leaf, unreachable), warnings = _read("ibswinfo_full.txt")
    assert leaf.name == "MF0;ib-leaf-07:MQM8790/U1" and leaf.guid == 0x0C42A1030050E8A0
    assert (leaf.part_number, leaf.serial, leaf.psid, leaf.firmware, leaf.hardware) == (
        "MQM8790-HS2F", "MT2103X17342", "MT_0000000063", "27.2010.3118", "Jaguar Unmng IB 200")
    assert leaf.uptime_s == 42 * 86_400 + 7 * 3600 + 15 * 60 + 3 and leaf.source == "ibswinfo_full.txt:2"
    assert leaf.psus == (Psu("PSU0", True, True, 151.0), Psu("PSU1", False, False, None))
    assert Fan("fan#4", 0, False) in leaf.fans and Fan("PSU1 fan", None, False) in leaf.fans
    assert sum(f.ok for f in leaf.fans) == 6 and len(leaf.fans) == 8
    assert leaf.temperatures[0] == Temperature("ASIC", 54.0, 61.0, 85.0, None)
    assert [t.sensor for t in leaf.temperatures[1:]] == ["QSFP#01", "QSFP#02", "QSFP#03", "QSFP#04"]
    assert ibswinfo.FAN_STATUS_ERROR in leaf.errors and "PSU1 DC power: ERROR" in leaf.errors
    # the second command failed: its error line is the switch's record, named by the command's -d
    assert unreachable.name == "lid-31" and unreachable.errors == ("lid-31: -E- Failed to open device",)
    assert [w["reason"] for w in warnings] == ["UTF-8 byte-order mark removed", "shell prompt", "shell prompt",
                                               "shell prompt"]


def test_one_switch_over_three_category_outputs():
    (spine,), warnings = _read("ibswinfo_categories.txt")
    assert spine.name == "ib-spine-01" and spine.guid is None and spine.firmware == "27.2008.2304"
    assert spine.uptime_s == 1_209_600 and [p.watts for p in spine.psus] == [188.0, 176.0]
    assert all(p.ok and p.dc_ok for p in spine.psus) and not spine.errors
    assert [(f.name, f.rpm) for f in spine.fans] == [("fan#1", 11020), ("fan#2", 10980)]
    assert spine.temperatures[0] == Temperature("ASIC", 61.0, 70.0, None, None)
    assert {"line": 14, "text": "warning: Not tested with MFT version 4.32.0, YMMV",
            "reason": "ibswinfo warning (stderr): skipped"} in warnings


def test_a_repeated_key_starts_the_next_switch():
    text = "part number        | A\nfirmware version   | 1.2.3\npart number        | B\n"
    first, second = ibswinfo.read(text, "x")
    assert (first.part_number, first.firmware, second.part_number) == ("A", "1.2.0003", "B")


@pytest.mark.parametrize(("text", "message"), [
    ("fan status         | BROKEN\n", r"x:1: fan status 'BROKEN': ibswinfo prints OK or ERROR"),
    ("uptime (sec)       | 12x\n", r"x:1: uptime: '12x' is not a number"),
    ("temperature (C)    | 900\n", r"x:1: temperature 900 is outside -60..200"),
    ("     P/N           | X\n", r"x:1: 'P/N' outside a PSU record"),
    ("part number        | MQM\nthis is not ibswinfo\n", r"x:2: not a line of ibswinfo output"),
])
def test_errors_name_file_and_line(text, message):
    with pytest.raises(FormatError, match=message):
        ibswinfo.read(text, "x")


def test_sizes_checked_before_allocating():
    fans = "".join(f"fan#{i} (rpm)        | 9000\n" for i in range(1, ibswinfo.MAX_FANS + 2))
    with pytest.raises(FormatError, match=f"x:{ibswinfo.MAX_FANS + 1}: more than {ibswinfo.MAX_FANS} fans"):
        ibswinfo.read(fans, "x")
    with pytest.raises(FormatError, match="value longer than 256"):
        ibswinfo.read("part number        | " + "A" * 300 + "\n", "x")


def test_looks_like():
    assert ibswinfo.looks_like((DATA / "ibswinfo_full.txt").read_text())
    assert not ibswinfo.looks_like("part number | x\n")
