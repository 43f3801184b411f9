"""Analyses in the dashboard (issue 5): a permitted user starts an eBB run and watches its progress, then the result.

Real headless Chromium against the real server (embedded engine, Celery eager): the
POST runs the analysis in the server while the feed carries its ``progress`` messages.
"""

import os
import subprocess
import sys

import pytest

from tests.support.browser import chromium_page, poll
from tests.support.server import ROOT, running_server

pytestmark = pytest.mark.browser

PATTERNS = 10000  # about 2 s on the demo: long enough to see progress messages


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e-analyses")
    with running_server(tmp) as srv:
        env = {**os.environ, "IBWEB_VAR_DIR": str(tmp), "DATABASE_URL": f"sqlite:///{tmp / 'server.sqlite3'}"}
        code = ("from django.contrib.auth.models import Permission, User; "
                "u = User.objects.create_user('analyst', password='pw-analyst'); "
                "u.user_permissions.add(Permission.objects.get(codename='add_analysis')); "
                "from django.contrib.auth.models import Group; "
                "o = User.objects.create_user('op', password='pw-op'); "
                "o.groups.add(Group.objects.get(name='operator')); "
                "v = User.objects.create_user('watcher', password='pw-watcher'); "
                "v.groups.add(Group.objects.get(name='viewer'))")
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
        assert page.locator(".ibweb-analysis-start").count() == 3  # eBB, the RoCE and congestion what-ifs, hidden
        assert not page.get_by_role("button", name="Run eBB").is_visible()
        assert not page.get_by_role("button", name="Run RoCE what-if").is_visible()
        assert not page.get_by_role("button", name="Run congestion what-if").is_visible()
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
        assert page.errors == [] and page.console_errors == []


def test_routing_panel_shows_the_report_of_the_fabric_routing(server):  # issue 16
    with chromium_page() as page:
        open_demo(page, server)
        assert page.get_by_role("heading", name="Routing").count() == 1
        poll(page, "document.querySelectorAll('.ibweb-routing-report li').length > 3", 30)
        text = page.locator(".ibweb-routing-report").inner_text()
        assert "Engine: " in text and "Unreachable (switch, LID) entries: 0 of " in text, text
        assert "Credit loops: " in text and "Destinations per switch port: " in text, text
        assert page.errors == [] and page.console_errors == []


@pytest.mark.parametrize(("user", "offered"), [("op", True), ("watcher", False)])
def test_an_operator_is_offered_the_start_buttons_a_viewer_not(server, user, offered):
    """The operator role (its group, as the migrations made it) may start analyses; the viewer role may not."""
    with chromium_page() as page:
        page.goto(server.url + "/accounts/login/?next=/fabrics/demo/")
        page.fill("input[name=username]", user)
        page.fill("input[name=password]", f"pw-{user}")
        with page.expect_response(lambda r: r.request.method == "OPTIONS" and "/analyses/" in r.url) as asked:
            page.click("button[type=submit], input[type=submit]")
            page.wait_for_url("**/fabrics/demo/")
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        assert ("POST" in (asked.value.json().get("actions") or {})) == offered
        page.wait_for_timeout(200)  # the panel has applied the answer
        assert page.get_by_role("button", name="Run eBB").is_visible() == offered
        assert page.errors == []


def test_operator_runs_the_congestion_whatif_and_sees_jobs_by_sides(server):  # issue 41
    with chromium_page() as page:
        page.goto(server.url + "/accounts/login/?next=/fabrics/demo/")
        page.fill("input[name=username]", "op")
        page.fill("input[name=password]", "pw-op")
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_url("**/fabrics/demo/")
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        button = page.get_by_role("button", name="Run congestion what-if")
        button.wait_for(state="visible", timeout=10000)
        page.fill(".ibweb-congestion-start input[name=vls]", "2")
        button.click()
        poll(page, "document.querySelector('.ibweb-analysis-list li[data-status=done] table') !== null", 60)
        item = page.locator(".ibweb-analysis-list li[data-status=done]").first
        text = item.inner_text()
        assert "VL separation over 2 lanes" in text and "IB congestion control: worst job" in text, text
        heads = item.locator("table.ibweb-congestion-table thead th").all_inner_texts()
        assert heads == ["job", "ideal congestion control (max-min)", "credit flow control (as configured)",
                         "VL separation (a lane per job)", "IB congestion control"], heads
        assert item.locator("table.ibweb-congestion-table tbody tr").count() > 0
        assert page.errors == [] and page.console_errors == []
