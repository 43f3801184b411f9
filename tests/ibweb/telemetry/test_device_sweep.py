"""The collector's validation reads (issue 38): ``sminfo`` and ``smpquery pkeys`` once per ``validation_every``
sweeps, into the fabric's device readings, where ``fabric_engine.validation`` finds a P_Key on one end only; a
command or output that fails is a warning naming it; a drop directory's captures are read instead."""

from __future__ import annotations

import stat
import threading
import time
from pathlib import Path

import pytest
from django.core.cache import cache

from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.validation import validate
from ibweb.runtime import device_readings
from ibweb.telemetry import device_sweep
from ibweb.telemetry.choices import CollectorSource, SweepStatus
from ibweb.telemetry.forms import CollectorForm
from ibweb.telemetry.sweeps import run_sweep

from .test_telemetry_app import _clean_cache, make_config  # noqa: F401 (_clean_cache: autouse)

DATA = Path(__file__).parents[2] / "data"
LINKINFO = (DATA / "telemetry" / "iblinkinfo.txt").read_text()
pytestmark = pytest.mark.django_db(transaction=True)

#: iblinkinfo and perfquery as captured; sminfo names one master; smpquery gives every port P_Key 0xffff and
#: gpu0001 (LID 1) also 0x8001, which leaf01's port 1 lacks; LID 9 does not answer, LID 10 prints garbage.
FAKE_TOOLS = """#!/bin/sh
echo "$*" >> "$LOG"
tool="$1"; shift
case "$tool" in
  iblinkinfo) cat "$DATA/telemetry/iblinkinfo.txt" ;;
  perfquery) if [ "$1" = "-x" ]; then cat "$DATA/telemetry/perfquery_ext_loop.txt"
             else cat "$DATA/telemetry/perfquery_loop.txt"; fi ;;
  sminfo) echo "sminfo: sm lid 2 sm guid 0x98039b0300000001, activity count 42 priority 0 state 3 SMINFO_MASTER" ;;
  smpquery)
    case "$2" in
      9) echo "ibwarn: [1] _do_madrpc failed; dport (Lid 9)" >&2; exit 255 ;;
      10) echo "   0: 0xffff"; exit 0 ;;
      1) keys="0xffff 0x8001" ;;
      *) keys="0xffff 0x0000" ;;
    esac
    echo "   0: $keys 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000"
    echo "8 pkeys capacity for this port" ;;
  *) exit 2 ;;
esac
"""


@pytest.fixture
def tools(tmp_path):
    script = tmp_path / "fake-diags"
    script.write_text(FAKE_TOOLS)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "calls.log"
    return [str(script)], {"DATA": str(DATA), "LOG": str(log)}, log


def calls(log: Path, tool: str) -> list[str]:
    return [c for c in log.read_text().splitlines() if c.startswith(tool)] if log.exists() else []


def test_pkeys_of_every_switch_to_ca_cable_and_the_master_sm_found_by_the_validation(tools):
    prefix, env, log = tools
    config = make_config("val", command_prefix=prefix, environment=env, timeout_s=5.0, validation_every=3)
    sweep = run_sweep(config)
    assert sweep.status == SweepStatus.OK
    assert device_sweep.wait_idle()  # the reads run off the sweep; their warnings join its record when they end
    sweep.refresh_from_db()
    asked = calls(log, "smpquery")
    # both ends of the 8 host cables: hosts' LIDs 1 and 8-14 port 1, leaves' LIDs 2-5 ports 1 and 2
    assert sorted(asked) == sorted([f"smpquery pkeys {lid} 1" for lid in (1, 8, 9, 10, 11, 12, 13, 14)]
                                   + [f"smpquery pkeys {lid} {p}" for lid in (2, 3, 4, 5) for p in (1, 2)])
    assert calls(log, "sminfo") == ["sminfo"]
    warned = {w["text"]: w["reason"] for w in sweep.warnings}
    assert "exit 255" in warned["smpquery pkeys 9 1"]
    assert "smpquery pkeys 10 1:2: not a line of 'smpquery pkeys'" in warned["smpquery pkeys 10 1"]
    r = device_readings.read(config.fabric_id)
    assert [(sm.lid, sm.master) for sm in r.sms] == [(2, True)]
    assert len(r.pkeys) == 14 and {(t.lid, t.port) for t in r.pkeys} >= {(1, 1), (2, 1)}
    assert set(r.read_at) == {"sms", "pkeys"}
    report = validate(fabric_from_linkinfo(parse_iblinkinfo(LINKINFO)), sminfo=r.sms, pkeys=r.pkeys)
    (pk,) = [f for f in report.findings if f.check == "pkey_mismatch"]
    assert pk.severity == "error" and "gpu0001" in pk.subject and "leaf01" in pk.subject
    assert pk.evidence["only_at_ca"] == ["0x0001"]
    assert report.checks["sm_mastership"]["status"] == "pass"

    run_sweep(config)  # the next sweep: not due yet
    assert device_sweep.wait_idle()
    assert len(calls(log, "smpquery")) == 16 and len(calls(log, "sminfo")) == 1


def test_a_port_that_fails_this_round_keeps_its_last_p_key_table(tools, tmp_path):
    prefix, env, log = tools
    script = tmp_path / "fake-diags"
    # the first round: every port answers (LIDs 9 and 10 too); the second: as FAKE_TOOLS, and LID 1 lost 0x8001
    script.write_text(FAKE_TOOLS.replace('smpquery)\n', 'smpquery)\n    if [ ! -f "$LOG.second" ]; then\n'
                                         '      echo "   0: 0xffff 0x8009 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000"\n'
                                         '      echo "8 pkeys capacity for this port"; exit 0; fi\n')
                      .replace('1) keys="0xffff 0x8001"', '1) keys="0xffff 0x0000"'))
    config = make_config("carry", command_prefix=prefix, environment=env, timeout_s=5.0, validation_every=3)
    device_sweep.run_validation(config, LINKINFO)
    assert len(device_readings.read(config.fabric_id).pkeys) == 16
    Path(f"{log}.second").touch()
    warnings = device_sweep.run_validation(config, LINKINFO)
    assert {"smpquery pkeys 9 1", "smpquery pkeys 10 1"} <= {w["text"] for w in warnings}
    tables = {(t.lid, t.port): t.keys for t in device_readings.read(config.fabric_id).pkeys}
    assert len(tables) == 16 and tables[(1, 1)] == (0xFFFF,)  # read again: the new table
    assert tables[(9, 1)] == tables[(10, 1)] == (0xFFFF, 0x8009)  # not answered: the last table kept


def test_pkey_reads_stop_after_consecutive_failures_with_one_warning(tools, tmp_path, monkeypatch):
    prefix, env, log = tools
    monkeypatch.setattr(device_sweep, "PKEY_WORKERS", 1)  # one at a time: exactly the limit's commands run
    monkeypatch.setattr(device_sweep, "PKEY_FAILURE_LIMIT", 3)
    script = tmp_path / "fake-diags"
    script.write_text(FAKE_TOOLS.replace('smpquery)\n', 'smpquery)\n    echo "ibwarn: no fabric" >&2; exit 255\n'))
    config = make_config("dead", command_prefix=prefix, environment=env, timeout_s=5.0, validation_every=3)
    warnings = device_sweep.run_validation(config, LINKINFO)
    assert len(calls(log, "smpquery")) == 3  # not the 16 ports
    (stop,) = [w for w in warnings if w["text"] == "smpquery pkeys"]
    assert "stopped after 3 consecutive failures" in stop["reason"] and "13 of 16 port(s) not asked" in stop["reason"]
    assert len([w for w in warnings if w["text"].startswith("smpquery pkeys ")]) == 3


def test_due_once_per_validation_every_sweep_intervals():
    config = make_config("due", command_prefix=["true"], interval_s=10.0, validation_every=3)
    assert device_sweep.due(config, 1000.0)
    cache.set(f"ibweb:telemetry:{config.fabric_id}:validation_at", 1000.0)
    assert not device_sweep.due(config, 1020.0)
    assert device_sweep.due(config, 1025.0)  # half an interval early is on time
    config.validation_every = 0
    assert not device_sweep.due(config, 5000.0)
    pushed = make_config("pushed", source=CollectorSource.PUSH)
    assert not device_sweep.due(pushed, 1000.0)


def test_two_workers_finding_the_reads_due_at_once_claim_them_once(monkeypatch):
    """Both workers read the last claim before either writes (a barrier in the cache's get): one claim wins."""
    config = make_config("race", command_prefix=["true"], interval_s=10.0, validation_every=3)
    both_read = threading.Barrier(2)

    class Racing:
        def get(self, *args, **kwargs):
            got = cache.get(*args, **kwargs)
            both_read.wait(timeout=5)
            return got

        def __getattr__(self, name):
            return getattr(cache, name)

    monkeypatch.setattr(device_sweep, "cache", Racing())
    won: list[bool] = []
    workers = [threading.Thread(target=lambda: won.append(device_sweep.claim(config, 1000.0))) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(won) == [False, True]
    monkeypatch.setattr(device_sweep, "cache", cache)  # one worker again: the next window is claimed once due
    assert not device_sweep.claim(config, 1020.0) and device_sweep.claim(config, 1025.0) is True


def test_a_sweep_without_validation_reads_runs_neither_tool(tools):
    prefix, env, log = tools
    config = make_config("off", command_prefix=prefix, environment=env, timeout_s=5.0, validation_every=0)
    assert run_sweep(config).status == SweepStatus.OK
    assert device_sweep.wait_idle()
    assert calls(log, "smpquery") == calls(log, "sminfo") == [] and device_readings.read(config.fabric_id) is None


def test_a_drop_directorys_captures_are_read_and_a_bad_one_named(tmp_path):
    from .test_telemetry_app import drop

    root = tmp_path / "drop"
    drop(root, time.time() - 2.0)
    (root / "sminfo.txt").write_text("[root@ufm ~]# sminfo\nsminfo: sm lid 2 sm guid 0x98039b0300000001, activity "
                                     "count 7 priority 15 state 3 SMINFO_MASTER\n")
    row = " 0x0000" * 6
    (root / "pkeys-hosts.txt").write_text(f"# smpquery pkeys 1 1\n   0: 0xffff 0x8001{row}\n8 pkeys capacity for "
                                          f"this port\n# smpquery pkeys 2 1\n   0: 0xffff 0x0000{row}\n8 pkeys "
                                          "capacity for this port\n")
    (root / "pkeys-zbad.txt").write_text("# smpquery pkeys 3 1\n   8: 0xffff\n")
    config = make_config("dir", source=CollectorSource.DIRECTORY, drop_dir=str(root))
    sweep = run_sweep(config)
    assert device_sweep.wait_idle()
    sweep.refresh_from_db()
    (bad,) = [w for w in sweep.warnings if w["text"].endswith("pkeys-zbad.txt")]
    assert "pkeys-zbad.txt:2: not a line of 'smpquery pkeys'" in bad["reason"]
    r = device_readings.read(config.fabric_id)
    assert [sm.priority for sm in r.sms] == [15] and [(t.lid, t.port) for t in r.pkeys] == [(1, 1), (2, 1)]
    report = validate(fabric_from_linkinfo(parse_iblinkinfo(LINKINFO)), sminfo=r.sms, pkeys=r.pkeys)
    assert [f.evidence["only_at_ca"] for f in report.findings if f.check == "pkey_mismatch"] == [["0x0001"]]


def test_the_collector_form_takes_the_interval_and_defaults_it():
    base = {"source": "directory", "drop_dir": "/srv/ib-drop"}
    form = CollectorForm(data=base)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["validation_every"] == 10
    form = CollectorForm(data={**base, "validation_every": "0"})
    assert form.is_valid() and form.save(commit=False).validation_every == 0
    assert not CollectorForm(data={**base, "validation_every": "-1"}).is_valid()


def test_a_slow_validation_read_never_delays_the_sweep(tools, tmp_path):
    """``sminfo`` takes 5 s: the sweep that claims the reads ends without waiting on them (they run on the
    validation thread, Celery eager), its counters stored; the reads' warnings join its record when they end."""
    prefix, env, log = tools
    slow = tmp_path / "slow-diags"
    slow.write_text(f'#!/bin/sh\nif [ "$1" = sminfo ]; then sleep 5; fi\nexec {prefix[0]} "$@"\n')
    slow.chmod(slow.stat().st_mode | stat.S_IEXEC)
    config = make_config("slow", command_prefix=[str(slow)], environment=env, timeout_s=10.0, validation_every=3)
    t0 = time.monotonic()
    sweep = run_sweep(config)
    took = time.monotonic() - t0
    assert sweep.status == SweepStatus.OK and took < 4.0, f"the sweep waited on the validation reads ({took:.1f} s)"
    assert device_readings.read(config.fabric_id) is None  # the reads are still running
    assert device_sweep.wait_idle()
    sweep.refresh_from_db()
    assert "exit 255" in {w["text"]: w["reason"] for w in sweep.warnings}["smpquery pkeys 9 1"]
    assert [sm.lid for sm in device_readings.read(config.fabric_id).sms] == [2]
