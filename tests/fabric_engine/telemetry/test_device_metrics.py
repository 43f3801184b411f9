"""Device vitals as Prometheus series (issue 38), read back by Prometheus' own parser."""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from fabric_engine.devices import read_devices
from fabric_engine.devices.vitals import DeviceVitals, Fan, Psu, Temperature
from fabric_engine.telemetry import device_metrics
from fabric_engine.telemetry.device_metrics import DEVICE_HELP, device_families, device_series
from fabric_engine.telemetry.prometheus import render_families

DATA = Path(__file__).parents[2] / "data" / "devices"


def test_the_examples_hold():
    assert doctest.testmod(device_metrics).failed == 0


def parsed(text: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def test_the_ibswinfo_fixture_as_series():
    r = read_devices([DATA / "ibswinfo_full.txt"])
    s = device_series(r.vitals)
    keep = np.ones(len(r.vitals), bool)
    got = parsed(render_families([device_families(s, "lab", np.array([v.name for v in r.vitals], object), keep)],
                                 DEVICE_HELP))
    leaf = "MF0;ib-leaf-07:MQM8790/U1"
    rpm = {x.labels["fan"]: x.value for x in got["ibweb_switch_fan_rpm"]}
    assert rpm == {"fan#1": 8470, "fan#2": 8512, "fan#3": 8391, "fan#4": 0, "fan#5": 8433, "fan#6": 8460}
    failed = {x.labels["fan"] for x in got["ibweb_switch_fan_failed"] if x.value == 1}
    assert failed == {"fan#4", "PSU1 fan"}
    assert {x.labels["psu"]: x.value for x in got["ibweb_switch_psu_status"]} == {"PSU0": 1, "PSU1": 0}
    assert [(x.labels["psu"], x.value) for x in got["ibweb_switch_psu_watts"]] == [("PSU0", 151)]
    temps = {(x.labels["sensor"], x.labels["kind"]): x.value for x in got["ibweb_device_temperature_celsius"]}
    assert temps[("ASIC", "asic")] == 54 and temps[("QSFP#02", "module")] == 41 and len(temps) == 5
    assert {x.labels["node"] for fam in got.values() for x in fam} == {leaf}  # lid-31 read nothing but its error
    assert {x.labels["guid"] for fam in got.values() for x in fam} == {"0x0c42a1030050e8a0"}


def test_label_values_escaped_and_devices_left_out():
    odd = DeviceVitals(None, 'sw "7"\\x', "f:1", None, None, None, None, None, None,
                       (Fan('fan "a"\nb', 100, True),), (Psu("P\\1", True, None, None),),
                       (Temperature("board", 30.0, None, None, None), Temperature("QSFP#9", None, None, None, None)),
                       ())
    plain = DeviceVitals(5, "sw5", "f:9", None, None, None, None, None, None, (Fan("f", 1, True),), (), (), ())
    s = device_series([odd, plain])
    names = np.array([odd.name, "renamed"], object)
    got = parsed(render_families([device_families(s, 'f"1', names, np.array([True, True]))], DEVICE_HELP))
    fans = {(x.labels["fabric"], x.labels["node"], x.labels["fan"]) for x in got["ibweb_switch_fan_rpm"]}
    assert fans == {('f"1', 'sw "7"\\x', 'fan "a"\nb'), ('f"1', "renamed", "f")}
    assert [x.labels["psu"] for x in got["ibweb_switch_psu_status"]] == ["P\\1"]
    assert [(x.labels["sensor"], x.labels["kind"]) for x in got["ibweb_device_temperature_celsius"]] == [
        ("board", "other")]  # a sensor without a reading: no sample
    only = device_families(s, "f", names, np.array([False, True]))
    assert list(only) == ["ibweb_switch_fan_rpm", "ibweb_switch_fan_failed"] and "sw " not in str(only)
    assert only["ibweb_switch_fan_rpm"][1] == \
        'ibweb_switch_fan_rpm{fabric="f",node="renamed",guid="0x0000000000000005",fan="f"} 1\n'
    assert device_families(s, "f", names, np.zeros(2, bool)) == {}
    assert device_families(device_series([]), "f", np.zeros(0, object), np.zeros(0, bool)) == {}
