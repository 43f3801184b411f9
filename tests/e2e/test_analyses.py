"""Analyses in the dashboard (issue 5): a permitted user starts an eBB run and watches its progress, then the result.

Real headless Chromium against the real server (embedded engine, Celery eager): the
POST runs the analysis in the server while the feed carries its ``progress`` messages.
"""

import os
import subprocess
import sys

import pytest

from tests.browser import chromium_page, poll
from tests.server import ROOT, running_server

pytestmark = pytest.mark.browser

PATTERNS = 10000  # about 2 s on the demo: long enough to see progress messages


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e-analyses")
    with running_server(tmp) as srv:
        env = {**os.environ, "IBWEB_VAR_DIR": str(tmp), "DATABASE_URL": f"sqlite:///{tmp / 'server.sqlite3'}"}
        code = ("from django.contrib.auth.models import Permission, User; "
                "u = User.objects.create_user('analyst', password='pw-analyst'); "
                "u.user_permissions.add(Permission.objects.get(codename='add_analysis'))")
        subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True,
                       capture_output=True)
        yield srv


def open_demo(page, server):
    page.goto(server.url + "/fabrics/demo/")
    poll(page, "window.ibweb && window.ibweb.ready === true", 30)


def test_anonymous_visitors_see_analyses_but_no_start_button(server):
    with chromium_page() as page:
        with page.expect_response(lambda r: r.request.method == "OPTIONS" and "/analyses/" in r.url) as asked:
            open_demo(page, server)
        assert "actions" not in asked.value.json()
        page.wait_for_timeout(200)  # the panel has applied the answer
        assert page.get_by_role("heading", name="Analyses").count() == 1
        assert page.locator(".ibweb-analysis-start").count() == 1
        assert not page.get_by_role("button", name="Run eBB").is_visible()
        assert page.errors == []


def test_analyst_runs_ebb_sees_progress_then_the_result(server):
    with chromium_page() as page:
        page.goto(server.url + "/accounts/login/?next=/fabrics/demo/")
        page.fill("input[name=username]", "analyst")
        page.fill("input[name=password]", "pw-analyst")
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_url("**/fabrics/demo/")
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        button = page.get_by_role("button", name="Run eBB")
        button.wait_for(state="visible", timeout=10000)
        page.evaluate("""() => {
          window.seenProgress = [];
          const list = document.querySelector('.ibweb-analysis-list');
          new MutationObserver(() => {
            const bars = list.querySelectorAll('li[data-status=running] progress');
            for (const p of bars) window.seenProgress.push(p.value);
          }).observe(list, {subtree: true, childList: true, attributes: true});
        }""")
        page.fill(".ibweb-analysis-start input[name=patterns]", str(PATTERNS))
        button.click()
        poll(page, "document.querySelector('.ibweb-analysis-list li[data-status=done]') !== null", 60)
        item = page.locator(".ibweb-analysis-list li[data-status=done]").first
        text = item.inner_text()
        assert f"{PATTERNS} bisection patterns" in text and "eBB " in text, text
        assert not item.locator("progress").is_visible()
        seen = page.evaluate("window.seenProgress")
        assert any(0 < v < 1 for v in seen), f"no progress shown while running: {seen}"
        assert seen == sorted(seen)
        # Chromium also asks for /favicon.ico, which ibweb does not serve (a console "Failed to load resource")
        assert page.errors == [] and [e for e in page.console_errors if "Failed to load resource" not in e] == []
