"""Issue 41: the collector's optional ``perfquery --rcvcc`` per cabled switch port each sweep, kept as the fabric's
congestion readings and served as FECN/BECN rates per second by the port's counters API and ``/metrics``; a switch
that cannot answer it (ibsim: ``cannot query PortRcvConCtrl``) is one warning, not a failure, and is not asked for
its other ports. A drop directory's congestion control blocks are read the same way."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import time
from pathlib import Path

import numpy as np
import pytest

from ibweb.live.engine.runner import FabricRunner
from ibweb.telemetry import cc_readings
from ibweb.telemetry.choices import CollectorSource, SweepStatus
from ibweb.telemetry.collector import SwitchTarget, rcvcc_commands
from ibweb.telemetry.forms import CollectorForm
from ibweb.telemetry.sweeps import run_sweep
from tests.support.engine_fixtures import settled_tick
from tests.support.tenancy_fixtures import operator_api

from .test_telemetry_app import _clean_cache, make_config  # noqa: F401 (_clean_cache: autouse)

DATA = Path(__file__).parents[2] / "data"
pytestmark = pytest.mark.django_db(transaction=True)

#: iblinkinfo and perfquery as captured; ``perfquery --rcvcc LID PORT`` answered by LID 2 (leaf01) only, as
#: ibsim's switches would not: ``cannot query PortRcvConCtrl``. FECN = $CC * port, BECN = $CC. Calls go to ``$LOG``.
FAKE_TOOLS = """#!/bin/sh
echo "$*" >> "$LOG"
tool="$1"; shift
case "$tool" in
  iblinkinfo) cat "$DATA/telemetry/iblinkinfo.txt" ;;
  perfquery)
    case "$1" in
      --rcvcc) if [ "$2" != "2" ]; then
                 echo "ibwarn: [1] mad_rpc: _do_madrpc failed; dport (Lid $2)" >&2
                 echo "perfquery: iberror: failed: cannot query PortRcvConCtrl"; exit 255; fi
               v=$(cat "$CC")
               echo "# PortRcvConCtrl counters: Lid 2 port $3"
               echo "PortSelect:......................$3"
               echo "CounterSelect:...................0x0000"
               echo "PortPktRcvFECN:..................$((v * $3))"
               echo "PortPktRcvBECN:..................$v" ;;
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
    cc = tmp_path / "cc"
    cc.write_text("100")
    env = {"DATA": str(DATA), "CC": str(cc), "LOG": str(tmp_path / "calls.log")}
    return script, env, tmp_path / "calls.log", cc


def test_one_rcvcc_command_per_cabled_port():
    assert rcvcc_commands(SwitchTarget(7, (1, 3))) == [["perfquery", "--rcvcc", "7", "1"],
                                                       ["perfquery", "--rcvcc", "7", "3"]]


def test_the_form_has_the_option_with_help():
    form = CollectorForm()
    assert "cc_counters" in form.fields and "--rcvcc" in form.fields["cc_counters"].help_text
    assert form.fields["cc_counters"].label == "Read congestion counters"


@pytest.mark.parametrize("on", [True, False])
def test_rcvcc_each_sweep_when_on_rates_between_sweeps_and_a_switch_without_it_is_one_warning(tools, on):
    script, env, log, cc = tools
    config = make_config("cc", command_prefix=[str(script)], environment=env, timeout_s=5.0, cc_counters=on)
    first = run_sweep(config)
    assert first.status == SweepStatus.OK and first.failures == [] and first.ports > 0
    calls = log.read_text().splitlines()
    cc_calls = [c for c in calls if c.startswith("perfquery --rcvcc")]
    if not on:
        assert cc_calls == [] and cc_readings.readings(config.fabric_id) is None
        return
    # leaf01 (LID 2): each cabled port; every other switch: its first port, then no more
    assert [c for c in cc_calls if c.startswith("perfquery --rcvcc 2 ")] == [f"perfquery --rcvcc 2 {p}"
                                                                           for p in (1, 2, 3, 4)]
    assert len(cc_calls) == 4 + 5
    cannot = [w for w in first.warnings if w["text"].startswith("perfquery --rcvcc")]
    assert sorted(w["text"] for w in cannot) == [f"perfquery --rcvcc lid {lid}" for lid in range(3, 8)]
    assert all("exit 255" in w["reason"] and "_do_madrpc failed" in w["reason"] for w in cannot)  # its stderr
    r = cc_readings.readings(config.fabric_id)
    assert (r["keys"] // 256).tolist() == [2] * 4 and (r["keys"] % 256).tolist() == [1, 2, 3, 4]
    assert r["fecn"].tolist() == [100, 200, 300, 400] and np.isnan(r["fecn_per_s"]).all()  # one read: no rate
    t1 = r["t"].copy()
    cc.write_text("400")
    run_sweep(config)
    r = cc_readings.readings(config.fabric_id)
    dt = r["t"] - t1
    assert (dt > 0).all()
    assert r["fecn_per_s"] == pytest.approx(300 * np.arange(1, 5) / dt)
    assert r["becn_per_s"] == pytest.approx(300 / dt)
    cc.write_text("50")  # counters cleared: no rate, never a negative one
    run_sweep(config)
    assert np.isnan(cc_readings.readings(config.fabric_id)["fecn_per_s"]).all()


def test_turning_it_off_forgets_the_readings(tools):
    script, env, _, _ = tools
    config = make_config("cc", command_prefix=[str(script)], environment=env, timeout_s=5.0, cc_counters=True)
    run_sweep(config)
    assert cc_readings.readings(config.fabric_id) is not None
    config.cc_counters = False
    config.save()
    run_sweep(config)
    assert cc_readings.readings(config.fabric_id) is None


def _rcvcc(lid: int, port: int, fecn: int, becn: int) -> str:
    return (f"# PortRcvConCtrl counters: Lid {lid} port {port}\nPortSelect:......................{port}\n"
            f"CounterSelect:...................0x0000\nPortPktRcvFECN:..................{fecn}\n"
            f"PortPktRcvBECN:..................{becn}\n")


def _drop(d: Path, t: float, fecn: int) -> None:
    d.mkdir(exist_ok=True)
    shutil.copy(DATA / "telemetry" / "iblinkinfo.txt", d / "iblinkinfo.txt")
    shutil.copy(DATA / "telemetry" / "perfquery_loop.txt", d / "perfquery-2.txt")
    (d / "perfquery-cc-2.txt").write_text(_rcvcc(2, 1, fecn, 3) + _rcvcc(2, 2, 0, 0))
    for p in d.glob("perfquery*.txt"):
        os.utime(p, (t, t))


def test_a_drop_directory_with_rcvcc_blocks_is_read_and_served_by_the_api_and_metrics(tmp_path):
    d = tmp_path / "d"
    config = make_config("ccd", source=CollectorSource.DIRECTORY, drop_dir=str(d))
    now = time.time()
    _drop(d, now - 30.0, 1000)
    first = run_sweep(config)
    assert not [w for w in first.warnings if "PortRcvConCtrl" in w["reason"]]  # read, not skipped
    _drop(d, now - 10.0, 3000)  # 2000 FECN in 20 s
    run_sweep(config)
    runner = FabricRunner(config.fabric)
    asyncio.run(runner.start())
    asyncio.run(settled_tick(runner))  # the fabric's runtime record: nodes for the port names
    api = operator_api()
    body = api.get(f"/api/telemetry/fabrics/{config.fabric.slug}/ports/leaf01/1/counters/").json()
    got = body["congestion"]
    assert got["fecn"] == 3000 and got["becn"] == 3 and got["fecn_per_s"] == pytest.approx(100.0)
    assert got["becn_per_s"] == 0.0 and got["t"] == pytest.approx(now - 10.0, abs=0.01)
    none = api.get(f"/api/telemetry/fabrics/{config.fabric.slug}/ports/leaf01/3/counters/").json()
    assert none["congestion"] is None  # not read
    text = api.get(f"/metrics?fabric={config.fabric.slug}").content.decode()
    assert 'ibweb_port_fecn_per_second{fabric="ccd",node="leaf01",port="1"} 100' in text
    assert 'ibweb_port_becn_per_second{fabric="ccd",node="leaf01",port="2"} 0' in text
    assert "# HELP ibweb_port_fecn_per_second" in text and "# TYPE ibweb_port_fecn_per_second gauge" in text
    assert text.count("ibweb_port_fecn_per_second{") == 2
