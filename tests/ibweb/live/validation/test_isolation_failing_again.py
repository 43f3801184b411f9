"""Issue 38: the validation report feeds the isolation advice the ports the device readings recorded isolated; the
advised port, isolated before and graded error again, is flagged failing again for replacement in the API."""

from __future__ import annotations

import pytest

from fabric_engine.devices.vitals import DeviceReadings, HcaPort, IsolatedPort
from ibweb.live.validation import store
from ibweb.runtime import device_readings

from .test_validation_api import URL, pod, root  # noqa: F401 (fixtures)

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
