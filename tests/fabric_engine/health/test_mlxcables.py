"""The mlxcables module page reader (tests/data/health/mlxcables_query_ddm.txt)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.health import detect, mlxcables, read_file

DATA = Path(__file__).parents[2] / "data" / "health"


def _rec():
    warnings: list = []
    kind, rec = read_file(DATA / "mlxcables_query_ddm.txt", warnings)
    return kind, rec, warnings


def _row(rec, name: str, port: int) -> int:
    hits = np.flatnonzero((rec.name == name) & (rec.port == port))
    assert hits.size == 1, (name, port, rec.keys())
    return int(hits[0])


def test_query_and_ddm_pages_of_one_cable_are_one_row():
    kind, rec, warnings = _rec()
    assert kind == "mlxcables" and len(rec) == 2
    opt = _row(rec, "mt4129_pciconf0", 1)  # mt4129_pciconf0_cable_0: the device's port 1
    assert (rec["vendor"][opt], rec["pn"][opt], rec["sn"][opt], rec["rev"][opt], rec["fw"][opt]) == (
        "Mellanox", "MMA4Z00-NS400", "MT2312FT05555", "B3", "47.171.0")
    assert rec["length_m"][opt] == 30 and rec.names("cable")[opt] == "optical"
    assert rec["temp"][opt] == 53  # the DDM page, printed after the query's 52 C, wins
    assert rec["voltage"][opt] == pytest.approx(3.2979)  # "%.4fV"
    assert rec["rx_power"][opt, :4].tolist() == [-1.02, -0.85, -1.2, -9.208]  # one row, channels comma separated
    assert rec["tx_power"][opt, :4].tolist() == [0.5, 0.41, 0.62, 0.3] and np.isnan(rec["tx_power"][opt, 4])
    assert rec["bias"][opt, :4].tolist() == [7.5, 7.4, 7.6, 7.5]
    assert rec["temp_th"][opt].tolist() == [-5, 0, 75, 80]
    assert rec["voltage_th"][opt].tolist() == [2.97, 3.135, 3.465, 3.63]
    assert rec["bias_th"][opt].tolist() == [2, 3, 13, 15]
    assert rec["flag_warnings"][opt] == 1 and rec["flag_alarms"][opt] == 0  # Channel 4 RX Power Warning low


def test_passive_copper_cable_has_no_monitors():
    _, rec, _ = _rec()
    cu = _row(rec, "mt4129_pciconf1", 1)
    assert rec.names("cable")[cu] == "dac" and rec["present"][cu] == 1 and rec["sn"][cu] == "MT2301VS00123"
    assert np.isnan(rec["temp"][cu]) and rec["fw"][cu] == "" and rec["flag_alarms"][cu] == -1


def test_terminal_noise_is_skipped_with_warnings():
    _, _, warnings = _rec()
    assert [(w["line"], w["reason"]) for w in warnings] == [(1, "shell prompt"), (37, "shell prompt"),
                                                            (38, "tool message (stderr)"), (141, "shell prompt")]


def test_per_channel_keys_and_comma_lists_read_alike():
    listed = "Cable name : mt4123_pciconf0_cable_1\nRX Power : -1.0dBm ,-2.0dBm\nTX Bias : 6mA ,7mA\n"
    keyed = "Cable name : mt4123_pciconf0_cable_1\nRx1 Power : -1.0 dBm\nChannel 2 RX Power : -2.0 dBm\n" \
            "TX Bias Ch1 : 6 mA\nTX Bias Ch2 : 7000 uA\n"
    a, b = mlxcables.read(listed, "a"), mlxcables.read(keyed, "b")
    assert a.keys().tolist() == b.keys().tolist() == ["mt4123_pciconf0/2"]
    assert a["rx_power"][0, :2].tolist() == b["rx_power"][0, :2].tolist() == [-1.0, -2.0]
    assert a["bias"][0, :2].tolist() == b["bias"][0, :2].tolist() == [6.0, 7.0]


def test_cable_named_by_the_command_line_without_a_cable_name():
    text = "[root@h1 ~]# mlxcables -d mt4125_pciconf0_cable_1 --DDM\nTemperature : 40 C\n"
    rec = mlxcables.read(text, "x")
    assert rec.keys().tolist() == ["mt4125_pciconf0/2"] and rec["temp"][0] == 40


def test_detection():
    text = (DATA / "mlxcables_query_ddm.txt").read_text()
    assert detect(text) == "mlxcables"
    assert detect((DATA / "mlxlink_cable_ddm.txt").read_text()) == "mlxlink"


@pytest.mark.parametrize(("text", "message"), [
    ("Cable name : mt1_cable_0\nthis is not mlxcables\n", r"^x:2: not a line of mlxcables output"),
    ("Cable name : mt1_cable_0\nRX Power Ch13 : -1 dBm\n", r"^x:2: RX Power Ch13: channel 13 out of range 1..12"),
    ("Cable name : mt1_cable_0\nRX Power : " + ",".join(["-1"] * 13) + "\n", r"^x:2: RX Power: 13 channels"),
    ("Cable name : mt1_cable_300\nVendor : X\n", r"^x:1: port 301 or GUID"),
])
def test_errors_name_file_and_line(text, message):
    with pytest.raises(FormatError, match=message):
        mlxcables.read(text, "x")
