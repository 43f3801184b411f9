"""The map's Health overlay and the port panel's link health in real headless Chromium (issue 37).

The demo runs a spine module hot from the start (``spine07`` port 12, a warning); grading every second shows it
at once.
"""

import pytest

from fabric_engine.scenario import DEMO_SPEC, build_fabric
from tests.support.browser import chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

DEMO = build_fabric(DEMO_SPEC["topology"])
HOT = ("spine07", 12)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("e2e-health"), extra_env={"IBWEB_HEALTH_INTERVAL_S": "1"}) as srv:
        yield srv


def hot_listed(server) -> dict | None:
    """The report's entry of the hot module's port, None while there is no report or it is not listed yet."""
    try:
        report = server.get_json("/api/fabrics/fabrics/demo/health/")
    except OSError:  # 404 before the first grading (urllib's HTTPError)
        return None
    return next((e for e in report["worst"] if (e["node"], e["port"]) == HOT), None)


def test_health_overlay_colours_the_hot_module_cable_and_the_port_panel_shows_it(server):
    node = DEMO.node(HOT[0])
    cable = DEMO.out_link(node, HOT[1]) % DEMO.num_links
    entry = poll_api(server)
    assert entry["grade"] == "warning" and entry["module"]["status"] == "warning", entry
    with chromium_page(signed_in=server) as page:
        page.goto(server.url + "/fabrics/demo/")
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        assert page.evaluate("window.ibweb.health.on") is False
        page.get_by_role("button", name="Health", exact=True).click()
        health = poll(page, f"window.ibweb.health.cables.some(([c, g]) => c === {cable} && g === 'warning')"
                            " && window.ibweb.health", 15)
        assert health["on"] is True
        assert {"node": node, "cable": cable, "kind": "hot"} in health["marks"]
        legend = page.locator(".ibweb-health-legend").inner_text()
        assert "warning (" in legend and "error (" in legend and "module hot" in legend
        assert "other cables: normal or not reported" in legend and "worst " in legend
        warning = page.evaluate("getComputedStyle(document.querySelector('.ibweb-health-line:nth-child(2)'))"
                                ".getPropertyValue('--key')").strip()
        poll(page, f"window.ibweb.overlayColorOf({cable}) === '{warning}'", 5)
        point = page.evaluate(f"window.ibweb.linkAt({cable})")
        page.mouse.click(point["x"], point["y"])
        state = poll(page, f"window.ibweb.detail.cable === {cable} && window.ibweb.detail.health.length"
                           " && window.ibweb.detail", 10)
        (end,) = [s for s in state["health"] if s["end"] == f"{HOT[0]} port {HOT[1]}"]
        rows = {label: value for label, value, _ in end["rows"]}
        assert rows["grade"].startswith("warning") and "module warning" in rows["grade"]
        assert rows["module"].endswith(f"(warning {entry['module']['temperature_warning_c']:g} °C, "
                                       f"alarm {entry['module']['temperature_alarm_c']:g} °C)"), rows["module"]
        assert "°C" in rows["module"].split(" (")[0]
        summary = page.locator(".ibweb-detail-health summary")
        assert summary.inner_text().startswith(f"Link health: {HOT[0]} port {HOT[1]}: warning (module warning")
        summary.click()  # folded for a warning: room for the chart
        panel = page.locator(".ibweb-detail-health").inner_text()
        assert "°C (warning" in panel and "raw BER" in panel, panel
        page.get_by_role("button", name="Health", exact=True).click()
        poll(page, f"window.ibweb.health.on === false && window.ibweb.overlayColorOf({cable}) === null", 5)
        assert page.errors == [] and page.console_errors == []


def poll_api(server, timeout_s: float = 20.0) -> dict:
    """The hot module's report entry, once the health publisher has graded it."""
    import time

    deadline = time.monotonic() + timeout_s
    while (entry := hot_listed(server)) is None:
        assert time.monotonic() < deadline, "the hot module never came in the health report"
        time.sleep(0.3)
    return entry
