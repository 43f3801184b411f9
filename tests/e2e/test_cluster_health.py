"""The cluster's Health page and the port panel's BER trend in headless Chromium (issue 37).

The demo pod's planes get link health faults: plane 1 a host cable whose raw BER climbs to an error and a hot
module, plane 2 a hot module (grading every second). The cluster's Health page ranks plane 1's error first, its
links lead to the plane's Health page at the port and to the cable on the plane's map, where the port panel shows
the port's raw BER trend as a sparkline of its gradings.
"""

import re
import urllib.request

import pytest

from tests.support.browser import axe_violations, chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

SETUP = """
from django.core.management import call_command
from ibweb.fabrics.models import Fabric
call_command("ensure_demo_cluster")
faults = {"pod-plane1": [{"kind": "ber_rising", "link": "dgx0003 1", "from": 6e-5, "to": 3e-4, "over_s": 4},
                         {"kind": "hot_module", "port": "dgx0007 1", "celsius": 78}],
          "pod-plane2": [{"kind": "hot_module", "port": "dgx0009 1", "celsius": 78}]}
for slug, health in faults.items():
    f = Fabric.objects.get(slug=slug)
    f.spec = {**f.spec, "health": health}
    f.save()
"""
WORST = "[...document.querySelectorAll('#cluster-health-worst tbody tr[data-plane]')].map((r) => r.dataset)"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster-health")
    with running_server(tmp, setup=SETUP, extra_env={"IBWEB_HEALTH_INTERVAL_S": "1"}) as srv:
        yield srv


def graded(page, server, timeout_s: float = 60.0) -> list[dict]:
    """The worst ports' rows once both planes' reports list theirs and plane 1's cable reads an error."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        page.goto(server.url + "/clusters/pod/health/")
        rows = page.evaluate(WORST)
        if {r["plane"] for r in rows} == {"pod-plane1", "pod-plane2"} and rows[0]["grade"] == "error":
            return rows
        assert time.monotonic() < deadline, f"the planes were never graded: {rows}"
        time.sleep(1.0)


def test_the_cluster_health_page_ranks_every_plane_and_leads_to_the_port(server):
    with chromium_page({"width": 1280, "height": 900}, signed_in=server) as page:
        page.goto(server.url + "/clusters/pod/")
        page.get_by_role("navigation", name="Cluster").get_by_role("link", name="Link health").click()
        page.wait_for_url(server.url + "/clusters/pod/health/")
        rows = graded(page, server)
        assert [r["plane"] for r in rows[:2]] == ["pod-plane1"] * 2 and "dgx0003" in {r["node"] for r in rows[:2]}
        assert {(r["plane"], r["node"]) for r in rows} >= {("pod-plane1", "dgx0007"), ("pod-plane2", "dgx0009")}
        assert axe_violations(page) == []
        # the plane's Health page at the port's row, then its cable inventory
        row = page.locator('#cluster-health-worst tr[data-node="dgx0003"]')
        row.get_by_role("link", name="health").click()
        page.wait_for_url(re.compile(r".*/fabrics/pod-plane1/health/#port-dgx0003-1$"))
        assert page.locator("#port-dgx0003-1").count() == 1
        assert "Cable ends 1–100 of " in page.locator("#health-cables caption").inner_text()
        assert axe_violations(page) == []  # with its cable inventory and its filters
        page.get_by_label("The module's serial").fill("no-such-serial")
        page.get_by_role("button", name="Filter").click()
        poll(page, "document.querySelector('#health-cables caption').textContent.includes('of 0')", 10)
        page.go_back()
        csv = page.locator("#cables-csv").get_attribute("href")
        request = urllib.request.Request(f"{server.url}/fabrics/pod-plane1/health/{csv}",
                                         headers={"Cookie": f"sessionid={server.session_key}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            lines = answer.read().decode().splitlines()
        assert lines[0].startswith("node,guid,port,kind,vendor,pn,sn") and any(x.startswith("dgx0003,") for x in lines)
        # the cable on the plane's map: the port panel shows the port's raw BER trend
        page.goto(server.url + "/clusters/pod/health/")
        page.locator('#cluster-health-worst tr[data-node="dgx0003"]').get_by_role("link", name="map").click()
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        state = poll(page, "window.ibweb.detail.cable >= 0 && window.ibweb.detail.health.some((s) => s.end === "
                           "'dgx0003 port 1' && s.trend && s.trend.dots.length >= 2) && window.ibweb.detail", 30)
        (end,) = [s for s in state["health"] if s["end"] == "dgx0003 port 1"]
        rows = {label: value for label, value, *_ in end["rows"]}
        assert rows["raw BER per lane"].startswith("no lane read")
        assert end["trend"]["label"].startswith("raw BER over the last ") and end["trend"]["d"].startswith("M")
        assert {d["grade"] for d in end["trend"]["dots"]} <= {"warning", "error"}
        page.locator(".ibweb-detail-health summary").click()
        assert page.locator(".ibweb-health-trend circle").count() >= 2
        assert page.errors == [] and page.console_errors == []
