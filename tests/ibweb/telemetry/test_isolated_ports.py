"""Issue 38: ports seen administratively disabled (physical state ``Disabled``) are recorded as isolated in the
fabric's device readings - from a pushed ``ibstat``/``ibv_devinfo`` and from the collector's iblinkinfo - with the
time first seen, kept through later writes (even ``replace`` of the SMs and P_Keys)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from fabric_engine.devices import read_text
from fabric_engine.devices.vitals import DeviceReadings, HcaPort, IsolatedPort
from fabric_engine.telemetry import parse_iblinkinfo
from ibweb.live.validation import isolations
from ibweb.runtime import device_readings
from ibweb.telemetry import device_sweep

from .test_telemetry_app import _clean_cache, make_config  # noqa: F401 (_clean_cache: autouse)

DATA = Path(__file__).parents[2] / "data"
LINKINFO = (DATA / "telemetry" / "iblinkinfo.txt").read_text()
#: leaf01's port 3 (to spine01) disabled, as iblinkinfo prints an administratively disabled port.
DISABLED = LINKINFO.replace(
    '           2    3[  ] ==( 4X           2.5 Gbps Active/  LinkUp)==>       6    1[  ] "spine01" '
    "(Could be 12X Could be 10.0 Gbps)",
    '           2    3[  ] ==(                Down/ Disabled)==>             [  ] "" ( )')
pytestmark = pytest.mark.django_db(transaction=True)


def _port(phys: str, guid: int | None = 0xB83FD20300000011) -> HcaPort:
    return HcaPort("gpu0001/mlx5_0", guid, 1, "Down" if phys == "Disabled" else "Active", phys, None, None, None,
                   None, "gpu0001-ibstat.txt:9")


def test_a_pushed_disabled_adapter_port_is_recorded_with_the_time_first_seen():
    assert DISABLED != LINKINFO
    first = device_readings.merge(None, DeviceReadings(hca_ports=[_port("Disabled")]), now=100.0)
    assert first.isolated == [IsolatedPort(0xB83FD20300000011, 1, 100.0, "gpu0001/mlx5_0", "gpu0001-ibstat.txt:9")]
    assert first.read_at["isolated"] == 100.0
    # up again later: still recorded; disabled again: the first time kept
    up = device_readings.merge(first, DeviceReadings(hca_ports=[_port("LinkUp")]), now=200.0)
    again = device_readings.merge(up, DeviceReadings(hca_ports=[_port("Disabled")]), now=300.0)
    assert [r.t for r in up.isolated] == [r.t for r in again.isolated] == [100.0]
    # a port whose GUID is unknown cannot be told apart later: not recorded
    assert device_readings.merge(None, DeviceReadings(hca_ports=[_port("Disabled", None)])).isolated == []
    assert device_readings.isolated_history(again) == [{"guid": 0xB83FD20300000011, "port": 1, "t": 100.0}]


def test_ibstat_capture_with_a_disabled_port_is_recorded_through_write():
    out = DeviceReadings()
    read_text((DATA / "devices" / "ibstat_two_cas.txt").read_text(), "ibstat_two_cas.txt", out)
    disabled = [p for p in out.hca_ports if p.phys_state == "Disabled"]
    assert disabled, "the fixture has a disabled port"
    stored = device_readings.write(41, out)
    try:
        got = {(r.guid, r.port) for r in stored.isolated}
        assert got == {(p.guid, p.port) for p in disabled if p.guid is not None} and got
        # the collector's next SM read replaces the SMs, not the isolated ports
        stored = device_readings.write(41, DeviceReadings(), replace=("sms", "pkeys"))
        assert {(r.guid, r.port) for r in stored.isolated} == got
    finally:
        device_readings.forget(41)


def test_iblinkinfo_disabled_ports():
    info = parse_iblinkinfo(DISABLED, "iblinkinfo")
    (iso,) = device_sweep.isolated_ports(info, 5.0)
    assert (iso.guid, iso.port, iso.node, iso.t) == (0x98039B0300000001, 3, "leaf01", 5.0)
    assert iso.source.startswith("iblinkinfo:")
    assert device_sweep.isolated_ports(parse_iblinkinfo(LINKINFO), 5.0) == []


def test_the_validation_read_records_a_port_the_sweep_shows_disabled(tmp_path):
    script = tmp_path / "fake-diags"
    script.write_text('#!/bin/sh\ncase "$1" in\n  sminfo) echo "sminfo: sm lid 2 sm guid 0x98039b0300000001, '
                      'activity count 42 priority 0 state 3 SMINFO_MASTER" ;;\n  *) exit 2 ;;\nesac\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    config = make_config("iso", command_prefix=[str(script)], timeout_s=5.0, validation_every=3)
    device_sweep.run_validation(config, DISABLED)
    r = device_readings.read(config.fabric_id)
    assert [(x.guid, x.port, x.node) for x in r.isolated] == [(0x98039B0300000001, 3, "leaf01")]
    t0 = r.isolated[0].t
    device_sweep.run_validation(config, DISABLED)  # seen again: the first time kept
    assert [x.t for x in device_readings.read(config.fabric_id).isolated] == [t0]


def test_the_collector_keeps_an_isolation_in_the_database_until_its_discovery_shows_the_port_enabled(tmp_path):
    script = tmp_path / "fake-diags"
    script.write_text('#!/bin/sh\ncase "$1" in\n  sminfo) echo "sminfo: sm lid 2 sm guid 0x98039b0300000001, '
                      'activity count 42 priority 0 state 3 SMINFO_MASTER" ;;\n  *) exit 2 ;;\nesac\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    config = make_config("isodb", command_prefix=[str(script)], timeout_s=5.0, validation_every=3)
    device_sweep.run_validation(config, DISABLED)
    device_readings.forget(config.fabric_id)  # the cached readings expire: the isolation stays listed
    assert [(r["guid"], r["port"], r["node"]) for r in isolations.open_isolations(config.fabric_id)] == [
        (0x98039B0300000001, 3, "leaf01")]
    device_sweep.run_validation(config, DISABLED)  # still disabled: still one isolation
    assert len(isolations.open_isolations(config.fabric_id)) == 1
    device_sweep.run_validation(config, LINKINFO)  # the port is up again: no longer isolated, still the history
    assert isolations.open_isolations(config.fabric_id) == []
    assert [(h["guid"], h["port"]) for h in isolations.history(config.fabric_id)] == [(0x98039B0300000001, 3)]
