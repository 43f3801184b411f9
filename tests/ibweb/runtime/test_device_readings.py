"""A fabric's device readings (issue 38): records merged by device or port, SMs and P_Key tables replaced by a
collector's run, OpenSM errors accumulated once each; stored per fabric, versioned, atomic across writers."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from django.core.cache import cache

from fabric_engine.devices import read_devices
from fabric_engine.devices.vitals import DeviceReadings, DeviceVitals, FabricWarning, HcaPort, NodeInfo, OpensmError
from fabric_engine.validation import read_pkeys, read_sminfo
from ibweb.runtime import device_readings

DATA = Path(__file__).parents[2] / "data" / "devices"
PKEYS = ("# smpquery pkeys 5 1\n   0: 0xffff 0x8001 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n"
         "8 pkeys capacity for this port\n")


def vitals(name: str, guid: int | None, firmware: str) -> DeviceVitals:
    return DeviceVitals(guid, name, f"{name}.txt:1", None, None, None, firmware, None, None, (), (), (), ())


def port(node: str, guid: int | None, number: int, state: str) -> HcaPort:
    return HcaPort(node, guid, number, state, "LinkUp", 200.0, "4x", "HDR", "28.39.2048", f"{node}.txt:3")


@pytest.fixture(autouse=True)
def _clean():
    cache.clear()
    yield
    cache.clear()


def test_newer_records_replace_those_of_the_same_device_or_port():
    old = DeviceReadings(vitals=[vitals("leaf01", 0x10, "27.2010.3118"), vitals("sw-unmanaged", None, "1")],
                         hca_ports=[port("gpu1/mlx5_0", 0xA0, 1, "Active"), port("gpu2/mlx5_0", None, 1, "Active")])
    new = DeviceReadings(vitals=[vitals("leaf01 renamed", 0x10, "27.2012.1010"), vitals("sw-unmanaged", None, "2")],
                         hca_ports=[port("gpu1/mlx5_0", 0xA0, 1, "Down"), port("gpu2/mlx5_0", None, 2, "Active")])
    got = device_readings.merge(old, new, now=100.0)
    assert [(v.name, v.firmware) for v in got.vitals] == [("leaf01 renamed", "27.2012.1010"), ("sw-unmanaged", "2")]
    # by GUID and port where there is a GUID, else by name and port: gpu2's port 1 stays beside its port 2
    assert [(p.node, p.port, p.state) for p in got.hca_ports] == [
        ("gpu1/mlx5_0", 1, "Down"), ("gpu2/mlx5_0", 2, "Active"), ("gpu2/mlx5_0", 1, "Active")]
    assert got.read_at == {"vitals": 100.0, "hca_ports": 100.0}


def test_a_collector_run_replaces_the_sms_and_p_key_tables_a_push_adds_to_them():
    first = DeviceReadings(sms=list(read_sminfo("sminfo: sm lid 1 sm guid 0x1, activity count 9 priority 0 state 3 "
                                                "SMINFO_MASTER\n").sms),
                           pkeys=list(read_pkeys(PKEYS + PKEYS.replace("5 1", "6 1")).tables))
    second = DeviceReadings(pkeys=list(read_pkeys(PKEYS.replace("0x8001", "0x8002")).tables))
    kept = device_readings.merge(first, second, now=1.0)
    assert [(t.lid, t.keys) for t in kept.pkeys] == [(5, (0xFFFF, 0x8002)), (6, (0xFFFF, 0x8001))]
    assert len(kept.sms) == 1  # no sminfo in the write: the SMs stand
    replaced = device_readings.merge(first, second, replace=("sms", "pkeys"), now=2.0)
    assert [(t.lid, t.keys) for t in replaced.pkeys] == [(5, (0xFFFF, 0x8002))] and replaced.sms == []
    assert replaced.read_at == {"sms": 2.0, "pkeys": 2.0}
    with pytest.raises(ValueError, match="replace: psus not among"):
        device_readings.merge(first, second, replace=("psus",))


def test_opensm_errors_accumulate_once_each_and_the_newest_are_kept(monkeypatch):
    monkeypatch.setattr(device_readings, "MAX_ERRORS", 3)
    e = [OpensmError(float(t), "ERR 0108", f"entry {t}", f"opensm.log:{t}") for t in range(5)]
    got = device_readings.merge(DeviceReadings(opensm_errors=e[:3]), DeviceReadings(opensm_errors=e[2:]))
    assert [x.text for x in got.opensm_errors] == ["entry 2", "entry 3", "entry 4"]


def test_every_list_is_capped_keeping_the_newest_and_a_write_over_a_cap_is_named(monkeypatch):
    for const in device_readings.CAPS.values():
        monkeypatch.setattr(device_readings, const, 2)

    def batch(k: int) -> DeviceReadings:
        """Two records of each kind, all of ``k``'s own devices and ports."""
        sms = read_sminfo("".join(f"sminfo: sm lid {10 * k + i} sm guid 0x{10 * k + i:x}, activity count 1 priority 0 "
                                  "state 2 SMINFO_STANDBY\n" for i in (1, 2))).sms
        return DeviceReadings(
            vitals=[vitals(f"sw{k}{i}", 0x100 * k + i, "1") for i in (1, 2)],
            hca_ports=[port(f"gpu{k}{i}/mlx5_0", 0x100 * k + i, 1, "Active") for i in (1, 2)],
            adapter_types={f"gpu{k}{i}/mlx5_0": "MT4129" for i in (1, 2)},
            nodes_info=[NodeInfo(0x100 * k + i, f"n{k}{i}", None, None, None, None, None, "db:1") for i in (1, 2)],
            warnings=[FabricWarning("W", "c", "port", None, None, "e", "s", f"ib{k}{i}.db_csv:1") for i in (1, 2)],
            sms=list(sms), pkeys=list(read_pkeys(PKEYS.replace("5 1", f"{k}1 1") + PKEYS.replace("5 1", f"{k}2 1"))
                                          .tables))

    got = device_readings.merge(batch(1), batch(2))
    assert [v.name for v in got.vitals] == ["sw21", "sw22"] and [n.name for n in got.nodes_info] == ["n21", "n22"]
    assert [p.node for p in got.hca_ports] == ["gpu21/mlx5_0", "gpu22/mlx5_0"] == list(got.adapter_types)
    assert [s.lid for s in got.sms] == [21, 22] and [t.lid for t in got.pkeys] == [21, 22]
    assert [w.source for w in got.warnings] == ["ib21.db_csv:1", "ib22.db_csv:1"]
    device_readings.check_caps(batch(3))
    big = batch(3)
    big.vitals.append(vitals("sw33", 0x333, "1"))
    with pytest.raises(ValueError, match=r"^vitals: 3 records exceed MAX_VITALS \(2\)$"):
        device_readings.check_caps(big)


def test_fixture_readings_stored_read_back_versioned_and_forgotten():
    assert device_readings.read(7) is None and device_readings.version(7) is None
    r = read_devices([DATA / "ibswinfo_full.txt", DATA / "ibstat_two_cas.txt"])
    stored = device_readings.write(7, r)
    v1 = device_readings.version(7)
    back = device_readings.read(7)
    assert back == stored and len(back.vitals) == len(r.vitals) and len(back.hca_ports) == len(r.hca_ports)
    assert back.adapter_types == r.adapter_types and back.files == r.files
    device_readings.write(7, read_devices([DATA / "ibv_devinfo_v.txt"]))
    assert device_readings.version(7) != v1 and device_readings.read(8) is None
    device_readings.forget(7)
    assert device_readings.read(7) is None and device_readings.version(7) is None


def test_concurrent_writers_lose_nothing(monkeypatch):
    """Each writer reads, merges and writes under the fabric's lock: every writer's switch is kept (a slow merge
    lets the writers interleave; without the lock each would write what it read plus its own switch alone)."""
    merge = device_readings.merge

    def slow(*args, **kwargs):
        time.sleep(0.02)
        return merge(*args, **kwargs)

    monkeypatch.setattr(device_readings, "merge", slow)
    start = threading.Barrier(8)

    def one(k: int) -> None:
        start.wait()
        device_readings.write(3, DeviceReadings(vitals=[vitals(f"sw{k}", 0x100 + k, "1")]))

    threads = [threading.Thread(target=one, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(v.name for v in device_readings.read(3).vitals) == [f"sw{k}" for k in range(8)]
