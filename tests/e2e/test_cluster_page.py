"""The cluster page in Chromium: the demo pod's planes live, redrawn in place, cut per tenant (issue 25)."""

import json
import urllib.error
import urllib.request

import pytest

from ibweb.fabrics.clusters import DEMO_CLUSTER_SPEC
from tests.e2e.pages import log_in, make_users
from tests.support.browser import axe_violations, chromium_page, horizontal_overflow, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

#: The demo pod (two compute planes, storage, the tenants' partitions) and a cluster with no fabric at all.
SETUP = """
from django.core.management import call_command
from ibweb.fabrics.models import Cluster
call_command("ensure_demo_cluster")
Cluster.objects.get_or_create(slug="bare", defaults={"name": "Bare"})
"""
PLANES = ["pod-plane1", "pod-plane2"]
JOB_TENANTS = {j["name"]: j["tenant"] for j in DEMO_CLUSTER_SPEC["jobs"]}
ROWS = "document.querySelectorAll('.{table} tbody tr[data-key]')"
KEYS = f"[...{ROWS}].map((r) => r.dataset.key)"
UPDATES = "Number(document.querySelector('main[data-page=cluster]').dataset.updates || 0)"
ALL_LIVE = (f"(() => {{ const rows = [...{ROWS.format(table='plane-table')}]; "
            "return rows.length === 2 && rows.every((r) => r.dataset.state === 'live'); })()")
#: Each job row: its key, tenant cell and the hrefs of its per-plane links.
JOB_ROWS = f"""[...{ROWS.format(table='job-table')}].map((r) => ({{id: r.dataset.key,
  tenant: r.cells[1].textContent, links: [...r.querySelectorAll('a')].map((a) => a.getAttribute('href'))}}))"""
PLANE_CELLS = f"[...{ROWS.format(table='plane-table')}].map((r) => [...r.cells].map((c) => c.textContent))"
BARS = "[...document.querySelectorAll('svg.plane-bars g.bar')].map((g) => g.dataset.key)"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster")
    with running_server(tmp, setup=SETUP) as srv:
        make_users(tmp)
        yield srv


def status(url: str, cookie: str = "") -> int:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code


def open_cluster(page, server) -> None:
    """Go to the pod's page and wait until every plane is live and its jobs are listed."""
    page.goto(server.url + "/clusters/pod/")
    poll(page, ALL_LIVE, 60)
    poll(page, f"{ROWS.format(table='job-table')}.length > 0", 30)


def test_an_operator_follows_the_planes_live_redrawn_in_place(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "op")
        open_cluster(page, server)
        row = page.evaluate_handle("document.querySelector('.plane-table tbody tr[data-key=\"pod-plane1\"]')")
        seen = page.evaluate(UPDATES)
        assert seen >= 1
        poll(page, f"{UPDATES} >= {seen + 2}", 20)
        # rows are joined by key: the row captured before is the row shown now, not a rebuilt one
        assert page.evaluate("(n) => n.isConnected && n === document.querySelector("
                             "'.plane-table tbody tr[data-key=\"pod-plane1\"]')", row)
        assert page.evaluate(KEYS.format(table="plane-table")) == PLANES
        cells = page.evaluate(PLANE_CELLS)
        assert [c[:3] for c in cells] == [["Demo pod: plane 1", "1", "live"], ["Demo pod: plane 2", "2", "live"]]
        assert all(c[3].endswith("b/s") and c[4].endswith("×") for c in cells), cells
        assert page.evaluate("[...document.querySelectorAll('.plane-table tbody tr a')].map((a) => "
                             "a.getAttribute('href'))") == [f"/fabrics/{p}/" for p in PLANES]
        assert page.evaluate(BARS) == PLANES
        assert page.evaluate(KEYS.format(table="storage-table")) == ["pod-storage"]
        assert page.locator("[data-field=imbalance]").inner_text().startswith("2 of 2 planes live.")

        api = server.get_json("/api/clusters/pod/")
        assert {j["id"] for j in api["jobs"]} == set(JOB_TENANTS)
        count = len(api["jobs"])
        jobs = poll(page, f"(() => {{ const rows = {JOB_ROWS}; return rows.length === {count} && rows; }})()", 20)
        assert {j["id"]: j["tenant"] for j in jobs} == {j["id"]: j["tenant"] for j in api["jobs"]} == JOB_TENANTS
        links = {j["id"]: sorted(j["links"].values()) for j in api["jobs"]}
        for job in jobs:
            assert len(job["links"]) == len(PLANES) and all("focus=job:" in h for h in job["links"]), job
            assert sorted(job["links"]) == links[job["id"]]

        assert horizontal_overflow(page) == 0
        assert axe_violations(page) == []
        assert page.errors == [] and page.console_errors == []

        link = page.locator(".job-table tbody tr[data-key=pod-ft] a").nth(1)
        href = link.get_attribute("href")
        assert href == "/fabrics/pod-plane2/?focus=job:pod-ft"
        with page.expect_navigation() as navigation:
            link.click()
        assert navigation.value.status == 200 and navigation.value.url == server.url + href


def test_a_tenant_sees_only_its_own_jobs(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "ann")
        open_cluster(page, server)
        poll(page, f"{UPDATES} >= 2", 20)
        api = page.request.get(server.url + "/api/clusters/pod/").json()
        acme = sorted(j for j, t in JOB_TENANTS.items() if t == "acme")
        assert sorted(j["id"] for j in api["jobs"]) == acme
        jobs = page.evaluate(JOB_ROWS)
        assert sorted(j["id"] for j in jobs) == acme and {j["tenant"] for j in jobs} == {"acme"}
        text = page.locator("main").inner_text()
        others = [j for j, t in JOB_TENANTS.items() if t != "acme"] + sorted(set(JOB_TENANTS.values()) - {"acme"})
        assert others and not [o for o in others if o in text]
        assert page.evaluate(KEYS.format(table="plane-table")) == PLANES
        assert page.errors == [] and page.console_errors == []


def test_a_cluster_without_a_fabric_the_viewer_may_open_is_not_found(server):
    # every viewer may open every fabric (ibweb.access.visible_fabrics): a cluster none of whose fabrics the
    # viewer sees is one of no fabric, here "bare"
    for path in ("/clusters/bare/", "/api/clusters/bare/", "/clusters/nosuch/", "/api/clusters/nosuch/"):
        assert status(server.url + path, server.cookie) == 404, path
    assert status(server.url + "/clusters/pod/", server.cookie) == 200
    assert [c["slug"] for c in server.get_json("/api/clusters/")["clusters"]] == ["pod"]
    # a visitor who sees no tenant (anonymous, public read) gets the planes without any job
    with urllib.request.urlopen(server.url + "/api/clusters/pod/", timeout=30) as answer:
        body = json.load(answer)
    assert body["jobs"] == [] and [p["key"] for p in body["planes"]] == PLANES
