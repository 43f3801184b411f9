"""The link health readers against fixtures written from each tool's definition (tests/data/health)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.health import cables, detect, mlxlink, perfquery_ext_speeds, read_file, ufm
from fabric_engine.health.grade import ber_from_deltas
from fabric_engine.health.records import code

DATA = Path(__file__).parents[2] / "data" / "health"


def _read(name: str):
    warnings: list = []
    kind, rec = read_file(DATA / name, warnings)
    return kind, rec, warnings


def _row(rec, name: str, port: int) -> int:
    hits = np.flatnonzero((rec.name == name) & (rec.port == port))
    assert hits.size == 1, (name, port, rec.name, rec.port)
    return int(hits[0])


# ------------------------------------------------------------------ perfquery -T
def test_perfquery_t_both_layouts_and_terminal_noise():
    kind, rec, warnings = _read("perfquery_T_two_layouts.txt")
    assert kind == "perfquery -T"
    plain, rs = _row(rec, "lid:12", 1), _row(rec, "lid:14", 3)
    # plain layout: error detections per lane, FEC blocks summed, sync header + unknown block + uncorrectable
    assert rec["raw_errors_lane"][plain, :4].tolist() == [3, 1, 0, 2]
    assert rec["raw_errors"][plain] == 3 + 1 + 2 + 10 + 5
    assert rec["fec_corrected"][plain] == 15 and rec["fec_uncorrectable"][plain] == 1
    assert rec["eff_errors"][plain] == 1 + 2 + 1
    # RS-FEC layout: corrected symbols per lane, port totals
    assert rec["raw_errors_lane"][rs, :4].tolist() == [100, 200, 300, 400]
    assert rec["raw_errors"][rs] == 1000 and rec["fec_corrected"][rs] == 55 and rec["fec_uncorrectable"][rs] == 2
    assert [w["reason"] for w in warnings] == ["shell prompt", "shell prompt", "tool diagnostic (stderr)",
                                               "shell prompt"]
    assert np.isnan(rec["raw_ber"]).all()  # perfquery -T reports counts only


def test_perfquery_t_full_dump_buffer_drops_the_cut_value():
    _, rec, warnings = _read("perfquery_T_buffer_full.txt")
    cut = _row(rec, "lid:8", 2)
    reasons = [w["reason"] for w in warnings]
    assert any("1536-byte dump buffer filled" in r for r in reasons)
    assert any(r.startswith("4 fields missing") for r in reasons)  # lid 7: stopped on a whole line
    assert sum("saturated" in r for r in reasons) == 2  # one warning per block
    for row in (_row(rec, "lid:7", 2), cut):  # saturated lanes and sync/unknown block counters: not counts
        assert np.isnan(rec["raw_errors"][row]) and np.isnan(rec["raw_errors_lane"][row]).all()
        assert np.isnan(rec["eff_errors"][row])
    # lid 8's last printed field (FECUncorrectableBlockCtrLane8, cut to 8 digits) is not read
    uncorr_lanes_read = 8  # lanes 0..7 printed whole
    assert rec["fec_uncorrectable"][cut] == 100003338 * uncorr_lanes_read


def test_perfquery_t_field_of_the_other_layout_is_an_error():
    text = ("# PortExtendedSpeedsCounters counters: Lid 3 port 1\nPortSelect:......................1\n"
            "PortFECCorrectedSymbolCtr:.......5\n")
    with pytest.raises(FormatError, match=r"x:3: PortFECCorrectedSymbolCtr is not a field of PortExtendedSpeeds"):
        perfquery_ext_speeds.read(text, "x")


def test_perfquery_t_garbage_line_names_file_and_line():
    text = "# PortExtendedSpeedsCounters counters: Lid 3 port 1\nPortSelect:......................1\nhello there\n"
    with pytest.raises(FormatError, match=r"^x:3: not a line of perfquery output"):
        perfquery_ext_speeds.read(text, "x")


def test_perfquery_t_lid_out_of_range():
    with pytest.raises(FormatError, match=r"x:1: LID 60000 out of range"):
        perfquery_ext_speeds.read("# PortExtendedSpeedsCounters counters: Lid 60000 port 1\n", "x")


# ------------------------------------------------------------------ mlxlink
def test_mlxlink_ib_text_with_colours_and_module():
    kind, rec, warnings = _read("mlxlink_ib_ndr.txt")
    assert kind == "mlxlink"
    i = _row(rec, "mlx5_0", 1)  # named by -d/-p of the captured command line
    assert rec["up"][i] == 1 and rec.names("speed")[i] == "NDR" and rec["lanes"][i] == 4
    assert rec.names("fec")[i] == "ll_rs_fec"
    assert rec["window_s"][i] == pytest.approx(180.5 * 60)
    assert rec["eff_ber"][i] == 2e-13 and rec["raw_ber"][i] == 4e-8 and rec["sym_ber"][i] == 15e-255
    assert rec["raw_errors_lane"][i, :4].tolist() == [1520, 1800, 2210, 1333]
    assert rec["raw_ber_lane"][i, :4].tolist() == [3e-8, 4e-8, 5e-8, 3e-8]
    assert rec["link_down"][i] == 1 and rec["status_opcode"][i] == 0
    assert (rec["vendor"][i], rec["pn"][i], rec["sn"][i], rec["fw"][i]) == ("Mellanox", "MMA4Z00-NS", "MT2312FT01234",
                                                                            "47.171.0")
    assert rec.names("cable")[i] == "optical" and rec["length_m"][i] == 50
    assert rec["temp"][i] == 52 and rec["temp_th"][i, [0, 3]].tolist() == [-5, 75]
    assert rec["voltage"][i] == pytest.approx(3.2874)
    assert rec["rx_power"][i, :4].tolist() == [0.532, 0.213, -0.1, -11.2]
    assert rec["rx_power_th"][i, [0, 3]].tolist() == [-10.4, 5.4]
    assert rec["flag_alarms"][i] == 1  # Rx LOS on lane 3
    assert [w["reason"] for w in warnings] == ["shell prompt"]


def test_mlxlink_ethernet_port():
    _, rec, warnings = _read("mlxlink_eth_200g.txt")
    i = _row(rec, "/dev/mst/mt4125_pciconf0", 1)
    assert rec.names("speed")[i] == "ETH-200G" and rec["lane_gbps"][i] == 50 and rec.names("fec")[i] == "kp4_rs_fec"
    assert np.isnan(rec["sym_ber"][i])  # Ethernet ports have no symbol BER
    assert rec["link_down"][i] == 2 and rec["link_recovery"][i] == 5 and rec["raw_ber"][i] == 1e-9
    assert rec["present"][i] == -1  # no Module Info asked for
    assert "tool message (stderr)" in [w["reason"] for w in warnings]


def test_mlxlink_unplugged_port():
    _, rec, _ = _read("mlxlink_unplugged.txt")
    i = _row(rec, "lid-0x0012", 17)
    assert rec["up"][i] == 0 and rec["present"][i] == 0 and rec["status_opcode"][i] == 1024
    assert rec["recommendation"][i] == "Cable is unplugged"
    assert np.isnan(rec["window_s"][i]) and np.isnan(rec["eff_ber"][i]) and np.isnan(rec["temp"][i])


def test_mlxlink_json_with_histogram():
    kind, rec, _ = _read("mlxlink_hdr.json")
    assert kind == "mlxlink --json"
    assert rec.names("speed")[0] == "HDR" and rec.names("fec")[0] == "kp4_rs_fec" and rec.names("cable")[0] == "dac"
    assert rec["raw_errors_lane"][0, :4].tolist() == [100, 200, 50, 80]
    assert rec["hist"][0, :4].tolist() == [991234, 120, 7, 0] and np.isnan(rec["hist"][0, 4])
    assert rec["eff_ber"][0] == 3e-11 and rec["window_s"][0] == 36000


def test_mlxlink_json_not_mlxlink():
    with pytest.raises(FormatError, match="without result.output"):
        mlxlink.read_json('{"result": {"x": 1}}', "j")


def test_mlxlink_stray_line_inside_output_is_an_error():
    text = "\nOperational Info\n----------------\nState                              : Active\nwhat is this\n"
    with pytest.raises(FormatError, match=r"^m:5: not a line of mlxlink output"):
        mlxlink.read(text, "m")


# ------------------------------------------------------------------ ibdiagnet2.cables
def test_ibdiagnet_cables_blocks():
    kind, rec, _ = _read("ibdiagnet2.cables")
    assert kind == "ibdiagnet2.cables"
    assert rec.guid.tolist() == [0xB83FD20300A1B2C0] * 2 and rec.port.tolist() == [1, 2]
    assert rec["sn"].tolist() == ["MT2312FT01234", "MT2312FT02234"]
    assert rec["length_m"].tolist() == [30, 30] and np.isnan(rec["voltage"]).all()  # no Voltage line printed
    assert rec["temp"].tolist() == [45, 81]
    # "0.776 mW, -1.101 dBm": the dBm figure; "0.000 mW, -999.999 dBm": no light on that lane
    assert rec["rx_power"][1, :4].tolist() == [-1.101, -1.198, -1.302, -np.inf]
    assert rec["bias"][0, :4].tolist() == [6.75] * 4 and rec["fw"].tolist() == ["47.171.0"] * 2
    for row in (0, 1):  # spelled out, or named as ibdiagnet's CSV columns: the same limits
        assert rec["temp_th"][row].tolist() == [-5, 0, 75, 80]
        assert rec["rx_power_th"][row, 0] == -10.4 and rec["rx_power_th"][row, 3] == 5.4
    assert np.isnan(rec["tx_power_th"][1]).all()  # a zero limit (0.000 mW) is one the module does not set
    assert rec["flag_alarms"].tolist() == [0, 2] and rec["flag_warnings"].tolist() == [0, 0]
    assert rec.names("cable").tolist() == ["optical", "optical"]


#: The passive copper block of NVIDIA's documentation of the cable plugin ("Cable diagnostics"), values as there.
COPPER_BLOCK = """-------------------------------------------------------
Port=1 Lid=0x00a4 GUID=0xf45214030046a0a1 Port Name=sw-a/U1/P1
-------------------------------------------------------

Vendor: Mellanox
OUI: 0x2c9
PN: MCP1600-E002
SN: MT1739VS02126
Rev: A3
Length: 2 m
Type: Copper cable- unequalized
SupportedSpeed: SDR/DDR/QDR/FDR/EDR
Temperature: N/A
PowerClass: 1
NominalBitrate: 0 Gb/s
CDREnableTxRx: N/A N/A
FW Version: N/A
Attenuation(5,7,12): 7 8 13
RX power type: OMA
RX1 Power: 0.000 mW, -999.999 dBm
TX1 Bias: 0.000 mA
TX1 Power: 0.000 mW, -999.999 dBm
"""


def test_ibdiagnet_cables_passive_copper_has_no_monitors():
    rec = cables.read(COPPER_BLOCK, "c")
    assert rec.names("cable").tolist() == ["dac"] and rec["length_m"][0] == 2 and rec["present"][0] == 1
    assert np.isnan(rec["temp"][0]) and rec["fw"][0] == ""  # N/A
    # its zeros are not readings of no light, which would be below any low alarm limit
    assert np.isnan(rec["rx_power"][0]).all() and np.isnan(rec["tx_power"][0]).all() and np.isnan(rec["bias"][0]).all()


def test_ibdiagnet_cables_units_and_flag_forms():
    text = ("Port=1 Lid=0x3 GUID=0x1\nVoltage: 3280 mV\nLength: 2 km\nRX1 Power: 0.5 mW\nTX2 Power: 500 uW\n"
            "RX Power Alarm Lanes: 0,0,0,1\nTX Bias Warning: 0x5\nTemperature Alarm: Yes\n")
    rec = cables.read(text, "c")
    assert rec["voltage"][0] == pytest.approx(3.28) and rec["length_m"][0] == 2000
    assert rec["rx_power"][0, 0] == pytest.approx(-3.0103, abs=1e-4) == rec["tx_power"][0, 1]
    assert rec["flag_alarms"][0] == 2 and rec["flag_warnings"][0] == 2  # lane 4; a mask of lanes 1 and 3


def test_ibdiagnet_cables_value_outside_a_block():
    with pytest.raises(FormatError, match=r"^c:1: not a line of ibdiagnet output"):
        cables.read("Vendor: Mellanox\n", "c")


# ------------------------------------------------------------------ UFM telemetry
def test_ufm_csv_rows():
    kind, rec, _ = _read("ufm_low_freq_debug.csv")
    assert kind == "UFM telemetry CSV"
    assert rec.port.tolist() == [1, 2, 5, 6] and rec["up"].tolist() == [1, 1, 1, 0]
    assert rec.names("fec").tolist()[:3] == ["ll_rs_fec_plr"] * 3 and rec.names("speed")[0] == "NDR"
    assert rec["window_s"].tolist()[:3] == [14400, 14400, 1200]
    assert rec["raw_errors_lane"][1, :4].tolist() == [1000, 1100, 1200, 1300] and rec["raw_errors"][1] == 4600
    assert rec["temp"][1] == 82 and rec["link_down"][3] == 7 and rec.name[2] == "spine01"


def test_ufm_json_record_and_gzip(tmp_path):
    gz = tmp_path / "push.json.gz"
    gz.write_bytes(gzip.compress((DATA / "ufm_record.json").read_bytes()))
    kind, rec = read_file(gz, [])
    assert kind == "UFM telemetry JSON" and rec.guid.tolist() == [0xB83FD20300A1B2E0]
    assert rec["hist"][0, :2].tolist() == [123456, 12] and rec.names("fec")[0] == "kp4_rs_fec" and rec["lanes"][0] == 4


def test_ufm_csv_row_without_identity():
    text = "Node_GUID,Port_Number,Effective_BER\n0x1,1,1e-15\n,2,1e-15\n"
    with pytest.raises(FormatError, match=r"^u:3: a UFM telemetry record without Node_GUID"):
        ufm.read_csv(text, "u")


def test_ufm_csv_ragged_row():
    with pytest.raises(FormatError, match=r"^u:2: 2 cells, the header has 3"):
        ufm.read_csv("Node_GUID,Port_Number,Effective_BER\n0x1,1\n", "u")


def test_unknown_content_is_an_error(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("hello\n")
    assert detect("hello\n") is None
    with pytest.raises(FormatError, match="not a link health output"):
        read_file(p, [])


def test_mlxlink_cable_ddm_module_pages():
    kind, rec, _ = _read("mlxlink_cable_ddm.txt")
    assert kind == "mlxlink"
    i = _row(rec, "mlx5_1", 1)
    assert rec["present"][i] == 1 and rec["temp"][i] == 71 and rec["voltage"][i] == 3.295
    assert rec["rx_power"][i, :4].tolist() == [-1.023, -0.85, -1.2, -0.99] and np.isnan(rec["rx_power"][i, 4])
    assert rec["bias"][i, :4].tolist() == [7.5, 7.4, 7.6, 7.5]
    assert rec["temp_th"][i].tolist() == [-5, 0, 70, 80] and rec["voltage_th"][i].tolist() == [2.97, 3.135, 3.465, 3.63]
    assert rec["rx_power_th"][i].tolist() == [-10.4, -7.4, 2.4, 5.4] and rec["bias_th"][i].tolist() == [2, 3, 13, 15]
    assert rec["flag_alarms"][i] == 0 and rec["flag_warnings"][i] == 1  # Temperature Warning high


def test_perfquery_t_gid_and_dr_path_headers():
    text = ("# PortExtendedSpeedsCounters counters: Lid 5 Gid fe80::b83f:d203:a1:b2c0 port 2\n"
            "PortSelect:......................2\n"
            "# PortExtendedSpeedsCounters counters: DR path slid 0; dlid 0; 0,1,3 port 4\n"
            "PortSelect:......................4\n")
    warnings: list = []
    rec = perfquery_ext_speeds.read(text, "x", warnings)
    assert rec.name.tolist() == ["lid:5", "DR path slid 0; dlid 0; 0,1,3"] and rec.port.tolist() == [2, 4]
    assert all(w["reason"].startswith("39 fields missing") for w in warnings)


def test_mlxlink_several_runs_in_one_capture():
    text = (DATA / "mlxlink_ib_ndr.txt").read_text() + (DATA / "mlxlink_unplugged.txt").read_text()
    rec = mlxlink.read(text, "two runs")
    assert rec.name.tolist() == ["mlx5_0", "lid-0x0012"] and rec.port.tolist() == [1, 17]
    assert rec["up"].tolist() == [1, 0] and rec["present"].tolist() == [1, 0]


def test_perfquery_t_saturated_lane_gives_an_unknown_raw_ber_not_a_stuck_zero():
    def reading(lane0: int, t: float):
        text = ("# PortExtendedSpeedsCounters counters: Lid 3 port 1\n"
                + "".join(f"{n}:{'.' * (32 - len(n) - 1)}{v}\n" for n, v in (
                    ("PortSelect", 1), ("SyncHeaderErrorCounter", 0), ("UnknownBlockCounter", 0),
                    ("ErrorDetectionCounterLane0", lane0), ("ErrorDetectionCounterLane1", 10))))
        rec = perfquery_ext_speeds.read(text, "x", [])
        rec.data["t"][:] = t
        rec.data["lanes"][:] = 4
        rec.data["speed"][:] = code("speed", "EDR")
        return rec

    rose = ber_from_deltas(reading(100, 0.0), reading(65000, 10.0))
    assert rose["raw_errors_lane"][0, 0] == 65000 and rose["raw_ber_lane"][0, 0] > 0  # a block cut short: no sum
    for before, after in ((65000, 65535), (65535, 65535), (65535, 7)):  # to its top, stuck there, reset from it
        got = ber_from_deltas(reading(before, 0.0), reading(after, 10.0))
        assert np.isnan(got["raw_ber"][0]) and np.isnan(got["raw_ber_lane"][0]).all()
