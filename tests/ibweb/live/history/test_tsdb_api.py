"""Per-port history over any window through the API (issue 40): a port's series by name, GUID or hidden-host label,
the top-N of a fabric, hosts the view may not see left out (404 for a port, absent from the top)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from django.contrib.auth.models import User

import ibweb.tsdb.open as tsdb_open
from fabric_engine.scenario import build_fabric
from fabric_engine.topology import KIND_HOST
from ibweb.fabrics.models import Fabric
from ibweb.runtime import record
from ibweb.tsdb.embedded import EmbeddedStore
from ibweb.tsdb.series import PORT_ID
from tests.support.access_fixtures import public_read
from tests.support.cluster_spec import PLANE

pytestmark = pytest.mark.django_db

T0 = float(int(time.time() // 600) * 600 - 1200)
URL = "/api/fabrics/fabrics/pod"


@pytest.fixture
def stored(tmp_path, monkeypatch):
    """A published fabric whose ports' utilization was stored for six 10 s sweeps: hosts' ports 0.5 + their node
    index / 1000 (the highest), switches' 0.1, all but the first sweep of dgx0003's port 1 (NaN)."""
    row = Fabric.objects.create(name="Pod", slug="pod", spec={"topology": PLANE}, tick_s=1.0)
    f = build_fabric(PLANE)
    record.publish(row.pk, record.row_identity(row), f, None)
    store = EmbeddedStore(tmp_path / "tsdb.sqlite3")
    monkeypatch.setattr(tsdb_open, "_store", store)
    n = 2 * f.num_links
    ports = np.empty(n, dtype=PORT_ID)
    ports["guid"], ports["port"] = f.guid[f.dl_src], f.dl_src_port
    host = f.kind[f.dl_src] == KIND_HOST
    level = np.where(host, 0.5 + f.dl_src / 1000, 0.1)
    first = (f.dl_src == f.node("dgx0003")) & (f.dl_src_port == 1)
    for i in range(6):
        util = level + i * 0.01
        store.write(row.pk, T0 + 10 * i + 1, ports, {"utilization": np.where(first & (i > 0), np.nan, util)})
    yield row, f
    store.close()


@pytest.fixture
def superuser():
    return User.objects.create_superuser("root", password="pw-root")


def test_a_port_s_series_in_bins(stored, client, superuser):
    row, f = stored
    client.force_login(superuser)
    i = f.node("dgx0004")
    body = client.get(f"{URL}/ports/dgx0004/1/tsdb/?series=utilization&start={T0}&end={T0 + 60}&points=6").json()
    assert body["node"] == "dgx0004" and body["unit"] == "ratio" and body["agg"] == "mean"
    assert body["t"] == [T0 + 10 * k for k in range(6)]
    np.testing.assert_allclose(body["values"], 0.5 + i / 1000 + 0.01 * np.arange(6), rtol=1e-3)
    gap = client.get(f"{URL}/ports/dgx0003/1/tsdb/?series=utilization&start={T0}&end={T0 + 60}&points=6").json()
    assert gap["values"][0] is not None and gap["values"][1:] == [None] * 5  # missing is null, never zero
    by_guid = client.get(f"{URL}/ports/0x{int(f.guid[i]):016x}/1/tsdb/?series=utilization&start={T0}"
                         f"&end={T0 + 60}&points=6").json()
    assert by_guid["values"] == body["values"]
    assert client.get(f"{URL}/ports/dgx0004/1/tsdb/?series=nosuch").status_code == 400
    assert client.get(f"{URL}/ports/dgx0004/1/tsdb/?series=utilization&start=10&end=5").status_code == 400
    assert client.get(f"{URL}/ports/nosuch/1/tsdb/?series=utilization").status_code == 404
    assert client.get(f"{URL}/ports/dgx0004/99/tsdb/?series=utilization").status_code == 404


def test_the_top_ports(stored, client, superuser):
    row, f = stored
    client.force_login(superuser)
    body = client.get(f"{URL}/tsdb/top/?series=utilization&start={T0}&end={T0 + 60}&n=3").json()
    hosts = sorted((int(i) for i in f.hosts), reverse=True)[:3]  # the highest node indices: the highest levels
    assert [p["node"] for p in body["ports"]] == [str(f.node_name[i]) for i in hosts]
    assert body["ports"][0]["value"] == pytest.approx(0.5 + hosts[0] / 1000 + 0.025, rel=1e-3)


def test_hidden_hosts_are_404_and_left_out_of_the_top(stored, client):
    row, f = stored
    label = f"host-{f.node('dgx0004')}"
    with public_read(True):  # anonymous: the fabric-wide view, no host names
        q = f"series=utilization&start={T0}&end={T0 + 60}"
        assert client.get(f"{URL}/ports/dgx0004/1/tsdb/?{q}").status_code == 404
        body = client.get(f"{URL}/ports/{label}/1/tsdb/?{q}&points=6").json()
        assert body["node"] == label and body["values"][0] is not None and "dgx" not in str(body)
        top = client.get(f"{URL}/tsdb/top/?{q}&n=5").json()
        assert len(top["ports"]) == 5 and "dgx" not in str(top)
        switch_guids = {f"0x{int(g):016x}" for g in f.guid[f.kind != KIND_HOST]}
        assert {p["guid"] for p in top["ports"]} <= switch_guids
        assert all(p["value"] == pytest.approx(0.125, rel=1e-3) for p in top["ports"])
    with public_read(False):
        assert client.get(f"{URL}/tsdb/top/?series=utilization").status_code == 403
