"""Per-port history in headless Chromium (issue 40): the History page, the port panel's longer ranges, the Health
page's sparklines.

The demo fabric's engine writes its per-port series every second (``IBWEB_TSDB_INTERVAL_S=1``) and grades link
health every second; its faults are moved early: leaf05 port 7's cable is swapped at 3 s, leaf03 port 40's BER
rises over 30 s. The History page is opened from the fabric's navigation under the content security policy,
charts the hottest ports, and after a range is picked (a preset, then a custom window) draws each chart from the
per-port history API's answer; a chart of leaf05 port 7 marks its cable swap; a job's links over its run are
listed and charted. The map's port panel reads the store for an hour, and the Health page draws a sparkline per
worst port.
"""

import time
import urllib.parse

import pytest

from tests.support.browser import axe_violations, chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

SETUP = """
from ibweb.fabrics.models import Fabric
f = Fabric.objects.get(slug="demo")
f.spec = {**f.spec, "health": [{"kind": "cable_swap", "link": "leaf05 7", "at_s": 3},
                               {"kind": "ber_rising", "link": "leaf03 40", "from": 6e-5, "to": 3e-4, "over_s": 30}]}
f.save()
"""
MAIN = "document.querySelector('main.history-page')"
DRAWN = "({card}) && ({card}).dataset.state === 'drawn'"
SPARKS_WITH_BER = ("[...document.querySelectorAll('#health-worst td.health-spark svg')]"
                   ".filter((s) => s.dataset.series === 'effective BER' && Number(s.dataset.points) > 0).length")
CARD = "document.querySelector('article.history-chart[data-node=\"{node}\"][data-port=\"{port}\"]')"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("history")
    env = {"IBWEB_TSDB_INTERVAL_S": "1", "IBWEB_HEALTH_INTERVAL_S": "1"}
    with running_server(tmp, setup=SETUP, extra_env=env) as srv:
        yield srv


def stored(server, seconds: float = 600, timeout_s: float = 60) -> list[dict]:
    """The hottest ports of the last ``seconds`` once the store has some."""
    deadline = time.monotonic() + timeout_s
    while True:
        now = time.time()
        top = server.get_json(f"/api/fabrics/fabrics/demo/tsdb/top/?series=utilization&start={now - seconds}&end={now}")
        if top["ports"]:
            return top["ports"]
        assert time.monotonic() < deadline, "nothing stored in the per-port history"
        time.sleep(1)


def utilization_over(seconds: float):
    """A predicate of the responses: the charted ports' series, utilization among them, asked in one request over a
    window of ``seconds`` (within a minute)."""
    def match(response) -> bool:
        if "/tsdb/ports/?" not in response.url:
            return False
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(response.url).query)
        return "utilization" in q["series"] and abs(float(q["end"][0]) - float(q["start"][0]) - seconds) <= 60
    return match


def drawn_port(body: dict) -> tuple[str, int, list]:
    """The first port a several-ports answer has values of: its node, port and utilization."""
    p = next(p for p in body["ports"] if "values" in p)
    return p["node"], p["port"], p["values"]["utilization"]


def drawn_points(page, node: str, port: int, series: str) -> int:
    card = CARD.format(node=node, port=port)
    return page.evaluate(f"Number({card}.querySelector('path[data-series=\"{series}\"]').dataset.points)")


def non_null(values: list) -> int:
    return sum(v is not None for v in values)


def test_the_history_page_charts_the_hottest_ports_and_redraws_for_the_range_picked(server):
    stored(server)
    with chromium_page({"width": 1400, "height": 1000}, bypass_csp=False, signed_in=server) as page:
        page.goto(server.url + "/fabrics/demo/health/")  # any page of the fabric: its navigation links the History
        asked = []
        page.on("request", lambda r: asked.append(r.url) if "/tsdb/" in r.url else None)
        page.get_by_role("navigation", name="Fabric").get_by_role("link", name="History").click()
        page.wait_for_url(server.url + "/fabrics/demo/history/*")
        poll(page, f"{MAIN}.dataset.state === 'ready' && Number({MAIN}.dataset.charts) >= 4", 30)
        # the two rankings, then every series of the four charts in one request
        assert sum("/tsdb/top/" in u for u in asked) == 2 and sum("/tsdb/ports/" in u for u in asked) == 1, asked
        assert len(asked) == 3, asked
        hot = page.evaluate("[...document.querySelectorAll('#history-hot tbody tr[data-node]')]"
                            ".map((r) => r.dataset.node + ':' + r.dataset.port)")
        charted = page.evaluate("[...document.querySelectorAll('article.history-chart')]"
                                ".map((a) => a.dataset.node + ':' + a.dataset.port)")
        assert len(hot) >= 4 and charted == hot[:4], (hot, charted)
        assert page.locator("#history-hot tbody tr").first.get_by_role("button").get_attribute("aria-pressed") == "true"

        # a preset: every chart asks the API again for 6 hours and draws what it answered
        loads = int(page.evaluate(f"{MAIN}.dataset.loads"))
        with page.expect_response(utilization_over(6 * 3600)) as got:
            page.get_by_role("button", name="Last 6 h").click()
        body = got.value.json()
        node, port, values = drawn_port(body)
        assert body["end"] - body["start"] == pytest.approx(6 * 3600, abs=1) and non_null(values) > 0
        assert "range=6h" in page.url
        poll(page, f"Number({MAIN}.dataset.loads) > {loads} && {CARD.format(node=node, port=port)}"
                   ".dataset.state === 'drawn'", 30)
        assert drawn_points(page, node, port, "utilization") == non_null(values)
        assert page.evaluate(f"{CARD.format(node=node, port=port)}.querySelector('path[data-series="
                             "\"utilization\"]').getAttribute('d')").startswith("M")

        # a custom window in UTC: the last two hours
        now = time.time()
        start, end = (time.strftime("%Y-%m-%dT%H:%M", time.gmtime(t)) for t in (now - 7200, now + 120))
        page.get_by_role("button", name="Custom…").click()
        page.get_by_label("From (UTC)").fill(start)
        page.get_by_label("to (UTC)").fill(end)
        loads = int(page.evaluate(f"{MAIN}.dataset.loads"))
        with page.expect_response(utilization_over(7320)) as got:
            page.get_by_role("button", name="Apply").click()
        body = got.value.json()
        node, port, values = drawn_port(body)
        assert body["end"] - body["start"] == pytest.approx(7320, abs=60)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
        assert query["from"] == [start] and query["to"] == [end]
        poll(page, f"Number({MAIN}.dataset.loads) > {loads} && {CARD.format(node=node, port=port)}"
                   ".dataset.state === 'drawn'", 30)
        assert drawn_points(page, node, port, "utilization") == non_null(values)

        # a port of the table charted besides: the address keeps the choice
        row = page.locator("#history-hot tbody tr[data-node]").nth(4)
        node, port = row.get_attribute("data-node"), row.get_attribute("data-port")
        row.get_by_role("button").click()
        poll(page, DRAWN.format(card=CARD.format(node=node, port=port)), 30)
        assert f"{node}:{port}" in urllib.parse.unquote(page.url)
        assert [m for m in page.console_errors if "Content Security Policy" in m] == [] and page.errors == []


def test_a_chart_marks_its_cable_swap_and_the_page_is_accessible(server):
    stored(server)
    with chromium_page({"width": 1400, "height": 1000}, signed_in=server) as page:
        deadline = time.monotonic() + 60
        while True:  # the swap's event is stored within seconds of the start
            page.goto(server.url + "/fabrics/demo/history/?range=1h&ports=leaf05:7,gpu0512:1")
            poll(page, f"Number({MAIN}.dataset.charts) === 2", 30)
            swaps = page.evaluate(f"Number({CARD.format(node='leaf05', port=7)}.querySelector('svg').dataset.swaps)")
            if swaps:
                break
            assert time.monotonic() < deadline, "no cable swap drawn"
            time.sleep(2)
        swap = server.get_json("/api/fabrics/fabrics/demo/ports/leaf05/7/tsdb/?series=utilization")["swaps"][0]
        title = page.locator("article.history-chart[data-node='leaf05'] g.ibweb-swap title").first.text_content()
        assert title.endswith(f"cable swapped: {swap['from']} → {swap['to']}"), title
        assert page.evaluate(f"Number({CARD.format(node='gpu0512', port=1)}.querySelector('svg').dataset.swaps)") == 0
        assert axe_violations(page) == []
        assert page.errors == []


def test_the_port_panel_reads_an_hour_of_the_store_and_links_the_history_page(server):
    stored(server)
    with chromium_page({"width": 1400, "height": 900}, signed_in=server) as page:
        page.goto(server.url + "/fabrics/demo/?focus=node:gpu0512")
        poll(page, "window.ibweb && window.ibweb.ready === true && window.ibweb.detail.cable >= 0", 30)
        assert page.evaluate("window.ibweb.detail.range") == "live"
        page.locator(".ibweb-detail select[aria-label='Time range']").select_option("1h")
        state = poll(page, "window.ibweb.detail.range === '1h' && window.ibweb.detail.points > 0 "
                           "&& window.ibweb.detail", 30)
        assert state["error"] == "" and state["points"] >= 20
        assert "over the last 1 h (stored)" in page.locator(".ibweb-detail-chart svg").get_attribute("aria-label")
        href = page.locator("a.ibweb-detail-history").get_attribute("href")
        assert href.startswith("/fabrics/demo/history/?") and "range=1h" in href and "gpu0512%3A1" in href
        assert page.errors == []


def test_the_health_page_draws_a_sparkline_per_worst_port_over_the_window(server):
    stored(server)
    with chromium_page({"width": 1400, "height": 900}, signed_in=server) as page:
        deadline = time.monotonic() + 60
        while True:  # leaf03 port 40's BER is graded, then stored
            page.goto(server.url + "/fabrics/demo/health/")
            rows = page.locator("#health-worst tbody tr[data-node]").count()
            if rows:
                poll(page, f"Number(document.querySelector('main').dataset.sparklines) === {rows}", 30)
                ber = page.evaluate(SPARKS_WITH_BER)
                if ber:
                    break
            assert time.monotonic() < deadline, "no worst port with a stored BER"
            time.sleep(2)
        assert page.locator("#health-worst thead th").last.inner_text() == "Trend (stored)"
        page.locator(".health-window select").select_option("6h")
        poll(page, f"Number(document.querySelector('main').dataset.sparklines) === {rows}", 30)
        assert page.locator("#health-worst td.health-spark svg path[d^='M']").count() >= 1
        assert page.errors == []


def test_a_job_shows_its_links_over_its_run_and_charts_one(server):
    stored(server)
    job = server.get_json("/api/fabrics/fabrics/demo/jobs/")["jobs"][0]["id"]
    answer = server.get_json(f"/api/fabrics/fabrics/demo/jobs/{urllib.parse.quote(job)}/tsdb/?n=20")
    assert answer["links"], answer
    with chromium_page({"width": 1400, "height": 1000}, signed_in=server) as page:
        page.goto(server.url + f"/fabrics/demo/history/?range=1h&ports=leaf05:7&job={urllib.parse.quote(job)}")
        poll(page, "document.querySelector('.history-job').dataset.state === 'drawn'", 30)
        section = page.locator("section.history-job")
        assert section.get_attribute("data-job") == job
        assert int(section.get_attribute("data-links")) == len(answer["links"])
        assert page.locator("#history-job-note").inner_text().startswith(f"Job {job}")
        assert int(page.locator("#history-job-chart").get_attribute("data-points")) > 0
        row = page.locator("#history-job-links tbody tr").first
        node, port = row.get_attribute("data-node"), row.get_attribute("data-port")
        row.get_by_role("button").click()
        poll(page, DRAWN.format(card=CARD.format(node=node, port=port)), 30)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
        assert query["job"] == [job] and f"{node}:{port}" in query["ports"][0].split(",")
        assert page.errors == []


SWITCH = "document.querySelector('section.history-switch')"


def test_a_switch_s_ports_side_by_side_follow_the_range_picked_and_chart_a_port(server):
    stored(server)
    with chromium_page({"width": 1400, "height": 1000}, signed_in=server) as page:
        # from the map: a switch's device panel links its ports on the History page
        page.goto(server.url + "/fabrics/demo/?focus=node:leaf05")
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        link = page.locator("a.ibweb-detail-switch-history")
        poll(page, "!document.querySelector('a.ibweb-detail-switch-history').hidden", 30)
        assert link.get_attribute("href") == "/fabrics/demo/history/?range=1h&switch=leaf05"
        link.click()
        page.wait_for_url(server.url + "/fabrics/demo/history/?range=1h&switch=leaf05")
        poll(page, f"{SWITCH}.dataset.state === 'drawn'", 30)
        api = server.get_json("/api/fabrics/fabrics/demo/nodes/leaf05/tsdb/?series=utilization")
        canvas = page.locator("#history-switch-strip")
        assert int(canvas.get_attribute("data-ports")) == len(api["ports"]) > 1
        assert int(canvas.get_attribute("data-cells")) > 0
        assert page.locator("#history-switch-ports tbody tr").count() == len(api["ports"])
        assert page.locator("#history-switch-note").inner_text().startswith("leaf05: ")
        assert axe_violations(page) == []

        # the range picker: the strip asks again over 6 hours
        with page.expect_response(lambda r: "/nodes/leaf05/tsdb/" in r.url) as got:
            page.get_by_role("button", name="Last 6 h").click()
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(got.value.url).query)
        assert float(q["end"][0]) - float(q["start"][0]) == pytest.approx(6 * 3600, abs=1)
        poll(page, f"{SWITCH}.dataset.state === 'drawn'", 30)

        # another series, kept in the address; a port of the switch charted below
        page.locator("#history-switch select[name=series]").select_option("xmit_wait_per_s")
        page.locator("#history-switch").get_by_role("button", name="Show").click()
        poll(page, f"{SWITCH}.dataset.state === 'drawn' && location.search.includes('switch_series=xmit_wait_per_s')",
             30)
        row = page.locator("#history-switch-ports tbody tr").first
        port = int(row.get_attribute("data-port"))
        row.get_by_role("button").click()
        poll(page, DRAWN.format(card=CARD.format(node="leaf05", port=port)), 30)
        assert f"leaf05:{port}" in urllib.parse.unquote(page.url)
        assert page.errors == []
