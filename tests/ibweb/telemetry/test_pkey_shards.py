"""The P_Key reads split into shards run by Celery workers (issue 38): each shard a task, every port asked once,
one merge that writes the device readings once; a port that fails keeps its last table; the consecutive-failure
stop applies per shard (one warning overall). The chord runs in this process (Celery eager), the split path taken
as with workers (:func:`ibweb.telemetry.device_sweep.sharded`); the tools are the fake script of
``test_device_sweep``."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ibweb.runtime import device_readings
from ibweb.telemetry import device_sweep, tasks
from ibweb.telemetry.sweeps import run_sweep

from . import test_device_sweep
from .test_device_sweep import FAKE_TOOLS, calls
from .test_telemetry_app import _clean_cache, make_config  # noqa: F401 (_clean_cache: autouse)

pytestmark = pytest.mark.django_db(transaction=True)
tools = test_device_sweep.tools  # the fake tools' script, its environment and call log

#: The first round (``$LOG.second`` absent): every port answers 0xffff 0x8009; then as FAKE_TOOLS.
CARRY = FAKE_TOOLS.replace('smpquery)\n', 'smpquery)\n    if [ ! -f "$LOG.second" ]; then\n'
                           '      echo "   0: 0xffff 0x8009 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000"\n'
                           '      echo "8 pkeys capacity for this port"; exit 0; fi\n')
#: The 16 ports of the fixture's 8 host cables, in LID order (as the shards take them).
PORTS = sorted([(lid, 1) for lid in (1, 8, 9, 10, 11, 12, 13, 14)] + [(lid, p) for lid in (2, 3, 4, 5) for p in (1, 2)])


@pytest.fixture
def split(monkeypatch):
    """The sharded path as with Celery workers, 5 ports a shard; the shards run and the writes, recorded."""
    monkeypatch.setattr(device_sweep, "sharded", lambda config: True)
    monkeypatch.setattr(device_sweep, "PKEY_SHARD_PORTS", 5)
    seen = {"shards": [], "writes": 0}
    lock = threading.Lock()
    read_shard, write = device_sweep.read_pkey_shard, device_readings.write

    def spy_shard(run, ports, shard=0):
        with lock:
            seen["shards"].append((shard, [tuple(p) for p in ports]))
        return read_shard(run, ports, shard)

    def spy_write(*args, **kwargs):
        seen["writes"] += 1
        return write(*args, **kwargs)

    monkeypatch.setattr(device_sweep, "read_pkey_shard", spy_shard)
    monkeypatch.setattr(device_readings, "write", spy_write)
    return seen


def _round(config):
    sweep = run_sweep(config)  # validation_every 0: stores the discovery, reads nothing
    assert tasks.validation_reads(config.pk, sweep.pk) == 0  # the chord started (eager: run through)
    sweep.refresh_from_db()
    return sweep


def test_the_p_key_reads_split_into_shards_of_the_size_and_every_port_read_once(tools, split):
    prefix, env, log = tools
    config = make_config("shards", command_prefix=prefix, environment=env, timeout_s=5.0, validation_every=0)
    sweep = _round(config)
    shards = sorted(split["shards"])
    assert [len(p) for _, p in shards] == [5, 5, 5, 1] and [s for s, _ in shards] == [0, 1, 2, 3]
    assert [p for _, ports in shards for p in ports] == PORTS  # each port in one shard, in order
    asked = calls(log, "smpquery")
    assert sorted(asked) == sorted(f"smpquery pkeys {lid} {p}" for lid, p in PORTS)  # each asked exactly once
    assert calls(log, "sminfo") == ["sminfo"] and split["writes"] == 1
    r = device_readings.read(config.fabric_id)
    assert [(sm.lid, sm.master) for sm in r.sms] == [(2, True)] and set(r.read_at) == {"sms", "pkeys"}
    assert len(r.pkeys) == 14 and {(t.lid, t.port): t.keys for t in r.pkeys}[(1, 1)] == (0xFFFF, 0x8001)
    warned = {w["text"]: w["reason"] for w in sweep.warnings}
    assert "exit 255" in warned["smpquery pkeys 9 1"] and "not a line" in warned["smpquery pkeys 10 1"]


def test_the_merge_writes_once_and_a_failed_port_keeps_its_last_table(tools, split, tmp_path):
    prefix, env, log = tools
    (tmp_path / "fake-diags").write_text(CARRY.replace('1) keys="0xffff 0x8001"', '1) keys="0xffff 0x0000"'))
    config = make_config("merge", command_prefix=prefix, environment=env, timeout_s=5.0, validation_every=0)
    _round(config)
    assert split["writes"] == 1 and len(device_readings.read(config.fabric_id).pkeys) == 16
    assert "pkeys" in device_readings.read(config.fabric_id).read_at
    Path(f"{log}.second").touch()
    _round(config)
    assert split["writes"] == 2  # one more round: one more write
    tables = {(t.lid, t.port): t.keys for t in device_readings.read(config.fabric_id).pkeys}
    assert len(tables) == 16 and tables[(1, 1)] == (0xFFFF,)  # read again: the new table
    assert tables[(9, 1)] == tables[(10, 1)] == (0xFFFF, 0x8009)  # not answered: the last table kept


def test_a_failure_stop_in_one_shard_keeps_the_other_shards_tables(tools, split, tmp_path, monkeypatch):
    """LIDs 1-3 fail (the first shard's five ports): that shard stops after 3; the other shards still read."""
    prefix, env, log = tools
    monkeypatch.setattr(device_sweep, "PKEY_WORKERS", 1)  # one at a time: exactly the limit's commands run
    monkeypatch.setattr(device_sweep, "PKEY_FAILURE_LIMIT", 3)
    (tmp_path / "fake-diags").write_text(CARRY.replace(
        'smpquery)\n', 'smpquery)\n    if [ -f "$LOG.second" ]; then case "$2" in 1|2|3) echo "ibwarn: timeout" >&2; '
                       'exit 255 ;; esac; fi\n', 1))
    config = make_config("stop", command_prefix=prefix, environment=env, timeout_s=5.0, validation_every=0)
    _round(config)
    Path(f"{log}.second").touch()
    sweep = _round(config)
    second = calls(log, "smpquery")[16:]
    assert sorted(second) == sorted(f"smpquery pkeys {lid} {p}" for lid, p in PORTS[:3] + PORTS[5:])
    (stop,) = [w for w in sweep.warnings if w["text"] == "smpquery pkeys"]
    assert "stopped after 3 consecutive failures" in stop["reason"] and "in 1 of 4 shard(s)" in stop["reason"]
    assert "2 of 16 port(s) not asked" in stop["reason"]
    tables = {(t.lid, t.port): t.keys for t in device_readings.read(config.fabric_id).pkeys}
    assert len(tables) == 16 and split["writes"] == 2
    assert all(tables[p] == (0xFFFF, 0x8009) for p in PORTS[:5])  # the stopped shard's ports: their last tables
    assert tables[(4, 1)] == tables[(14, 1)] == (0xFFFF,) and tables[(1, 1)] == (0xFFFF, 0x8009)
