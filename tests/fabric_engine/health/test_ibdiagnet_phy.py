"""The ibdiagnet2.db_csv PHY/BER, cable and port counter reader (tests/data/health/ibdiagnet2_phy.db_csv)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.health import detect, ibdiagnet_phy, read_file
from fabric_engine.health.grade import ERROR, UNKNOWN, grade_ber
from fabric_engine.health.thresholds import load

DATA = Path(__file__).parents[2] / "data" / "health"
LEAF, SPINE, GPU = 0xB83FD20300A10003, 0xB83FD20300A10001, 0x946DAE0300C30010


def _rec():
    warnings: list = []
    kind, rec = read_file(DATA / "ibdiagnet2_phy.db_csv", warnings)
    return kind, rec, warnings


def _row(rec, guid: int, port: int) -> int:
    hits = np.flatnonzero((rec.guid == guid) & (rec.port == port))
    assert hits.size == 1, (hex(guid), port)
    return int(hits[0])


def test_rows_are_the_ports_of_the_phy_cable_and_counter_sections():
    kind, rec, warnings = _rec()
    assert kind == "ibdiagnet2.db_csv" and warnings == []
    # PHY_DB16: leaf01 1, 2, 33 and gpu001 1; CABLE_INFO adds spine01 1; PM_INFO adds spine01 2
    assert sorted(rec.keys().tolist()) == ["0x946dae0300c30010/1", "0xb83fd20300a10001/1", "0xb83fd20300a10001/2",
                                           "0xb83fd20300a10003/1", "0xb83fd20300a10003/2", "0xb83fd20300a10003/33"]
    assert rec.name[_row(rec, GPU, 1)] == "gpu001 mlx5_0"  # NODES' description


def test_phy_db16_ber_from_coefficient_and_magnitude():
    _, rec, _ = _rec()
    p1, p2, down = _row(rec, LEAF, 1), _row(rec, LEAF, 2), _row(rec, LEAF, 33)
    assert rec["raw_ber"][p1] == pytest.approx(2e-10)
    assert rec["eff_ber"][p1] == pytest.approx(1.5e-253)  # coefficient 15, magnitude 254: no error seen
    assert rec["raw_ber"][p2] == pytest.approx(5e-6) and rec["eff_ber"][p2] == pytest.approx(3e-13)
    assert rec["sym_ber"][p2] == pytest.approx(1e-14)
    assert rec["window_s"][p1] == 7200 and rec["window_s"][p2] == 14400  # ms since the last clear (hex on p2)
    assert rec["raw_errors_lane"][p1, :4].tolist() == [10, 20, 30, 40]
    assert rec["raw_errors_lane"][p2, :4].tolist() == [5_000_000, 2_500_000, 2_000_000, 1_200_000]
    assert rec["raw_errors"][p2] == 10_700_000 and rec["sym_errors"][p2] == 12
    assert np.isnan(rec["raw_ber"][down]) and np.isnan(rec["window_s"][down])  # N/A: the link is down


def test_ports_and_fec_of_the_rows():
    _, rec, _ = _rec()
    p1, p2, down = _row(rec, LEAF, 1), _row(rec, LEAF, 2), _row(rec, LEAF, 33)
    assert rec.names("speed")[p1] == "NDR" and rec["lanes"][p1] == 4 and rec["up"][p1] == 1
    assert rec.names("fec")[p1] == "ll_rs_fec"  # ibdm IBFECMode 9
    assert rec.names("fec")[p2] == "ll_rs_fec_plr"  # 13: RS(544,514) with PLR
    assert rec["up"][down] == 0 and rec.names("speed")[down] == "SDR" and rec["fec"][down] == 0  # 0xff: not given
    assert rec["speed"][_row(rec, SPINE, 2)] == 0  # not in PORTS: not given


def test_graded_with_the_window_and_fec_of_each_port():
    _, rec, _ = _rec()
    g = grade_ber(rec, load(None))["grade"]
    assert g[_row(rec, LEAF, 2)] == ERROR
    assert g[_row(rec, LEAF, 1)] == UNKNOWN  # 7,200 s: less than the 125 minutes NDR needs


def test_cable_info_module_readings_thresholds_and_flags():
    _, rec, _ = _rec()
    leaf, gpu, copper = _row(rec, LEAF, 1), _row(rec, GPU, 1), _row(rec, SPINE, 1)
    assert (rec["vendor"][leaf], rec["pn"][leaf], rec["sn"][leaf]) == ("Mellanox", "MMA4Z00-NS", "MT2312FT01234")
    assert rec["identifier"][leaf] == "OSFP"  # IdentifierStr, not the SFF code 0x19
    assert rec["temp"][leaf] == 45 and np.isnan(rec["voltage"][leaf])  # ibutils2's record has no supply voltage
    assert rec["length_m"][leaf] == 30 and rec["length_m"][copper] == 2  # LengthOM4, else LengthCopperOrActive
    # RX1..RX4 are lanes 0..3, module words in 0.1 uW: 7762 is 0.7762 mW, -1.1 dBm
    assert rec["rx_power"][leaf, :4] == pytest.approx([-1.1, -1.2, -1.3, -1.5], abs=1e-3)
    assert rec["tx_power"][leaf, 0] == pytest.approx(1.2, abs=1e-3) and rec["bias"][leaf, 0] == 6.75
    assert rec["rx_power"][gpu, 0] == pytest.approx(-13.0103, abs=1e-4)  # 500: 0.05 mW
    assert np.isnan(rec["rx_power"][gpu, 2])
    assert rec["temp_th"][leaf].tolist() == [-5, 0, 75, 80]  # Alarm/Warn Temperature Low/High Thresh
    assert rec["voltage_th"][leaf].tolist() == [2.97, 3.135, 3.465, 3.63]
    low, _, _, high = rec["rx_power_th"][leaf]  # RXPowerLow/HighThresh: the module's alarm limits
    assert low == pytest.approx(-10.4, abs=1e-3) and high == pytest.approx(5.4, abs=1e-3)
    assert rec["bias_th"][leaf, 0] == 2 and rec["bias_th"][leaf, 3] == 15
    assert rec["flag_warnings"][gpu] == 2 and rec["flag_alarms"][gpu] == 0  # HighTemperatureWarning, LowRX1Power..
    assert rec["flag_warnings"][leaf] == 0 and rec["flag_alarms"][leaf] == 0  # thresholds are not flags
    assert rec.names("cable")[leaf] == "optical" and rec.names("cable")[copper] == "dac"  # TypeDesc, not Type 0xa
    # a passive cable has no monitors: its zero words are not readings of no light, nor zero limits alarms
    assert rec["present"][copper] == 1 and np.isnan(rec["temp"][copper])
    assert np.isnan(rec["rx_power"][copper]).all() and np.isnan(rec["bias"][copper]).all()
    assert np.isnan(rec["rx_power_th"][copper]).all() and np.isnan(rec["bias_th"][copper]).all()


def test_cable_info_of_versions_that_name_columns_otherwise():
    text = ("START_CABLE_INFO\nNodeGuid,PortNum,Type,SupplyVoltage,RX1Power,RX2 Power,HighTemperatureAlarmThreshold,"
            "RXPowerLowWarningThreshold,temperature_high_th,LengthSMFiber,RXPowerLowWarning\n"
            "0x1,1,850 nm VCSEL,3280 mV,-1.1 dBm,0.05 mW,80C,-8.4 dBm,85,2 km,0x3\nEND_CABLE_INFO\n")
    rec = ibdiagnet_phy.read(text, "x")
    assert rec.names("cable")[0] == "optical" and rec["voltage"][0] == pytest.approx(3.28)
    assert rec["rx_power"][0, 0] == -1.1 and rec["rx_power"][0, 1] == pytest.approx(-13.0103, abs=1e-4)
    assert rec["temp_th"][0, 3] == 85 and rec["rx_power_th"][0, 1] == -8.4  # the later column wins
    assert rec["length_m"][0] == 2000 and rec["flag_warnings"][0] == 2 and rec["flag_alarms"][0] == 0


def test_pm_info_link_downs_prefer_the_64_bit_counter():
    _, rec, _ = _rec()
    assert rec["link_down"][_row(rec, LEAF, 1)] == 2
    assert rec["link_down"][_row(rec, LEAF, 2)] == 7  # Ext not supported (0xff..fe): the 8-bit counter
    assert rec["link_down"][_row(rec, SPINE, 2)] == 0x129 and rec["link_recovery"][_row(rec, SPINE, 2)] == 3
    # N/A in every PortCountersExtended column (the HCA did not answer it): the 8-bit PortCounters values
    assert rec["link_down"][_row(rec, GPU, 1)] == 1 and rec["link_recovery"][_row(rec, GPU, 1)] == 4


def test_pm_info_columns_are_found_by_name_in_any_order():
    text = ("START_PM_INFO\nNodeGUID,PortGUID,PortNumber,LinkErrorRecoveryCounterExt,PortXmitWaitExt,"
            "LinkDownedCounterExt,LinkErrorRecoveryCounter,SymbolErrorCounterExt,LinkDownedCounter\n"
            "0x1,0x1,1,0x0000000000000009,0x0000000000001000,0x0000000000000300,7,0x0000000000000005,255\n"
            "0x1,0x1,2,N/A,N/A,N/A,7,N/A,3\nEND_PM_INFO\n")
    rec = ibdiagnet_phy.read(text, "x")
    assert rec["link_down"].tolist() == [0x300, 3] and rec["link_recovery"].tolist() == [9, 7]


def test_detected_by_content_even_without_the_ibdiagnet_header():
    text = "START_PHY_DB16\nNodeGuid,PortNum,field12,field13\n0x1,1,3,9\nEND_PHY_DB16\n"
    assert detect(text) == "ibdiagnet2.db_csv"
    rec = ibdiagnet_phy.read(text, "x")
    assert rec["raw_ber"][0] == pytest.approx(3e-9) and np.isnan(rec["eff_ber"][0])


def test_prm_field_names_read_when_a_version_writes_them():
    text = ("START_PHY_DB16\nNodeGuid,PortNum,time_since_last_clear_high,time_since_last_clear_low,"
            "effective_ber_coef,effective_ber_magnitude\n0x2,3,1,0,4,12\nEND_PHY_DB16\n")
    rec = ibdiagnet_phy.read(text, "x")
    assert rec["window_s"][0] == pytest.approx(2**32 / 1000) and rec["eff_ber"][0] == pytest.approx(4e-12)


@pytest.mark.parametrize(("body", "message"), [
    ("NodeGuid,PortNum,field12,field13\n0x1,1,3,x9\n", r"^x:3: section PHY_DB16, field13: 'x9' is not a number"),
    ("NodeGuid,PortNum,field12,field13\n0x1,1,16,9\n", r"^x:3: section PHY_DB16: raw_ber coefficient 16"),
    ("NodeGuid,PortNum,field12,field13\n0x1,1,1,9\n0x1,1,1,9\n", r"^x:4: section PHY_DB16: port 1 of "
                                                                 r"0x0000000000000001 twice \(also on line 3\)"),
    ("NodeGuid,PortNum,field12,field13\n0x1,300,1,9\n", r"^x:3: PortNum 300 is outside 0..254"),
    ("NodeGuid,PortNum,field12,field13\n0x1,1\n", r"^x:3: row of section PHY_DB16 has 2 fields"),
])
def test_errors_name_file_and_line(body, message):
    with pytest.raises(FormatError, match=message):
        ibdiagnet_phy.read(f"START_PHY_DB16\n{body}END_PHY_DB16\n", "x")


def test_truncated_section_and_no_health_section():
    with pytest.raises(FormatError, match=r"without END_PHY_DB16: truncated"):
        ibdiagnet_phy.read("START_PHY_DB16\nNodeGuid,PortNum\n0x1,1\n", "x")
    with pytest.raises(FormatError, match=r"no PHY_DB16, CABLE_INFO or PM_INFO section"):
        ibdiagnet_phy.read("START_NODES\nNodeDesc,NumPorts\nEND_NODES\n", "x")


def test_cable_lane_beyond_the_port_is_an_error():
    text = "START_CABLE_INFO\nNodeGuid,PortNum,RX13Power\n0x1,1,-1 dBm\nEND_CABLE_INFO\n"
    with pytest.raises(FormatError, match=r"^x:2: section CABLE_INFO, RX13Power: lane 13 beyond the 12 lanes"):
        ibdiagnet_phy.read(text, "x")


def test_columns_built_from_distinct_cells_at_scale():
    n = 20_000
    rows = "\n".join(f"0x{i + 1:x},1,{i % 7},{9 + i % 3},N/A" for i in range(n))
    text = f"START_PHY_DB16\nNodeGuid,PortNum,field12,field13,field0\n{rows}\nEND_PHY_DB16\n"
    rec = ibdiagnet_phy.read(text, "x")
    assert len(rec) == n and np.isnan(rec["window_s"]).all()
    i = 12_345
    assert rec["raw_ber"][np.flatnonzero(rec.guid == i + 1)[0]] == pytest.approx((i % 7) * 10.0 ** -(9 + i % 3))


def test_cable_flags_as_lane_masks_or_words():
    text = ("START_CABLE_INFO\nNodeGuid,PortNum,TXFaultAlarm,RXPowerLowWarning\n0x1,1,Yes,0x3\n0x1,2,No,N/A\n"
            "0x1,3,0,1\nEND_CABLE_INFO\n")
    rec = ibdiagnet_phy.read(text, "x")
    assert rec["flag_alarms"].tolist() == [1, 0, 0] and rec["flag_warnings"].tolist() == [2, 0, 1]
    with pytest.raises(FormatError, match=r"^x:4: section CABLE_INFO, TXFaultAlarm: 'maybe' is not a number"):
        ibdiagnet_phy.read(text.replace("0x1,2,No", "0x1,2,maybe"), "x")


def test_fec_of_a_fec_mode_section_where_ports_has_none():
    text = ("START_PORTS\nNodeGuid,PortNum,LinkWidthActv,LinkSpeedActv\n0x1,1,2,1024\n0x1,2,2,1024\nEND_PORTS\n"
            "START_FEC_MODE\nNodeGuid,PortNum,FECModeActive\n0x1,1,Standard RS-FEC (544,514)\n0x1,2,4\nEND_FEC_MODE\n"
            "START_PM_INFO\nNodeGUID,PortNumber,LinkDownedCounter\n0x1,1,0\n0x1,2,1\nEND_PM_INFO\n")
    rec = ibdiagnet_phy.read(text, "x")
    assert rec.names("fec").tolist() == ["kp4_rs_fec", "kp4_rs_fec"] and rec.names("speed").tolist() == ["HDR"] * 2


def test_the_first_repeated_port_is_named_with_the_row_it_repeats():
    text = "START_PM_INFO\nNodeGUID,PortNumber,LinkDownedCounter\n0x1,1,0\n0x1,2,0\n0x1,2,0\n0x1,1,0\nEND_PM_INFO\n"
    with pytest.raises(FormatError, match=r"^x:5: section PM_INFO: port 2 of 0x0000000000000001 twice \(also on "
                                          r"line 4\)"):
        ibdiagnet_phy.read(text, "x")
