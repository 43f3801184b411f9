"""congestion_control and cc_* options of opensm.conf (issue 41)."""

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from fabric_engine.backpressure.cc_params import CongestionControl
from fabric_engine.errors import FabricEngineError, FormatError
from fabric_engine.formats.opensm_cc import OPENSM_CCT_ENTRY_MAX, parse_cc_conf, write_cc_conf
from tests.conftest import require_tool

#: A fabric with congestion control on: every switch port marks, SLs 0 and 3 throttle, a 128-entry table.
ENABLED = """\
# opensm.conf of a production fabric (qos and other options around the cc ones)
qos TRUE
qos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7
congestion_control TRUE
cc_key 0x0000000000000000
cc_max_outstanding_mads 500
cc_sw_cong_setting_control_map 0x1F
cc_sw_cong_setting_victim_mask 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff
cc_sw_cong_setting_credit_mask 0x0
cc_sw_cong_setting_threshold 0x0F   # aggressive
cc_sw_cong_setting_packet_size 8
cc_sw_cong_setting_credit_starvation_threshold 0x00
cc_sw_cong_setting_credit_starvation_return_delay 0:0
cc_sw_cong_setting_marking_rate 010
cc_ca_cong_setting_port_control 0x0001
cc_ca_cong_setting_control_map 0x0009
cc_ca_cong_setting_ccti_timer 0 150
cc_ca_cong_setting_ccti_increase 0 1
cc_ca_cong_setting_trigger_threshold 0 0
cc_ca_cong_setting_ccti_min 0 0
cc_ca_cong_setting_ccti_timer 3\t1200
cc_ca_cong_setting_ccti_increase 3 2
cc_cct "CCT"
sweep_interval 10
"""
CCT = ",".join(f"{i // 32}:{i % 32 * 50}" for i in range(OPENSM_CCT_ENTRY_MAX))


def enabled_text() -> str:
    return ENABLED.replace('"CCT"', CCT)


def test_realistic_enabled_config():
    cc = parse_cc_conf(enabled_text())
    assert cc.enabled and cc.sw_control_map == 0x1F and cc.threshold == 15 and cc.packet_size == 8
    assert cc.victim_mask == (1 << 255) - 1 and cc.credit_mask == 0
    assert cc.marking_rate == 8  # a leading 0 is octal, as C strtoul reads it
    assert cc.ca_port_control == 1 and cc.ca_control_map == 0b1001
    assert cc.ccti_timer[:4] == (150, 0, 0, 1200) and cc.ccti_increase[:4] == (1, 0, 0, 2)
    assert cc.ccti_timer[4:] == (0,) * 12 and cc.ccti_min == (0,) * 16
    assert len(cc.cct) == 128 and cc.cct[:2] == ((0, 0), (0, 50)) and cc.cct[-1] == (3, 1550)
    assert cc.sl_enabled(0) and cc.sl_enabled(3) and not cc.sl_enabled(1) and cc.marks


def test_defaults_without_options_and_null_table():
    assert parse_cc_conf("qos TRUE\nsweep_interval 10\n") == CongestionControl()
    assert parse_cc_conf("cc_cct (null)\n").cct == ()
    assert parse_cc_conf("cc_sw_cong_setting_victim_mask 'ff'\n").victim_mask == 0xFF  # quotes as clean_val


@pytest.mark.parametrize("cc", [
    CongestionControl(),
    parse_cc_conf(enabled_text()),
    replace(CongestionControl(), enabled=True, credit_mask=1 << 200, cs_threshold=3, cs_return_delay=(2, 0x3FFF),
            ccti_min=(0,) * 15 + (7,), trigger_threshold=(9,) + (0,) * 15, cct=((0, 0),)),
])
def test_round_trip(cc):
    text = write_cc_conf(cc)
    assert parse_cc_conf(text) == cc
    assert text.startswith("congestion_control ") and text.endswith("\n")


def test_written_per_sl_lines_and_null_table():
    text = write_cc_conf(parse_cc_conf(enabled_text()))
    assert "cc_ca_cong_setting_ccti_timer 3 1200\ncc_ca_cong_setting_ccti_increase 3 2\n" in text
    assert "cc_ca_cong_setting_ccti_timer 1 " not in text
    assert write_cc_conf(CongestionControl()).endswith("cc_cct (null)\n")


@pytest.mark.parametrize("text, line, words", [
    ("congestion_control true\n", 1, "TRUE or FALSE"),
    ("\ncc_sw_cong_setting_threshold 0x1G\n", 2, "cc_sw_cong_setting_threshold: '0x1G' is not a number"),
    ("cc_sw_cong_setting_threshold 08\n", 1, "not a number"),
    ("cc_sw_cong_setting_threshold -1\n", 1, "not a number"),
    ("cc_sw_cong_setting_packet_size 256\n", 1, "cc_sw_cong_setting_packet_size 256: must be 0..255"),
    ("cc_sw_cong_setting_threshold 16\n", 1, "cc_sw_cong_setting_threshold 16 is out of range 0..15"),
    ("cc_sw_cong_setting_control_map 0x20\n", 1, "control_map 32 is out of range 0..31"),
    ("cc_sw_cong_setting_victim_mask 0xZZ\n", 1, "not a hex bit mask"),
    ("cc_sw_cong_setting_victim_mask 0x" + "f" * 65 + "\n", 1, "65 hex digits, at most 64"),
    ("cc_sw_cong_setting_credit_starvation_return_delay 4:0\n", 1, "return_delay shift 4 is out of range 0..3"),
    ("cc_sw_cong_setting_credit_starvation_return_delay 4\n", 1, "write shift:multiplier"),
    ("cc_ca_cong_setting_ccti_timer 16 5\n", 1, "SL 16 is out of range 0..15"),
    ("cc_ca_cong_setting_ccti_timer 3\n", 1, "write the SL and the value"),
    ("cc_ca_cong_setting_ccti_timer 3 5 6\n", 1, "write the SL and the value"),
    ("cc_ca_cong_setting_ccti_timer 3 65536\n", 1, "ccti_timer of SL 3 65536: must be 0..65535"),
    ("a 1\n\ncc_ca_cong_setting_ccti_timer 1 1\ncc_ca_cong_setting_ccti_min 2 256\n", 4, "ccti_min of SL 2"),
    ("cc_cct 0:0,1:2,x:3\n", 1, "cc_cct entry 2 shift: 'x' is not a number"),
    ("cc_cct 0:0,1:2,3\n", 1, "cc_cct entry 2 '3': write shift:multiplier"),
    ("cc_cct 0:0,1:16384\n", 1, "cc_cct entry 1 multiplier 16384 is out of range 0..16383"),
    ("cc_cct " + ",".join(["0:1"] * 129) + "\n", 1, "129 entries; OpenSM keeps at most 128"),
    ("cc_sw_cong_setting_treshold 3\n", 1, "unknown congestion control option 'cc_sw_cong_setting_treshold'"),
    ("cc_sw_cong_setting_marking_rate\n", 1, "cc_sw_cong_setting_marking_rate needs a value"),
])
def test_errors_name_source_and_line(text, line, words):
    with pytest.raises(FormatError) as err:
        parse_cc_conf(text, "site.conf")
    assert err.value.source == "site.conf" and err.value.line == line
    assert words in err.value.message and str(err.value).startswith(f"site.conf:{line}: ")


@pytest.mark.parametrize("text, words", [
    ("congestion_control TRUE\n#\ncongestion_control FALSE\n", "congestion_control is given twice (first on line 1)"),
    ("cc_cct 0:0\ncc_sw_cong_setting_threshold 1\ncc_cct (null)\n", "cc_cct is given twice (first on line 1)"),
    ("cc_ca_cong_setting_ccti_timer 2 1\ncc_ca_cong_setting_ccti_timer 3 1\ncc_ca_cong_setting_ccti_timer 2 9\n",
     "cc_ca_cong_setting_ccti_timer of SL 2 is given twice (first on line 1)"),
])
def test_duplicates(text, words):
    with pytest.raises(FormatError) as err:
        parse_cc_conf(text)
    assert err.value.line == 3 and words in err.value.message and err.value.source == "opensm.conf"


def test_writer_refuses_bad_settings():
    with pytest.raises(FabricEngineError, match="cc_sw_cong_setting_threshold 99"):
        write_cc_conf(replace(CongestionControl(), threshold=99))
    with pytest.raises(ValueError, match="OpenSM keeps at most 128"):
        write_cc_conf(replace(CongestionControl(), cct=((0, 1),) * 129))


def _opensm_conf(tmp_path: Path, name: str, *read: str) -> str:
    """What ``opensm -c`` writes (after reading ``read``: ``-F FILE``), its log kept in ``tmp_path``."""
    require_tool("opensm")
    out = tmp_path / name
    subprocess.run(["opensm", *read, "-f", str(tmp_path / "opensm.log"), "-c", str(out)], check=True,
                   capture_output=True, timeout=60)
    return out.read_text()


@pytest.mark.realtools
def test_opensm_own_default_file(tmp_path):
    text = _opensm_conf(tmp_path, "default.conf")
    assert "cc_ca_cong_setting_ccti_timer 0 0" in text and "cc_cct (null)" in text
    assert parse_cc_conf(text, "default.conf") == CongestionControl()


@pytest.mark.realtools
def test_opensm_reads_what_we_write(tmp_path):
    """OpenSM reads the written options (-F) and writes them back (-c) to the same settings."""
    cc = parse_cc_conf(enabled_text())
    (tmp_path / "ours.conf").write_text(write_cc_conf(cc))
    assert parse_cc_conf(_opensm_conf(tmp_path, "back.conf", "-F", str(tmp_path / "ours.conf"))) == cc
