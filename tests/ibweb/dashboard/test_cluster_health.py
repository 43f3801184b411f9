"""The Health page of a cluster (issue 37): the worst ports of all its planes ranked together with their evidence,
linked to each plane's Health page and map, only the fabrics the viewer may open, hosts named as the viewer may."""

from __future__ import annotations

import copy

import pytest
from django.contrib.auth.models import User

from ibweb.dashboard import cluster as cluster_module
from ibweb.fabrics.clusters import create_cluster
from ibweb.fabrics.models import Cluster
from tests.ibweb.live.api.graded import clear, publish_and_grade
from tests.support.access_fixtures import public_read
from tests.support.cluster_spec import PLANE, SPEC

pytestmark = pytest.mark.django_db

#: Plane 1: a host cable whose raw BER climbs to an error; plane 2: a hot module (a warning) and a milder BER.
PLANE1 = [{"kind": "ber_rising", "link": "dgx0003 1", "from": 6e-5, "to": 3e-4, "over_s": 2, "start_s": 0}]
PLANE2 = [{"kind": "hot_module", "port": "spine01 2", "celsius": 78, "start_s": 0},
          {"kind": "ber_rising", "link": "dgx0005 1", "from": 9e-5, "to": 1e-4, "over_s": 1, "start_s": 0}]


@pytest.fixture
def pod():
    cluster = create_cluster(copy.deepcopy(SPEC), "pod", "Pod")
    rows = {f.slug: f for f in cluster.fabrics.all()}
    tops = {slug: publish_and_grade(rows[slug], PLANE, faults, 4)
            for slug, faults in (("pod-plane1", PLANE1), ("pod-plane2", PLANE2))}
    clear(rows["pod-storage"])  # never graded: no report
    yield cluster, rows, tops
    for row in rows.values():
        clear(row)


def _rows(html: str) -> list[tuple[str, str, str]]:
    """(grade, plane, node) of each row of the worst ports table, in order."""
    import re

    body = html.split('id="cluster-health-worst"', 1)[1]
    return re.findall(r'<tr data-grade="(\w+)" data-plane="([\w-]+)" data-node="([^"]+)"', body)


def test_the_worst_ports_of_every_plane_are_ranked_together(pod, client):
    cluster, rows, tops = pod
    client.force_login(User.objects.create_superuser("root", password="pw"))
    html = client.get("/clusters/pod/health/").content.decode()
    ranked = _rows(html)
    # plane 1's cable at 3e-4 (both ends an error) first, then plane 2's warnings: its BER end then the hot module
    assert [r[:2] for r in ranked[:2]] == [("error", "pod-plane1")] * 2 and "dgx0003" in {r[2] for r in ranked[:2]}
    assert [r[:2] for r in ranked[2:]] == [("warning", "pod-plane2")] * (len(ranked) - 2)
    assert ("warning", "pod-plane2", "spine01") in ranked
    # each port linked to its plane's Health page at its row and to its cable on the plane's map
    f1 = tops["pod-plane1"]
    d = int(f1.out_link(f1.node("dgx0003"), 1))
    assert 'href="/fabrics/pod-plane1/health/#port-dgx0003-1"' in html
    assert f'href="/fabrics/pod-plane1/?focus=link:{d}"' in html
    # the planes' table: both planes graded, the storage fabric without a report
    assert '<tr data-plane="pod-storage">' in html and "No link health report yet." in html
    assert "2 of 3 have a report" in html
    plane_page = client.get("/fabrics/pod-plane1/health/").content.decode()
    assert 'id="port-dgx0003-1"' in plane_page


def test_the_cluster_pages_link_each_other(pod, client):
    client.force_login(User.objects.create_superuser("root", password="pw"))
    planes = client.get("/clusters/pod/").content.decode()
    health = client.get("/clusters/pod/health/").content.decode()
    for html in (planes, health):
        assert 'aria-label="Cluster"' in html
        assert 'href="/clusters/pod/health/"' in html and 'href="/clusters/pod/"' in html
    assert 'href="/clusters/pod/health/" aria-current="page"' in health
    assert 'href="/clusters/pod/" aria-current="page"' in planes


def test_hosts_are_named_as_the_viewer_may_and_only_visible_fabrics_count(pod, client, monkeypatch):
    cluster, rows, tops = pod
    with public_read(True):  # anonymous: the fabric-wide view, no host names
        html = client.get("/clusters/pod/health/").content.decode()
        assert "dgx" not in html and "spine01" in html
        label = f"host-{tops['pod-plane1'].node('dgx0003')}"
        assert ("error", "pod-plane1", label) in _rows(html)
        real = cluster_module.visible_fabrics
        monkeypatch.setattr(cluster_module, "visible_fabrics",
                            lambda view, qs=None: real(view, qs).exclude(slug="pod-plane1"))
        html = client.get("/clusters/pod/health/").content.decode()
        assert "pod-plane1" not in html and {r[1] for r in _rows(html)} == {"pod-plane2"}
    with public_read(False):
        assert client.get("/clusters/pod/health/").status_code == 302  # to the sign-in
    assert client.get("/clusters/nosuch/health/").status_code in (302, 404)
    assert Cluster.objects.filter(slug="pod").exists()
