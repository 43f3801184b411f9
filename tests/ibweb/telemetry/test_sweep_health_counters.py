"""Issue 37: the collector's optional ``perfquery -T`` per switch each sweep, read into the fabric's health readings;
a switch that cannot answer it (ibsim: ``cannot query PortExtendedSpeedsCounters``) is a warning, not a failure."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from ibweb.runtime import health_readings
from ibweb.telemetry.choices import SweepStatus
from ibweb.telemetry.sweeps import run_sweep

from .test_telemetry_app import _clean_cache, make_config  # noqa: F401 (_clean_cache: autouse)

DATA = Path(__file__).parents[2] / "data"
pytestmark = pytest.mark.django_db(transaction=True)

#: iblinkinfo and perfquery as captured; ``perfquery -T`` answered by LID 2 (leaf01) only, as ibsim's other
#: switches would: ``cannot query PortExtendedSpeedsCounters``. Every call is logged to ``$LOG``.
FAKE_TOOLS = """#!/bin/sh
echo "$*" >> "$LOG"
tool="$1"; shift
case "$tool" in
  iblinkinfo) cat "$DATA/telemetry/iblinkinfo.txt" ;;
  perfquery)
    case "$1" in
      -T) if [ "$3" = "2" ]; then cat "$EXT"; exit 0; fi
          echo "ibwarn: [1] main: cannot query PortExtendedSpeedsCounters" >&2; exit 255 ;;
      -x) cat "$DATA/telemetry/perfquery_ext_loop.txt" ;;
      *) cat "$DATA/telemetry/perfquery_loop.txt" ;;
    esac ;;
  *) exit 2 ;;
esac
"""


@pytest.fixture
def tools(tmp_path):
    script = tmp_path / "fake-diags"
    script.write_text(FAKE_TOOLS)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    ext = tmp_path / "ext.txt"  # the fixture's two RS-FEC ports as leaf01's ports 1 and 2
    ext.write_text((DATA / "health" / "perfquery_T_after.txt").read_text()
                   .replace("Lid 20 port 1", "Lid 2 port 1").replace("Lid 21 port 1", "Lid 2 port 2"))
    env = {"DATA": str(DATA), "EXT": str(ext), "LOG": str(tmp_path / "calls.log")}
    return script, env, tmp_path / "calls.log"


@pytest.mark.parametrize("on", [True, False])
def test_perfquery_T_each_sweep_when_on_and_a_switch_without_it_is_a_warning(tools, on):
    script, env, log = tools
    config = make_config("hc", command_prefix=[str(script)], environment=env, timeout_s=5.0, health_counters=on)
    sweep = run_sweep(config)
    assert sweep.status == SweepStatus.OK and sweep.failures == [] and sweep.ports > 0
    calls = log.read_text().splitlines()
    ext_calls = [c for c in calls if c.startswith("perfquery -T")]
    rec = health_readings.read(config.fabric_id)
    if not on:
        assert ext_calls == [] and rec is None
        return
    assert len(ext_calls) == 6 and "perfquery -T -l 2 1,2,3,4" in ext_calls  # every switch, its cabled ports
    cannot = [w for w in sweep.warnings if "cannot query PortExtendedSpeedsCounters" in w["reason"]]
    assert len(cannot) == 5 and {w["text"] for w in cannot} == {f"perfquery -T lid {lid}" for lid in range(3, 8)}
    by_port = dict(zip(rec.keys().tolist(), range(len(rec)), strict=True))
    # leaf01's ports 1 and 2 by perfquery -T; 3 and 4, which it did not count, by their PortCounters (symbol errors)
    assert sorted(rec.name.tolist()) == ["leaf01"] * 4
    assert sorted(zip(rec.port.tolist(), rec.source.tolist(), strict=True)) == [
        (1, "perfquery -T #1"), (2, "perfquery -T #1"), (3, "perfquery PortCounters"), (4, "perfquery PortCounters")]
    one = by_port[f"0x{0x98039b0300000001:016x}/1"]
    assert rec["fec_uncorrectable"][one] == 17 and rec["raw_errors"][one] == 21000
    assert rec["fec_uncorrectable"][by_port[f"0x{0x98039b0300000001:016x}/2"]] == 0
