"""``/metrics`` device vitals (issue 38): switch fans, power supplies and temperatures from the device readings, one
``# HELP``/``# TYPE`` per family whatever the fabrics, each device as the caller's view may see it, in parts."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from fabric_engine.devices.vitals import DeviceReadings, DeviceVitals, Fan, Psu, Temperature
from fabric_engine.topology import KIND_HOST, KIND_SWITCH
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.models import Fabric
from ibweb.runtime import device_readings
from tests.support.tenancy_fixtures import operator_api

from ..runtime.test_metrics_exposition import families, publish

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clean():
    cache.clear()
    yield
    cache.clear()


def switch(guid: int | None, name: str = "as the tool names it") -> DeviceVitals:
    return DeviceVitals(guid, name, "sw.txt:1", "MQM8790-HS2F", None, None, "27.2010.3118", None, 3600,
                        (Fan("fan#1", 8470, True), Fan("fan#2", 0, False), Fan("PSU1 fan", None, False)),
                        (Psu("PSU0", True, True, 151.0), Psu("PSU1", False, False, None)),
                        (Temperature("ASIC", 54.0, 61.0, 75.0, 85.0), Temperature("QSFP#01", 38.0, None, None, None)),
                        ())


def adapter(guid: int) -> DeviceVitals:
    """A host adapter's temperature, as ibdiagnet's TEMP_SENSING gives it."""
    return DeviceVitals(guid, "hca", "db_csv:9", None, None, None, None, None, None, (), (),
                        (Temperature("ASIC", 66.5, None, None, None),), ())


def stock(slug: str, f) -> Fabric:
    publish(slug, f)
    row = Fabric.objects.get(slug=slug)
    sw = int(np.flatnonzero(f.kind == KIND_SWITCH)[0])
    host = int(np.flatnonzero(f.kind == KIND_HOST)[0])
    device_readings.write(row.pk, DeviceReadings(vitals=[switch(int(f.guid[sw])), adapter(int(f.guid[host])),
                                                         switch(None, "ib-unmanaged-9")]))  # no GUID printed
    return row


def samples(text: str, name: str) -> list:
    return list(families(text)[name].samples) if name in families(text) else []


def test_every_series_of_each_fabric_under_one_help_and_type():
    f = fat_tree(hosts=8, radix=4)
    stock("alpha", f)
    stock("beta", f)
    text = operator_api().get("/metrics").content.decode()
    for name in ("ibweb_switch_fan_rpm", "ibweb_switch_fan_failed", "ibweb_switch_psu_status",
                 "ibweb_switch_psu_watts", "ibweb_device_temperature_celsius"):
        assert text.count(f"# TYPE {name} gauge") == 1 and text.count(f"# HELP {name} ") == 1
    sw = str(f.node_name[int(np.flatnonzero(f.kind == KIND_SWITCH)[0])])
    host = str(f.node_name[int(np.flatnonzero(f.kind == KIND_HOST)[0])])
    rpm = {(s.labels["fabric"], s.labels["node"], s.labels["fan"]): s.value
           for s in samples(text, "ibweb_switch_fan_rpm")}
    assert rpm[("alpha", sw, "fan#1")] == 8470 and rpm[("beta", sw, "fan#2")] == 0
    assert ("alpha", sw, "PSU1 fan") not in rpm  # no tachometer: no speed, but its failure
    failed = {(s.labels["fabric"], s.labels["node"], s.labels["fan"]): s.value
              for s in samples(text, "ibweb_switch_fan_failed") if s.labels["fabric"] == "alpha"}
    assert failed == {("alpha", sw, "fan#1"): 0, ("alpha", sw, "fan#2"): 1, ("alpha", sw, "PSU1 fan"): 1,
                      ("alpha", "ib-unmanaged-9", "fan#1"): 0, ("alpha", "ib-unmanaged-9", "fan#2"): 1,
                      ("alpha", "ib-unmanaged-9", "PSU1 fan"): 1}
    psu = {(s.labels["node"], s.labels["psu"]): s.value for s in samples(text, "ibweb_switch_psu_status")
           if s.labels["fabric"] == "beta"}
    assert psu[(sw, "PSU0")] == 1 and psu[(sw, "PSU1")] == 0
    watts = [s for s in samples(text, "ibweb_switch_psu_watts") if s.labels["fabric"] == "alpha"]
    assert [(s.labels["psu"], s.value) for s in watts if s.labels["node"] == sw] == [("PSU0", 151.0)]
    temps = {(s.labels["node"], s.labels["sensor"], s.labels["kind"]): s.value
             for s in samples(text, "ibweb_device_temperature_celsius") if s.labels["fabric"] == "alpha"}
    assert temps[(sw, "ASIC", "asic")] == 54.0 and temps[(sw, "QSFP#01", "module")] == 38.0
    assert temps[(host, "ASIC", "asic")] == 66.5
    guid = {s.labels["node"]: s.labels["guid"] for s in samples(text, "ibweb_switch_fan_failed")}
    assert guid[sw] == f"0x{int(f.guid[np.flatnonzero(f.kind == KIND_SWITCH)[0]]):016x}"
    assert guid["ib-unmanaged-9"] == ""


def test_a_view_below_all_gets_switches_of_the_record_only():
    f = fat_tree(hosts=8, radix=4)
    stock("alpha", f)
    anonymous = APIClient().get("/metrics")  # public read: the FABRIC level, no host
    assert anonymous.status_code == 200
    text = anonymous.content.decode()
    host = str(f.node_name[int(np.flatnonzero(f.kind == KIND_HOST)[0])])
    sw = str(f.node_name[int(np.flatnonzero(f.kind == KIND_SWITCH)[0])])
    assert host not in text and "ib-unmanaged-9" not in text  # a host, and a device the record lacks
    assert {s.labels["node"] for s in samples(text, "ibweb_device_temperature_celsius")} == {sw}
    assert len(samples(text, "ibweb_switch_psu_status")) == 2


def test_the_parts_hold_each_device_once(settings):
    settings.IBWEB_METRICS_TARGET_PORTS = 16
    f = fat_tree(hosts=32, radix=8)
    stock("big", f)
    api = operator_api()
    parts = [g for g in api.get("/metrics/targets").json() if g["labels"].get("__param_fabric") == "big"]
    assert len(parts) > 2
    seen: list[tuple] = []
    for g in parts:
        text = api.get(f"/metrics?fabric=big&part={g['labels']['__param_part']}").content.decode()
        seen += [(s.labels["node"], s.labels["sensor"]) for s in samples(text, "ibweb_device_temperature_celsius")]
        if g["labels"]["__param_part"] != "0":
            assert "ib-unmanaged-9" not in text  # a device the record lacks: part 0's
    whole = api.get("/metrics?fabric=big").content.decode()
    assert sorted(seen) == sorted((s.labels["node"], s.labels["sensor"])
                                  for s in samples(whole, "ibweb_device_temperature_celsius"))
    assert len(seen) == 5
