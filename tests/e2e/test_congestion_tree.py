"""The credit flow control model's congestion tree on the map, and the jobs table's spreading, in real headless
Chromium (issue 41)."""

import pytest

from tests.support.browser import chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

#: 16 hosts, every one sending at link rate to a random peer beside an all-to-all: congestion trees every tick.
SPEC = {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8, "levels": 2, "speed": "NDR"},
        "jobs": [{"name": "a2a", "tenant": "acme", "hosts": 12, "pattern": "all_to_all", "compute_s": 0.1,
                  "placement": "scattered"}],
        "background": {"fraction": 1.0, "gbps": 400}, "seed": 3}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    fabric = {"name": "Credit", "slug": "credit", "spec": SPEC, "routing_engine": "ftree", "congestion_model": "credit"}
    with running_server(tmp_path_factory.mktemp("e2e-credit"), fabrics=[fabric]) as srv:
        yield srv


def test_the_map_draws_the_congestion_tree_with_its_legend_and_the_jobs_spreading(server):
    with chromium_page(signed_in=server) as page:
        page.goto(server.url + "/fabrics/credit/")
        poll(page, "window.ibweb && window.ibweb.ready === true", 60)
        tree = poll(page, "window.ibweb.congestionTree.drawn.roots > 0 && window.ibweb.congestionTree", 30)
        assert tree["drawn"]["roots"] == len(tree["roots"]) and tree["drawn"]["held"] == len(tree["held"]) > 0
        legend = page.locator(".ibweb-legend-tree").text_content()
        assert "congestion root" in legend and "held back (victim)" in legend
        assert "congestion root" in page.locator("canvas[aria-label^='Fabric map']").get_attribute("aria-label")
        assert page.locator(".ibweb-legend-tree").get_attribute("display") is None
        poll(page, "document.querySelector('.ibweb-col-spreading') !== null", 15)
        page.goto(server.url + "/fabrics/demo/")  # max-min: no tree, no keys for it, no spreading column
        poll(page, "window.ibweb && window.ibweb.ready === true", 60)
        assert page.evaluate("window.ibweb.congestionTree") == {"drawn": {"roots": 0, "held": 0}, "roots": [],
                                                                 "held": []}
        assert page.locator(".ibweb-legend-tree").get_attribute("display") == "none"
        assert page.evaluate("document.querySelector('.ibweb-col-spreading')") is None
        assert page.errors == [] and page.console_errors == []
