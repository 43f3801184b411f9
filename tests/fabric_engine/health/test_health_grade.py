"""Grading: BER thresholds by speed/FEC/cable with a minimum window, modules against their thresholds, deltas."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.cli import main
from fabric_engine.errors import FormatError
from fabric_engine.health import read_file
from fabric_engine.health.grade import ERROR, NORMAL, UNKNOWN, WARNING, ber_from_deltas, grade_ber, module_status
from fabric_engine.health.records import Builder, code, empty, merge
from fabric_engine.health.thresholds import load, normalize_cable, normalize_fec

DATA = Path(__file__).parents[2] / "data" / "health"


def _ports(*rows):
    b = Builder("t")
    for i, values in enumerate(rows):
        b.add(0, "n", i + 1, values)
    return b.build()


def test_ndr_thresholds_depend_on_fec_and_window():
    th = load()
    plr = {"speed": "NDR", "fec": "ll_rs_fec_plr", "up": 1, "window_s": 8000.0}
    kp4 = {**plr, "fec": "kp4_rs_fec"}
    rec = _ports({**plr, "eff_ber": 1e-12}, {**plr, "eff_ber": 3e-12}, {**plr, "eff_ber": 1e-11},
                 {**kp4, "eff_ber": 3e-12},  # normal with PLR, error with KP4 (1E-14)
                 {**plr, "eff_ber": 1e-10, "window_s": 600.0},  # not up 125 minutes yet
                 {**plr, "eff_ber": 1e-10, "up": 0}, {**plr})
    g = grade_ber(rec, th)
    assert g["effective"].tolist() == [NORMAL, WARNING, ERROR, ERROR, UNKNOWN, UNKNOWN, UNKNOWN]
    assert g["grade"].tolist() == [NORMAL, WARNING, ERROR, ERROR, UNKNOWN, UNKNOWN, UNKNOWN]


def test_raw_ber_uses_worst_lane_and_symbol_grades():
    th = load()
    base = {"speed": "HDR", "fec": "kp4_rs_fec", "up": 1, "window_s": 3600.0, "eff_ber": 0.0}
    lanes = [1e-6, 3e-4, 1e-6, 1e-6]
    rec = _ports({**base, "raw_ber": 1e-6, "raw_ber_lane": lanes}, {**base, "raw_ber": 5e-5},
                 {**base, "sym_ber": 5e-12})
    g = grade_ber(rec, th)
    assert g["raw"].tolist() == [ERROR, WARNING, UNKNOWN]
    assert g["symbol"].tolist() == [UNKNOWN, UNKNOWN, WARNING]
    assert g["grade"].tolist() == [ERROR, WARNING, WARNING]


def test_site_override_wins(tmp_path):
    site = tmp_path / "site.toml"
    site.write_text('[[ber]]\nspeed = "*"\nfec = "*"\ncable = "*"\nmeasure = "effective"\nnormal = 1e-9\n'
                    'warning = 1e-9\nerror = 1e-8\nmin_window_s = 0\nsource = "site acceptance test"\n')
    rec = _ports({"speed": "EDR", "fec": "rs_fec", "up": 1, "window_s": 10.0, "eff_ber": 1e-10})
    assert grade_ber(rec, load())["effective"].tolist() == [UNKNOWN]  # repository: 300 s window
    assert grade_ber(rec, load(site))["effective"].tolist() == [NORMAL]


def test_bad_site_table_names_the_row(tmp_path):
    site = tmp_path / "site.toml"
    site.write_text('[[ber]]\nspeed = "*"\nfec = "*"\ncable = "*"\nmeasure = "effective"\nnormal = 1e-8\n'
                    'warning = 1e-9\nerror = 1e-8\nmin_window_s = 0\nsource = "x"\n')
    with pytest.raises(FormatError, match=r"site.toml: \[\[ber\]\] row 1: needs normal <= warning <= error"):
        load(site)


def test_every_table_row_has_a_source():
    th = load()
    assert th.ber and all(r["source"] for r in th.ber) and all(r["source"] for r in th.module)


def test_module_thresholds_own_first_then_fallback():
    th = load()
    rec = _ports({"present": 1, "temp": 72.0, "temp_th": [-5, 0, 75, 80]},  # inside its own warning range
                 {"present": 1, "temp": 72.0},  # no thresholds of its own: fallback warning at 70
                 {"present": 1, "temp": 40.0, "rx_power": [0.1, -12.0], "rx_power_th": [-10.4, np.nan, np.nan, 5.4]},
                 {"present": 1, "temp": 40.0, "flag_warnings": 1}, {"present": 0, "flag_alarms": 3})
    m = module_status(rec, th)
    assert m["module"].tolist() == [True, True, True, True, False]
    assert m["alarm"].tolist() == [False, False, True, False, False]
    assert m["warning"].tolist() == [False, True, False, True, False]


def test_ber_from_counter_deltas():
    before, after = (read_file(DATA / n, [])[1] for n in ("perfquery_T_before.txt", "perfquery_T_after.txt"))
    for rec in (before, after):
        rec["speed"][:] = code("speed", "NDR")
        rec["lanes"][:] = 4
    out = ber_from_deltas(before, after, interval_s=10.0)
    bits_per_lane = 106.25e9 * 10
    i = int(np.flatnonzero(out.name == "lid:20")[0])
    assert out["raw_ber"][i] == pytest.approx(17000 / (4 * bits_per_lane))
    assert out["raw_ber_lane"][i, :4] == pytest.approx([4250 / bits_per_lane, 4250 / bits_per_lane, 0,
                                                        8500 / bits_per_lane])
    assert out["eff_ber"][i] == pytest.approx(17 / (4 * bits_per_lane)) and out["window_s"][i] == 10
    # a counter that went down (cleared) gives no BER
    after["raw_errors"][i] = 0
    assert np.isnan(ber_from_deltas(before, after, 10.0)["raw_ber"][i])


def test_merge_keeps_first_given_value_per_port():
    a = _ports({"eff_ber": 1e-13, "rx_power": [1.0, np.nan]}, {"eff_ber": 2e-13})
    b = _ports({"eff_ber": 5e-13, "temp": 40.0, "vendor": "Mellanox", "rx_power": [9.0, 2.0], "fec": "kp4_rs_fec"})
    m = merge([a, b])
    assert len(m) == 2 and m.port.tolist() == [1, 2]
    assert m["eff_ber"].tolist() == [1e-13, 2e-13] and m["temp"][0] == 40 and m["vendor"][0] == "Mellanox"
    assert m["rx_power"][0, :2].tolist() == [1.0, 2.0] and m.names("fec")[0] == "kp4_rs_fec"


def test_sizes_checked_before_allocating():
    with pytest.raises(FormatError, match="more than the 1,048,576 ports"):
        empty(2_000_000)


def test_normalizers():
    assert normalize_fec("Standard LL RS-FEC - (271,257)") == "ll_rs_fec"
    assert normalize_fec("RS-FEC - (528,514)") == "rs_fec" and normalize_fec("N/A") == ""
    assert normalize_cable("Passive copper cable") == "dac" and normalize_cable("Active optical cable") == "aoc"


def test_cli_json_summary(capsys):
    files = [str(DATA / n) for n in ("ufm_low_freq_debug.csv", "ibdiagnet2.cables", "mlxlink_unplugged.txt")]
    assert main(["health", *files, "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    # the cables' port 1 and 2 of GUID ...c0 merge with the UFM rows of the same ports
    assert s["ports"] == 5
    assert s["ber"] == {"normal": 1, "warning": 0, "error": 1, "unknown": 3}
    assert s["modules"] == 3 and s["module_alarms"] == 1 and s["links_down"] == 2
    assert {"line", "text", "reason"} <= set(s["warnings"][0])
    assert s["worst"][0]["grade"] == "error" and s["worst"][0]["port"] == 2
    assert {i["sn"] for i in s["inventory"]} >= {"MT2312FT01234", "MT2312FT02234"}


def test_cli_deltas_and_text(capsys):
    files = [str(DATA / n) for n in ("perfquery_T_before.txt", "perfquery_T_after.txt")]
    assert main(["health", *files, "--interval", "600", "--speed", "NDR", "--width", "4", "--fec", "kp4_rs_fec"]) == 0
    out = capsys.readouterr().out
    assert "BER:              2 normal, 0 warning, 0 error, 0 unknown" in out and "600 s to 600 s" in out


def test_cli_bad_input_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("# PortExtendedSpeedsCounters counters: Lid 3 port 1\nPortSelect:.......x1\n")
    assert main(["health", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}:2: PortSelect: 'x1' is not a number")
