"""One port's BER per lane with its trend, and the inventory of every cable end (issue 37): what each view gets,
paginated and filtered like the other lists, a host's name hidden from who may not name it, 404 before grading."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User

from ibweb.dashboard import health_page
from ibweb.fabrics.models import Fabric
from ibweb.live.health.trend import GRADINGS
from tests.ibweb.live.api.graded import clear, publish_and_grade
from tests.support.access_fixtures import public_read
from tests.support.cluster_spec import PLANE

pytestmark = pytest.mark.django_db

#: dgx0003's cable climbs from a normal raw BER to an error over 4 s from 1 s; spine01's port 2 module runs hot
#: from 2 s.
FAULTS = [{"kind": "ber_rising", "link": "dgx0003 1", "from": 6e-5, "to": 3e-4, "over_s": 4, "start_s": 1},
          {"kind": "hot_module", "port": "spine01 2", "celsius": 78, "start_s": 2}]
SECONDS = 8


@pytest.fixture
def graded():
    row = Fabric.objects.create(name="Pod", slug="pod", spec={"topology": PLANE}, tick_s=1.0)
    f = publish_and_grade(row, PLANE, FAULTS, SECONDS)
    yield row, f
    clear(row)


@pytest.fixture
def superuser():
    return User.objects.create_superuser("root", password="pw-root")


def test_a_port_s_trend_is_its_raw_ber_and_grade_at_each_grading(graded, client, superuser):
    row, f = graded
    client.force_login(superuser)
    body = client.get("/api/fabrics/fabrics/pod/health/ports/dgx0003/1/").json()
    assert body["node"] == "dgx0003" and body["tracked"] and body["gradings"] == GRADINGS
    assert len(body["t"]) == len(body["raw"]) == len(body["grade"]) == SECONDS
    assert body["t"] == sorted(body["t"])
    # normal (so not tracked) at 6e-5 until the BER rises past it: a warning at 2 s, an error from 3 s
    assert body["grade"][:2] == [None, None] and body["raw"][:2] == [None, None]
    assert body["grade"][2:] == ["warning"] + ["error"] * (SECONDS - 3)
    assert body["raw"][2] == pytest.approx(6e-5 * 5 ** 0.25, rel=2e-3) and body["raw"][-1] == pytest.approx(3e-4,
                                                                                                         rel=2e-3)
    assert body["lanes"] == [None] * 12  # the emulator models a port's raw BER, not its lanes
    # the module runs hot: tracked from its first warning on, not read before
    hot = client.get("/api/fabrics/fabrics/pod/health/ports/spine01/2/").json()
    assert hot["grade"][:2] == [None, None] and set(hot["grade"][2:]) == {"warning"}
    calm = client.get("/api/fabrics/fabrics/pod/health/ports/leaf01/1/").json()
    assert calm["tracked"] is False and calm["t"] == [] and calm["lanes"] is None
    by_guid = client.get(f"/api/fabrics/fabrics/pod/health/ports/0x{int(f.guid[f.node('dgx0003')]):016x}/1/")
    assert by_guid.json()["raw"] == body["raw"]
    assert client.get("/api/fabrics/fabrics/pod/health/ports/nosuch/1/").status_code == 404
    assert client.get("/api/fabrics/fabrics/pod/health/ports/dgx0003/9/").status_code == 404


def test_a_host_the_view_may_not_name_is_asked_for_by_its_label(graded, client):
    row, f = graded
    label = f"host-{f.node('dgx0003')}"
    with public_read(True):  # anonymous: the fabric-wide view, no host names
        assert client.get("/api/fabrics/fabrics/pod/health/ports/dgx0003/1/").status_code == 404
        body = client.get(f"/api/fabrics/fabrics/pod/health/ports/{label}/1/").json()
        assert body["node"] == label and body["tracked"] and "dgx0003" not in str(body)
    with public_read(False):
        assert client.get(f"/api/fabrics/fabrics/pod/health/ports/{label}/1/").status_code == 403


def test_the_cable_inventory_is_paginated_and_filtered(graded, client, superuser):
    row, f = graded
    client.force_login(superuser)
    body = client.get("/api/fabrics/fabrics/pod/health/cables/?limit=10").json()
    assert body["count"] == 2 * f.num_links and len(body["results"]) == 10
    assert body["next"].endswith("limit=10&offset=10") and body["previous"] is None and body["read_at"]
    first = body["results"][0]
    assert first["node"] == "leaf01" and first["port"] == 1 and first["kind"] == "switch"
    assert first["vendor"] == "Emulated" and first["pn"].startswith("EMU-") and first["sn"]
    assert set(first) == {"node", "guid", "port", "kind", "vendor", "pn", "sn", "rev", "fw", "identifier",
                          "length_m"}
    everything = client.get("/api/fabrics/fabrics/pod/health/cables/?limit=1000").json()["results"]
    host = next(c for c in everything if c["node"] == "dgx0003")
    one = client.get(f"/api/fabrics/fabrics/pod/health/cables/?sn={host['sn']}").json()
    assert one["count"] == 1 and one["results"] == [host]
    part = client.get(f"/api/fabrics/fabrics/pod/health/cables/?pn={host['pn']}&limit=1000").json()
    assert part["results"] == [c for c in everything if c["pn"] == host["pn"]] and part["count"] >= 2
    assert client.get("/api/fabrics/fabrics/pod/health/cables/?vendor=Nobody").json()["count"] == 0


def test_the_inventory_names_hosts_as_the_view_may(graded, client):
    row, f = graded
    with public_read(True):
        text = client.get("/api/fabrics/fabrics/pod/health/cables/?limit=1000").content.decode()
        assert "dgx" not in text and f'"node":"host-{f.node("dgx0003")}"' in text.replace(" ", "")
        assert '"guid":"hidden"' in text.replace(" ", "") and "leaf01" in text
        page = client.get("/fabrics/pod/health/").content.decode()
        assert "dgx" not in page and f"host-{f.node('dgx0003')} port 1" in page
        download = client.get("/fabrics/pod/health/cables.csv")
        text = b"".join(download.streaming_content).decode()
        assert "dgx" not in text and download["Content-Type"].startswith("text/csv")


def test_the_health_page_lists_the_cables_and_offers_them_as_csv(graded, client, superuser, monkeypatch):
    row, f = graded
    monkeypatch.setattr(health_page, "CABLES_PAGE", 20)
    client.force_login(superuser)
    page = client.get("/fabrics/pod/health/?vendor=Emulated&offset=20").content.decode()
    assert 'id="health-cables"' in page and f"Cable ends 21–40 of {2 * f.num_links}" in page
    assert 'href="?vendor=Emulated&amp;offset=0#cables"' in page
    assert 'href="?vendor=Emulated&amp;offset=40#cables"' in page
    assert 'href="cables.csv?vendor=Emulated"' in page
    assert 'id="port-dgx0003-1"' in page  # the worst ports' rows can be linked to
    download = client.get("/fabrics/pod/health/cables.csv?vendor=Emulated")
    assert download["Content-Disposition"] == 'attachment; filename="pod-cables.csv"'
    rows = list(csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode())))
    assert len(rows) == 2 * f.num_links and rows[0]["node"] == "leaf01" and rows[0]["vendor"] == "Emulated"
    assert client.get("/fabrics/pod/health/cables.csv?vendor=Nobody").status_code == 200


def test_before_grading_the_port_and_cables_answer_404(client, superuser):
    row = Fabric.objects.create(name="Idle", slug="idle", spec={"topology": PLANE}, tick_s=1.0)
    clear(row)
    client.force_login(superuser)
    from fabric_engine.scenario import build_fabric
    from ibweb.runtime import record

    record.publish(row.pk, record.row_identity(row), build_fabric(PLANE), None)
    port = client.get("/api/fabrics/fabrics/idle/health/ports/leaf01/1/")
    cables = client.get("/api/fabrics/fabrics/idle/health/cables/")
    assert port.status_code == 404 and "no link health trend" in port.json()["detail"]
    assert cables.status_code == 404 and "no cable inventory" in cables.json()["detail"]
    assert client.get("/fabrics/idle/health/cables.csv").status_code == 404
    assert 'id="cables-none"' in client.get("/fabrics/idle/health/").content.decode()
