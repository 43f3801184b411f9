"""The dashboard works under its content security policy (issue 10)."""

import pytest

from tests.support.browser import chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser


def test_dashboard_runs_under_the_content_security_policy(tmp_path):
    with running_server(tmp_path) as server, chromium_page(bypass_csp=False) as page:
        response = page.goto(server.url + "/fabrics/demo/")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        poll(page, "window.ibweb && window.ibweb.ready === true")
        seq = page.evaluate("window.ibweb.seq")
        poll(page, f"window.ibweb.seq > {seq}", timeout_s=10)
        violations = [m for m in page.console_errors if "Content Security Policy" in m]
        assert violations == [] and page.errors == []
