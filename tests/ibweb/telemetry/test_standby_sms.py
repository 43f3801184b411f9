"""Issue 38: the collector reads every SM, not only the master: ``sminfo``, then ``saquery -s`` (the SM-capable
ports) and ``sminfo <lid>`` of each other one; the validation's mastership check then sees standbys and a second
master. ``saquery -s`` as infiniband-diags printed it on ibsim with two OpenSMs (priorities 1 and 15)."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from fabric_engine.errors import FormatError
from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.validation import validate
from ibweb.live.validation.build import build_report
from ibweb.live.validation.sm_silent import split_sms
from ibweb.runtime import device_readings
from ibweb.telemetry import device_sweep

from .test_telemetry_app import _clean_cache, make_config  # noqa: F401 (_clean_cache: autouse)

DATA = Path(__file__).parents[2] / "data"
LINKINFO = (DATA / "telemetry" / "iblinkinfo.txt").read_text()
SAQUERY_S = """IsSM ports
PortInfoRecord dump:
\t\tEndPortLid..............7
\t\tPortNum.................1
\t\tbase_lid................7
\t\tmaster_sm_base_lid......8
\t\tcapability_mask.........0x50C04A
PortInfoRecord dump:
\t\tEndPortLid..............8
\t\tPortNum.................1
\t\tbase_lid................8
\t\tmaster_sm_base_lid......8
\t\tcapability_mask.........0x50C04A

IsSMdisabled ports
PortInfoRecord dump:
\t\tEndPortLid..............9
\t\tPortNum.................1
\t\tbase_lid................9
\t\tmaster_sm_base_lid......8
\t\tcapability_mask.........0x50C04A
"""
pytestmark = pytest.mark.django_db(transaction=True)


def _tools(tmp_path: Path, lid7_state: int) -> list[str]:
    """sminfo (the master at LID 8), saquery -s as above, sminfo 7 in state ``lid7_state``."""
    (tmp_path / "saquery.txt").write_text(SAQUERY_S)
    name = {2: "SMINFO_STANDBY", 3: "SMINFO_MASTER"}[lid7_state]
    script = tmp_path / "fake-diags"
    script.write_text(f"""#!/bin/sh
S={lid7_state}; N={name}
echo "$*" >> "{tmp_path}/calls.log"
case "$1 $2" in
  "sminfo ") echo "sminfo: sm lid 8 sm guid 0x98039b0300000001, activity count 239 priority 15 state 3 SMINFO_MASTER" ;;
  "sminfo 7") echo "sminfo: sm lid 7 sm guid 0x98039b0300000002, activity count 86 priority 1 state $S $N" ;;
  "saquery -s") cat "{tmp_path}/saquery.txt" ;;
  *) exit 2 ;;
esac
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return [str(script)]


def test_sm_lids_reads_the_is_sm_section_only():
    assert device_sweep.sm_lids(SAQUERY_S) == [7, 8]
    assert device_sweep.sm_lids("IsSM ports\n\nIsSMdisabled ports\n") == []
    with pytest.raises(FormatError, match=r"saquery -s:1: a PortInfoRecord before 'IsSM ports'"):
        device_sweep.sm_lids("\t\tEndPortLid..............7\n")
    with pytest.raises(FormatError, match="not the output of 'saquery -s'"):
        device_sweep.sm_lids("saquery: iberror: failed\n")


@pytest.mark.parametrize(("lid7_state", "status"), [(2, "pass"), (3, "fail")])
def test_the_standby_and_a_second_master_are_read_and_judged(tmp_path, lid7_state, status):
    config = make_config(f"sms{lid7_state}", command_prefix=_tools(tmp_path, lid7_state), timeout_s=5.0,
                         validation_every=3)
    warnings = device_sweep.run_validation(config, LINKINFO)
    assert not [w for w in warnings if w["text"].startswith(("sminfo", "saquery"))], warnings
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert [c for c in calls if c.startswith(("sminfo", "saquery"))] == ["sminfo", "saquery -s", "sminfo 7"]
    r = device_readings.read(config.fabric_id)
    assert [(sm.lid, sm.state) for sm in r.sms] == [(8, 3), (7, lid7_state)]
    report = validate(fabric_from_linkinfo(parse_iblinkinfo(LINKINFO)), sminfo=r.sms)
    assert report.checks["sm_mastership"]["status"] == status
    if status == "fail":
        (f,) = [f for f in report.findings if f.check == "sm_mastership"]
        assert f.severity == "error" and "2 master SMs" in f.message


def test_without_saquery_the_master_alone_is_kept_with_a_warning(tmp_path):
    script = tmp_path / "fake-diags"
    script.write_text('#!/bin/sh\ncase "$1" in\n  sminfo) echo "sminfo: sm lid 8 sm guid 0x98039b0300000001, '
                      'activity count 1 priority 15 state 3 SMINFO_MASTER" ;;\n  *) exit 2 ;;\nesac\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    config = make_config("nosa", command_prefix=[str(script)], timeout_s=5.0, validation_every=3)
    warnings = device_sweep.run_validation(config, LINKINFO)
    (w,) = [w for w in warnings if w["text"] == "saquery -s"]
    assert "standby SMs not read" in w["reason"]
    assert [sm.lid for sm in device_readings.read(config.fabric_id).sms] == [8]


def test_a_standby_that_stops_answering_is_kept_and_the_report_names_it(tmp_path):
    """Only the master answers the second round (``sminfo 7`` fails): the standby is kept, marked as not
    answering with when it last answered, and the validation report has a finding of the SM check naming it."""
    prefix = _tools(tmp_path, 2)
    config = make_config("smgone", command_prefix=prefix, timeout_s=5.0, validation_every=3)
    device_sweep.run_validation(config, LINKINFO)
    first = device_readings.read(config.fabric_id)
    seen = first.sm_seen[0x98039B0300000002]
    script = Path(prefix[0])
    script.write_text(script.read_text().replace('"sminfo 7") echo', '"sminfo 7") exit 3; echo'))
    warnings = device_sweep.run_validation(config, LINKINFO)
    assert [w["text"] for w in warnings if w["text"].startswith("sminfo")] == ["sminfo 7"]
    r = device_readings.read(config.fabric_id)
    assert [(sm.lid, sm.state) for sm in r.sms] == [(8, 3), (7, 2)]  # the standby is not dropped
    answering, silent = split_sms(r)
    assert [sm.lid for sm in answering] == [8] and [(sm.lid, t) for sm, t in silent] == [(7, seen)]
    stored = build_report(fabric_from_linkinfo(parse_iblinkinfo(LINKINFO)), devices=r, t=time.time())
    assert stored["report"]["checks"]["sm_mastership"] == {"status": "fail", "findings": 1}
    (f,) = [f for f in stored["report"]["findings"] if f["check"] == "sm_mastership"]
    assert f["severity"] == "warning" and "(LID 7)" in f["subject"] and "has not answered sminfo since" in f["message"]
    assert f["evidence"]["last_seen"] == seen and f["evidence"]["sm"]["answering"] is False
    assert stored["inputs"]["sms_silent"] == 1
