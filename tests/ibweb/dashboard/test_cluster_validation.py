"""A cluster's validation (issue 38): each plane's report side by side, the KPIs summed, every plane's findings
ranked together with their plane and Health page; the cluster's Health page draws it from that API."""

from __future__ import annotations

import copy

import pytest
from django.contrib.auth.models import User

from fabric_engine.devices.vitals import DeviceReadings, DeviceVitals, Fan
from ibweb.fabrics.clusters import create_cluster
from ibweb.live.validation import store
from ibweb.runtime import device_readings
from tests.ibweb.live.api.graded import clear, publish_and_grade
from tests.support.cluster_spec import PLANE, SPEC

pytestmark = pytest.mark.django_db

FAULTS = [{"kind": "ber_rising", "link": "dgx0003 1", "from": 6e-5, "to": 3e-4, "over_s": 2, "start_s": 0}]


@pytest.fixture
def root():
    return User.objects.create_superuser("root", password="pw-root")


def _stopped_fan(f, switch: str) -> DeviceReadings:
    i = f.node(switch)
    return DeviceReadings(vitals=[DeviceVitals(int(f.guid[i]), switch, "ibswinfo.txt:1", "MQM9700-NS2F", "MT1", None,
                                               "31.2012.1068", None, 60, (Fan("1", 0, True),), (), (), ())])


def test_a_cluster_s_planes_side_by_side(client, root):
    cluster = create_cluster(copy.deepcopy(SPEC), "pod", "Pod")
    rows = {x.slug: x for x in cluster.fabrics.all()}
    try:
        f1 = publish_and_grade(rows["pod-plane1"], PLANE, FAULTS, 3)
        f2 = publish_and_grade(rows["pod-plane2"], PLANE, [], 1)
        clear(rows["pod-storage"])
        device_readings.write(rows["pod-plane1"].pk, _stopped_fan(f1, "spine01"))
        device_readings.write(rows["pod-plane2"].pk, _stopped_fan(f2, "leaf01"))
        for x in rows.values():
            store.forget(x.pk)
        client.force_login(root)
        body = client.get("/api/clusters/pod/validation/").json()
        planes = {p["slug"]: p for p in body["planes"]}
        one, two = planes["pod-plane1"]["kpis"]["healthy_links"], planes["pod-plane2"]["kpis"]["healthy_links"]
        assert one["healthy"] == one["links"] - 1 and two["healthy"] == two["links"]
        assert body["kpis"]["healthy_links"] == {"healthy": one["healthy"] + two["healthy"],
                                                 "links": one["links"] + two["links"],
                                                 "share": round((one["healthy"] + two["healthy"]) /
                                                                (one["links"] + two["links"]), 6)}
        fans = [(x["plane"], x["subject"], x["map_url"]) for x in body["findings"] if x["check"] == "fan"]
        assert fans == [("pod-plane1", "spine01 fan 1", "/fabrics/pod-plane1/?focus=node:spine01"),
                        ("pod-plane2", "leaf01 fan 1", "/fabrics/pod-plane2/?focus=node:leaf01")]
        assert body["counts"]["error"] == sum(p["counts"]["error"] for p in body["planes"] if p["counts"])
        assert all(x["health_url"] == f"/fabrics/{x['plane']}/health/#validation" for x in body["findings"])
        html = client.get("/clusters/pod/health/").content.decode()
        assert 'data-page="validation"' in html and "/api/clusters/pod/validation/" in html
    finally:
        for x in rows.values():
            clear(x)
            store.forget(x.pk)
            device_readings.forget(x.pk)
