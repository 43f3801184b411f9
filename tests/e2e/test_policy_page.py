"""The tenants and policy page in Chromium: the summary on the first screen, member search, a change previewed
with the jobs it cuts, applied and undone; a tenant user's view; axe (issue 18)."""

import pytest

from tests.e2e.pages import log_in, make_users, shot, tab_to
from tests.support.browser import axe_violations, chromium_page, horizontal_overflow, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("policy")
    with running_server(tmp) as srv:
        make_users(tmp)
        yield srv


def member_count(page) -> int:
    """The member count the open partition's pager shows ("N members ...")."""
    return int(page.locator(".members-list .pager").first.inner_text().split()[0])


def test_summary_fits_the_first_screen_and_search_answers_as_you_type(server):
    with chromium_page({"width": 1600, "height": 1000}) as page:
        log_in(page, server, "op")
        page.goto(server.url + "/tenancy/fabrics/demo/")
        summary = page.locator("table.summary").bounding_box()
        assert summary["x"] >= 0 and summary["y"] >= 0, "the summary starts inside the window"
        assert summary["x"] + summary["width"] <= 1600 and summary["y"] + summary["height"] <= 1000, \
            "the summary is on the first screen"
        rows = page.locator("table.summary tbody.tenant-rows")
        assert rows.count() == 4 and "Acme" in rows.first.inner_text()
        assert "of 3" in rows.first.inner_text() and "Gb/s" in rows.first.inner_text()
        shot(page, "policy.png")
        assert axe_violations(page) == []
        page.get_by_label("Search by host, GUID or leaf").fill("gpu0003")
        poll(page, "document.querySelector('[data-page=policy]').dataset.searches >= 1")
        assert page.locator(".member-table tbody tr").count() == 1
        assert "gpu0003" in page.locator(".member-table tbody").inner_text() and "q=gpu0003" in page.url
        page.set_viewport_size({"width": 1280, "height": 900})
        assert horizontal_overflow(page) == 0
        assert page.errors == [] and page.console_errors == []


def test_policy_admin_previews_a_change_that_cuts_a_job_applies_and_undoes_it(server):
    with chromium_page({"width": 1600, "height": 1000}) as page:
        log_in(page, server, "pa")
        page.goto(server.url + "/tenancy/fabrics/demo/?partition=0x0101")
        change = page.locator("#change")
        members = member_count(page)
        change.get_by_label("Remove").check()
        change.get_by_label("A job's hosts").select_option("moe-8x22b")
        change.get_by_role("button", name="Preview effect").click()
        effect = page.locator(".effect")
        effect.wait_for()
        text = effect.inner_text()
        assert "Preview: remove 64 ports of acme-jobs" in text and "lose reachability" in text
        assert "moe-8x22b (acme): 64 of 64 hosts lose peers" in text
        assert axe_violations(page) == [] and horizontal_overflow(page) == 0
        change.screenshot(path=str(shot.__globals__["SCREENSHOTS"] / "policy-preview.png"))
        change.get_by_role("button", name="Apply anyway").click()
        page.wait_for_url("**partition=0x0101#members")
        assert "64 members removed" in page.locator("ul.messages").inner_text()
        assert member_count(page) == members - 64

        page.locator(".history tbody tr").first.get_by_role("button", name="Undo").click()
        effect.wait_for()
        assert "Preview: restore" in effect.inner_text() and "No host loses a peer" in effect.inner_text()
        page.get_by_role("button", name="Apply", exact=True).click()
        page.wait_for_url("**partition=0x0101#members")
        assert member_count(page) == members
        assert page.errors == [] and page.console_errors == []


def test_policy_admin_adds_hosts_by_pattern_with_a_preview_and_undoes_it_from_the_audit_log(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "pa")
        page.goto(server.url + "/tenancy/fabrics/demo/?partition=0x0102")
        change = page.locator("#change")
        members = member_count(page)
        change.get_by_label("Add").check()
        change.get_by_label("Host names").fill("gpu050[0-3]")
        change.get_by_role("button", name="Preview effect").click()
        effect = page.locator(".effect")
        effect.wait_for()
        heading = effect.locator("h4").inner_text()
        added = int(heading.split()[2])
        assert heading.startswith("Preview: add ") and "of globex-jobs" in heading and 1 <= added <= 4
        assert "No host loses a peer" in effect.inner_text() and "gain" in effect.inner_text()
        assert member_count(page) == members, "not yet"
        assert axe_violations(page) == [] and horizontal_overflow(page) == 0
        change.get_by_role("button", name="Apply", exact=True).click()
        page.wait_for_url("**partition=0x0102#members")
        assert f"{added} members added or changed" in page.locator("ul.messages").inner_text()
        assert member_count(page) == members + added
        page.get_by_label("Search by host, GUID or leaf").fill("gpu0501")
        page.get_by_role("button", name="Search").click()
        page.wait_for_url("**q=gpu0501**")
        assert "gpu0501" in page.locator(".member-table tbody").inner_text()

        page.locator(".history tbody tr").first.get_by_role("button", name="Undo").click()
        effect.wait_for()
        assert "Preview: restore" in effect.inner_text() and "lose reachability" in effect.inner_text()
        page.get_by_role("button", name="Apply anyway").click()
        page.wait_for_url("**partition=0x0102#members")
        assert member_count(page) == members
        assert page.errors == [] and page.console_errors == []


def test_tenant_user_sees_their_tenant_only(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "ann")
        page.goto(server.url + "/tenancy/fabrics/demo/")
        text = page.locator("main").inner_text()
        assert "Acme" in text and "acme-jobs" in text
        assert "Globex" not in text and "globex" not in text and "initech" not in text.lower()
        assert "Change members" not in text and "Import partitions.conf" not in text and "Recent changes" not in text
        assert axe_violations(page) == [] and horizontal_overflow(page) == 0
        assert page.errors == [] and page.console_errors == []


def test_policy_admin_sees_an_import_as_a_diff_before_importing_it(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "pa")
        page.goto(server.url + "/tenancy/fabrics/demo/?partition=0x0101")
        guid = page.locator(".member-table tbody code").first.inner_text()
        page.get_by_role("textbox", name="partitions.conf").fill(f"lab=0x0060 : {guid}=full ;\n")
        page.get_by_label("Merge").check()
        page.get_by_role("button", name="Preview the changes").click()
        preview = page.locator(".import-preview")
        preview.wait_for()
        rows = preview.locator("tbody tr")
        assert rows.count() == 1, "only the new partition changes"
        cells = rows.first.locator("td").all_inner_texts()
        assert cells[0] == "lab 0x0060" and cells[1:5] == ["created", "1", "0", "0"]
        assert "(members merged)" in preview.inner_text()
        assert page.locator("table.summary").get_by_text("lab", exact=True).count() == 0, "nothing imported yet"
        assert axe_violations(page) == [] and horizontal_overflow(page) == 0
        preview.screenshot(path=str(shot.__globals__["SCREENSHOTS"] / "policy-import.png"))
        preview.get_by_role("button", name="Import (all or nothing)").click()
        page.wait_for_url("**/tenancy/fabrics/demo/")
        assert "Imported: 1 created, 0 updated, 1 members." in page.locator("ul.messages").inner_text()
        assert page.locator("table.summary").get_by_role("link", name="lab", exact=True).count() == 1
        assert page.errors == [] and page.console_errors == []


def test_keyboard_alone_switches_partition_and_searches_members(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "op")
        page.goto(server.url + "/tenancy/fabrics/demo/")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Skip to content"
        tab_to(page, "#partition-switch")
        before = page.url
        page.keyboard.press("ArrowDown")  # the next partition in the list: the page stays while arrows move
        page.keyboard.press("ArrowDown")
        page.wait_for_timeout(500)
        assert page.url == before
        page.keyboard.press("Enter")
        page.wait_for_url("**partition=**")
        chosen = page.url.split("partition=")[1].split("#")[0].split("&")[0]
        assert page.locator("#members-title code").inner_text() == chosen
        tab_to(page, "#member-q")
        first = page.locator(".member-table tbody tr td").first.inner_text()
        page.keyboard.type(first)
        page.keyboard.press("Enter")
        page.wait_for_url(f"**q={first}**")
        assert first in page.locator(".member-table tbody").inner_text()
        assert page.errors == [] and page.console_errors == []
