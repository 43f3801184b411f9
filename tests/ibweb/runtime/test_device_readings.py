"""A fabric's device readings (issue 38): records merged by device or port, SMs and P_Key tables replaced by a
collector's run, OpenSM errors accumulated once each; stored per fabric, versioned, atomic across writers."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
from django.core.cache import cache

from fabric_engine.devices import read_devices
from fabric_engine.devices.vitals import (
    DeviceReadings,
    DeviceVitals,
    FabricWarning,
    HcaPort,
    IsolatedPort,
    NodeInfo,
    OpensmError,
)
from fabric_engine.validation import read_pkeys, read_sminfo
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.live.validation import isolations
from ibweb.live.validation.sm_silent import split_sms
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
    replaced = device_readings.merge(device_readings.merge(None, first, now=1.0), second, replace=("sms", "pkeys"),
                                     now=2.0)
    assert [(t.lid, t.keys) for t in replaced.pkeys] == [(5, (0xFFFF, 0x8002))]
    # the SM that did not answer this round is kept, answered last at the first write's time
    assert [sm.lid for sm in replaced.sms] == [1] and replaced.sm_seen == {1: 1.0} and replaced.sm_round == 2.0
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


@pytest.mark.django_db
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


def _sm(lid: int, guid: int, state: int) -> list:
    name = {2: "SMINFO_STANDBY", 3: "SMINFO_MASTER"}[state]
    return list(read_sminfo(f"sminfo: sm lid {lid} sm guid 0x{guid:x}, activity count 9 priority 1 state {state} "
                            f"{name}\n").sms)


def test_a_standby_that_stops_answering_the_collector_is_kept_marked_with_when_it_last_answered():
    master, standby = _sm(8, 0x81, 3), _sm(7, 0x71, 2)
    both = device_readings.merge(None, DeviceReadings(sms=master + standby), replace=("sms",), now=100.0)
    assert split_sms(both) == (master + standby, [])
    alone = device_readings.merge(both, DeviceReadings(sms=master), replace=("sms",), now=200.0)
    assert [sm.lid for sm in alone.sms] == [8, 7]  # the standby is not forgotten
    assert split_sms(alone) == (master, [(standby[0], 100.0)])  # not answering this round, last seen at 100
    pushed = device_readings.merge(alone, DeviceReadings(sms=master), now=250.0)  # a host's plain sminfo
    assert split_sms(pushed) == (master, [(standby[0], 100.0)])
    back = device_readings.merge(pushed, DeviceReadings(sms=master + standby), replace=("sms",), now=300.0)
    assert split_sms(back) == (master + standby, [])
    gone = device_readings.merge(alone, DeviceReadings(sms=master), replace=("sms",),
                                 now=100.0 + device_readings.SM_KEPT_S)
    assert [sm.lid for sm in gone.sms] == [8]  # silent for a week: removed


@pytest.mark.django_db(transaction=True)
def test_an_isolation_is_kept_in_the_database_until_the_port_is_seen_enabled():
    row = Fabric.objects.create(name="iso", slug="iso", mode=FabricMode.TELEMETRY, tick_s=1.0)
    guid = 0xB83FD20300000011  # above 2**63: stored signed
    disabled = HcaPort("gpu1/mlx5_0", guid, 1, "Down", "Disabled", None, None, None, None, "gpu1.txt:3")
    device_readings.write(row.pk, DeviceReadings(hca_ports=[disabled]))
    device_readings.forget(row.pk)  # the cache's day is over (or the cache restarted): the record stays
    (listed,) = isolations.open_isolations(row.pk)
    assert (listed["guid"], listed["port"], listed["node"]) == (guid, 1, "gpu1/mlx5_0")
    first = listed["isolated_at"]
    device_readings.write(row.pk, DeviceReadings(isolated=[IsolatedPort(guid, 1, first + 50, "gpu1", "iblinkinfo:9")]))
    (again,) = isolations.open_isolations(row.pk)
    assert again["isolated_at"] == first and again["last_seen_at"] >= first  # the same isolation, seen again
    # another port enabled closes nothing; the discovery showing this port enabled closes it
    device_readings.write(row.pk, DeviceReadings(), enabled=(np.array([guid], np.uint64), np.array([2])))
    assert len(isolations.open_isolations(row.pk)) == 1
    device_readings.write(row.pk, DeviceReadings(), enabled=(np.array([guid, 5], np.uint64), np.array([1, 1])))
    assert isolations.open_isolations(row.pk) == []
    assert isolations.history(row.pk) == [{"guid": guid, "port": 1, "t": first}]  # the advice's history keeps it
    # a pushed port up again closes a new isolation too
    device_readings.write(row.pk, DeviceReadings(hca_ports=[disabled]))
    assert len(isolations.open_isolations(row.pk)) == 1
    device_readings.write(row.pk, DeviceReadings(hca_ports=[port("gpu1/mlx5_0", guid, 1, "Active")]))
    assert isolations.open_isolations(row.pk) == [] and len(isolations.history(row.pk)) == 2
