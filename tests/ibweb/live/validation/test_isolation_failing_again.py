"""Issue 38: the validation report feeds the isolation advice the ports recorded isolated (the device readings' and the
database's); the advised port, isolated before and graded error again, is flagged failing again for replacement in
the API; the ports isolated now are listed until seen enabled again, hosts relabelled for a viewer below ALL."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fabric_engine.devices.vitals import DeviceReadings, HcaPort, IsolatedPort
from ibweb.live.validation import store
from ibweb.runtime import device_readings

from .test_validation_api import URL, pod, root, viewer  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def _advised_port(f):
    host = f.node("dgx0003")
    d = int(f.out_link(host, 1))
    return int(f.dl_dst[d]), int(f.dl_dst_port[d])


def test_a_port_seen_disabled_before_and_failing_again_is_advised_for_replacement(pod, client, root):  # noqa: F811
    row, f = pod
    client.force_login(root)
    (a,) = client.get(URL).json()["isolation"]["advised"]
    assert a["failing_again"] is False and a["action"] == "isolate" and a["commands"]["isolate"]
    leaf, port = _advised_port(f)
    t = 1_764_000_000.0
    device_readings.write(row.pk, DeviceReadings(isolated=[IsolatedPort(int(f.guid[leaf]), port, t,
                                                                        str(f.node_name[leaf]), "iblinkinfo:12")]))
    store.forget(row.pk)
    (a,) = client.get(URL).json()["isolation"]["advised"]
    assert a["failing_again"] is True and a["isolated_at"] == t and a["action"] == "replace"
    assert a["commands"] == {"isolate": None, "reenable": None}
    assert "failing again" in a["note"] and "replace the cable or transceiver" in a["note"]
    assert a["whatif_request"]["params"]["failed_cables"] == [a["cable"]]  # still joined with the what-if


def test_another_ports_isolation_changes_nothing(pod, client, root):  # noqa: F811
    row, f = pod
    client.force_login(root)
    host = f.node("dgx0003")
    device_readings.write(row.pk, DeviceReadings(hca_ports=[HcaPort("dgx0009/mlx5_0", int(f.guid[host]) + 999, 1,
                                                                    "Down", "Disabled", None, None, None, None,
                                                                    "dgx0009-ibstat.txt:4")]))
    store.forget(row.pk)
    (a,) = client.get(URL).json()["isolation"]["advised"]
    assert a["failing_again"] is False and a["isolated_at"] is None
    assert len(device_readings.read(row.pk).isolated) == 1


def test_an_isolation_outlives_the_device_readings_and_stays_listed_until_seen_enabled(pod, client, root, viewer):  # noqa: F811
    row, f = pod
    leaf, port = _advised_port(f)
    guid = int(f.guid[leaf])
    device_readings.write(row.pk, DeviceReadings(isolated=[IsolatedPort(guid, port, 1_764_000_000.0,
                                                                        str(f.node_name[leaf]), "iblinkinfo:12")]))
    host = f.node("dgx0005")
    device_readings.write(row.pk, DeviceReadings(hca_ports=[HcaPort("dgx0005/mlx5_0", int(f.guid[host]), 1, "Down",
                                                                    "Disabled", None, None, None, None,
                                                                    "dgx0005-ibstat.txt:4")]))
    readings = device_readings.read(row.pk)
    device_readings.forget(row.pk)  # the cache's day is over: the readings go, the isolations stay
    device_readings.write(row.pk, DeviceReadings(vitals=readings.vitals, pkeys=readings.pkeys, sms=readings.sms))
    store.forget(row.pk)
    client.force_login(root)
    body = client.get(URL).json()
    (a,) = body["isolation"]["advised"]
    assert a["failing_again"] is True and a["action"] == "replace" and a["isolated_at"] == 1_764_000_000.0
    listed = {(x["node"], x["port"]): x for x in body["isolated"]}
    assert set(listed) == {(str(f.node_name[leaf]), port), ("dgx0005/mlx5_0", 1)}
    assert listed[("dgx0005/mlx5_0", 1)]["guid"] == f"0x{int(f.guid[host]):016x}"
    assert listed[(str(f.node_name[leaf]), port)]["map_url"].startswith("/fabrics/pod/?focus=")
    # a viewer below ALL reads the host's port relabelled, the switch's as it is
    client.force_login(viewer)
    shown = client.get(URL).json()["isolated"]
    assert "dgx0005" not in json.dumps(shown) and hex(int(f.guid[host]))[2:] not in json.dumps(shown)
    assert {x["node"] for x in shown} >= {str(f.node_name[leaf])}
    # the switch port seen enabled again (the collector's discovery): no longer listed, still the advice's history
    device_readings.write(row.pk, DeviceReadings(), enabled=(np.array([guid], np.uint64), np.array([port])))
    store.forget(row.pk)
    client.force_login(root)
    body = client.get(URL).json()
    assert [(x["node"], x["port"]) for x in body["isolated"]] == [("dgx0005/mlx5_0", 1)]
    assert body["isolation"]["advised"][0]["failing_again"] is True
