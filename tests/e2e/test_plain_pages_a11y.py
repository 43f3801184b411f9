"""Log in, the tenancy index and the admin in the site's theme: axe-core, 1280 px, no console error (issue 18)."""

import pytest

from tests.e2e.pages import log_in, make_users
from tests.support.browser import axe_violations, chromium_page, horizontal_overflow
from tests.support.server import running_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plain")
    with running_server(tmp) as srv:
        make_users(tmp)
        yield srv


def test_login_and_tenancy_index(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        page.goto(server.url + "/accounts/login/")
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(14, 18, 23)"
        assert axe_violations(page) == [] and horizontal_overflow(page) == 0
        log_in(page, server, "op")
        page.goto(server.url + "/tenancy/")
        assert axe_violations(page) == [] and horizontal_overflow(page) == 0
        assert page.errors == [] and page.console_errors == []


def test_admin_is_dark_and_its_partition_page_short(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "root")
        page.goto(server.url + "/admin/tenancy/partition/")
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(14, 18, 23)"
        page.get_by_role("link", name="acme-jobs", exact=True).click()
        assert page.evaluate("document.documentElement.scrollHeight") < 3000, "no inline row per member"
        assert "members (more than 20, so none inline)" in page.locator("#content").inner_text()
        assert page.errors == [] and page.console_errors == []
