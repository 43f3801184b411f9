"""The dashboard at 1280 and 1600 px: jobs table headers and numbers whole, no page overflow, no 404s, axe-core
(issue 18)."""

import pytest

from tests.support.browser import axe_violations, chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

#: Cells whose content does not fit their box (ignoring text columns that may truncate with an ellipsis).
CLIPPED = """() => [...document.querySelectorAll('.ibweb-jobs-table th, .ibweb-jobs-table td.ibweb-num')]
  .filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.textContent)"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("fit")) as srv:
        yield srv


@pytest.mark.parametrize("width", [1280, 1600])
def test_jobs_table_shows_whole_numbers_and_headers_with_units(server, width):
    with chromium_page({"width": width, "height": 900}, signed_in=server) as page:
        page.goto(server.url + "/fabrics/demo/")
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        poll(page, "document.querySelectorAll('.ibweb-jobs-table tbody tr').length === 8")
        poll(page, "[...document.querySelectorAll('.ibweb-jobs-table td.ibweb-num')]"
                   ".some((c) => c.textContent.length >= 5)")
        assert page.evaluate(CLIPPED) == []
        heads = page.eval_on_selector_all(".ibweb-jobs-table th", "hs => hs.map(h => h.textContent)")
        assert heads[:6] == ["Job", "Tenant", "Hosts", "DemandGb/s", "AchievedGb/s", "Slowdown×"]
        rates = page.eval_on_selector_all(".ibweb-jobs-table tbody tr:first-child td.ibweb-num",
                                          "cs => cs.map(c => c.textContent)")
        assert all("b/s" not in r for r in rates), "the unit is in the header, not in every cell"
        size = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        assert size == [width, 900], "the dashboard fills the window without scrolling it"
        assert axe_violations(page) == []
        assert page.errors == [] and page.console_errors == []
