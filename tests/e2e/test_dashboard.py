"""The dashboard in real headless Chromium against the real server."""

from pathlib import Path

import pytest

from tests.browser import chromium_page
from tests.server import running_server

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("e2e")) as srv:
        yield srv


def test_fabric_list_links_to_the_demo(server):
    with chromium_page() as page:
        page.goto(server.url + "/")
        link = page.get_by_role("link", name="Demo: 512-GPU NDR fat tree")
        link.click()
        page.wait_for_url("**/fabrics/demo/")


def test_topology_draws_links_and_colors_change_between_frames(server):
    with chromium_page() as page:
        page.goto(server.url + "/fabrics/demo/")
        page.wait_for_function("window.ibweb && window.ibweb.ready === true", timeout=30000)
        assert page.evaluate("window.ibweb.drawnLinks") == 1024
        digests = {page.evaluate("window.ibweb.colorDigest()")}
        first = page.evaluate("window.ibweb.seq")
        for _ in range(4):
            seq = page.evaluate("window.ibweb.seq")
            page.wait_for_function(f"window.ibweb.seq > {seq}", timeout=10000)
            digests.add(page.evaluate("window.ibweb.colorDigest()"))
        assert page.evaluate("window.ibweb.seq") >= first + 4
        assert len(digests) > 1, "link colors never changed across frames"
        assert page.evaluate("window.ibweb.status") == "live"
        assert page.get_by_text("Hosts").count() >= 1
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "dashboard.png"))
        assert page.errors == []
