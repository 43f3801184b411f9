"""The validation report (issue 38): checks run or skipped, KPIs, problems only, the daily diff, JSON/CSV, CLI."""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from fabric_engine.cli import main
from fabric_engine.twin.plan import read_plan_csv
from fabric_engine.validation import read_pkeys, read_sminfo, validate
from fabric_engine.validation.report import CSV_COLUMNS, diff_reports

from .conftest import DATA, device, vitals_types


def full_report(fabric, **kw):
    return validate(fabric, sminfo=read_sminfo((DATA / "sminfo_standby_outranks.txt").read_text()).sms,
                    pkeys=read_pkeys((DATA / "ibsim_pkeys.txt").read_text()).tables, **kw)


def test_checks_without_input_are_skipped_not_passed(ibsim_fabric):
    r = validate(ibsim_fabric)
    assert r.checks["sm_mastership"] == {"status": "skipped", "findings": 0, "why": "no sminfo given"}
    assert r.checks["pkey_mismatch"]["status"] == "skipped" and r.checks["asic_suspected"]["status"] == "skipped"
    assert r.checks["link_below_expected"]["status"] == "fail" and r.checks["duplicate_ids"]["status"] == "pass"


def test_findings_worst_first_and_problems_only(ibsim_fabric):
    r = full_report(ibsim_fabric)
    assert [f.severity for f in r.findings] == ["error", "error", "warning", "info"]
    assert [f.check for f in r.findings[:2]] == ["link_below_expected", "pkey_mismatch"]
    p = r.problems_only()
    assert all(f.severity != "info" for f in p.findings) and len(p.findings) == 3
    assert set(p.checks) == {"link_below_expected", "sm_mastership", "pkey_mismatch"}
    assert r.counts() == {"error": 2, "warning": 1, "info": 1}


def test_kpis(ibsim_fabric):
    grade = np.zeros(int(ibsim_fabric.nports.sum()), np.int8)
    c = 0
    grade[ibsim_fabric.port_offset[ibsim_fabric.a_node[c]] + ibsim_fabric.a_port[c] - 1] = 2
    k = validate(ibsim_fabric, port_grade=grade).kpis
    assert k["connected_endpoints"] == {"connected": 4, "expected": 4, "share": 1.0}
    assert k["topology_correctness"] is None
    slow = k["healthy_links"]["below_expected"]
    assert slow == 1 and k["healthy_links"]["healthy"] == 8 - 1 - (c != 1) and k["healthy_links"]["graded"] == 8
    plan = read_plan_csv("leaf01,1,gpu0001,1\nleaf01,2,gpu0002,1\nleaf01,3,gpu0009,1\nleaf02,1,gpu0004,1\n")
    k = validate(ibsim_fabric, plan=plan).kpis
    assert k["connected_endpoints"] == {"connected": 4, "expected": 5, "share": 0.8}  # gpu0009 absent
    t = k["topology_correctness"]
    assert t["planned_cables"] == 4 and t["counts"]["missing"] == 0 and t["counts"]["miswired"] == 2
    assert t["share"] == 0.5
    ref = validate(ibsim_fabric, reference=ibsim_fabric).kpis["topology_correctness"]
    assert ref["share"] == 1.0


def test_devices_join_the_report(ibsim_fabric):
    Fan, _, _, _ = vitals_types()
    r = validate(ibsim_fabric, devices=[device("leaf01", 0x98039B0300000001, fans=[Fan("3", 0, True)]),
                                        device("leaf02", 0x98039B0300000002, firmware="31.2010.1000"),
                                        device("spine01", 0x98039B0300000003)])
    assert r.checks["firmware"]["status"] == "fail" and r.checks["device_vitals"]["status"] == "fail"
    assert {f.subject for f in r.findings if f.check in ("fan", "firmware")} == {"leaf01 fan 3", "leaf02"}


def test_json_and_csv(ibsim_fabric):
    r = full_report(ibsim_fabric)
    d = json.loads(r.to_json())
    assert d["findings"][1]["evidence"]["only_at_ca"] == ["0x0001"] and d["findings"][0]["link"] is not None
    rows = list(csv.reader(io.StringIO(r.to_csv())))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 1 + len(r.findings)
    assert json.loads(rows[2][5])["switch"] == "leaf01/1"


def test_diff_of_two_days(ibsim_fabric):
    yesterday = validate(ibsim_fabric, sminfo=read_sminfo((DATA / "sminfo_two_masters.txt").read_text()).sms)
    today = full_report(ibsim_fabric)
    d = diff_reports(json.loads(yesterday.to_json()), json.loads(today.to_json()))
    assert [f["check"] for f in d["new"]] == ["pkey_mismatch", "sm_mastership", "sm_mastership"]
    assert [(f["check"], f["subject"]) for f in d["resolved"]] == [("sm_mastership", "subnet")]
    assert d["changed"] == [] and d["kpis"]["healthy_links"] == {"was": 0.875, "now": 0.875}
    assert diff_reports(today.as_dict(), today.as_dict())["new"] == []


def test_cli_validate(capsys):
    topo = str(DATA / "ibsim_trained_down.ibnd")
    code = main(["validate", topo, "--sminfo", str(DATA / "ibsim_sminfo.txt"), "--pkeys", str(DATA / "ibsim_pkeys.txt"),
                 "--json", "--problems-only"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and [f["check"] for f in out["findings"]] == ["link_below_expected", "pkey_mismatch"]
    assert set(out["checks"]) == {"link_below_expected", "pkey_mismatch"}
    assert main(["validate", topo, "--csv"]) == 1
    assert capsys.readouterr().out.splitlines()[0] == ",".join(CSV_COLUMNS)
    assert main(["validate", topo, "--pkeys", str(DATA / "ibsim_sminfo.txt")]) == 2
    assert "ibsim_sminfo.txt:1" in capsys.readouterr().err


def test_cli_reads_device_captures(capsys):
    devices = DATA.parent / "devices"
    code = main(["validate", str(DATA / "ibsim_trained_down.ibnd"), "--devices",
                 str(devices / "ibdiagnet2_devices.db_csv"), str(devices / "ibswinfo_full.txt"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["checks"]["device_vitals"]["status"] == "fail"
    assert out["checks"]["duplicate_ids"]["status"] == "pass"  # one switch seen by two tools is one switch
    assert {f["check"] for f in out["findings"]} >= {"fan", "psu", "device_errors"}
