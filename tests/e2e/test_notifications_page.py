"""The notifications page and "Silence…" where the thing is, in Chromium against the real server (issue 39): an
operator finds the page in the site navigation, makes a channel and sends a test (its result shown, a receiver down
shown as failed), makes a rule, a silence and expires it; silences an event from the events page and a port from
the map's detail panel; a tenant's user sees neither the silence actions nor the operators' rows."""

import pytest

from tests.e2e.pages import log_in, make_users, manage_shell, shot
from tests.support.browser import axe_violations, chromium_page, horizontal_overflow, poll
from tests.support.notify_servers import WebhookReceiver, wait_for
from tests.support.server import running_server

pytestmark = pytest.mark.browser

SEED = """
from datetime import UTC, datetime, timedelta
from ibweb.events.recorder import EventRecorder
from ibweb.fabrics.models import Fabric
demo = Fabric.objects.get(slug='demo')
now = datetime.now(tz=UTC) - timedelta(minutes=2)
alert = {'kind': 'link_down', 'severity': 'critical', 'port': 'leaf03 port 17', 'message': 'leaf03 port 17 is down'}
EventRecorder(demo.pk).apply([alert], [], seq=100, t=now.timestamp())
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("notify")
    with running_server(tmp) as srv:
        make_users(tmp)
        manage_shell(tmp, SEED)
        yield srv


def test_operator_manages_channels_rules_and_silences(server):
    receiver = WebhookReceiver().start()
    try:
        with chromium_page({"width": 1280, "height": 900}) as page:
            log_in(page, server, "op")
            page.get_by_role("navigation", name="Site").get_by_role("link", name="Notifications").click()
            page.wait_for_url("**/notifications/")
            poll(page, "document.querySelector('[data-page=notifications]') !== null")
            page.locator("details.new-channel > summary").click()
            page.locator("#new-ch-name").fill("noc hook")
            page.locator("#new-ch-kind").select_option("webhook")
            page.locator("#new-ch-config").fill('{"template": "ibweb"}')
            page.get_by_label("Secrets (JSON: written, never shown)").fill(f'{{"url": "{receiver.url}"}}')
            page.get_by_role("button", name="Create channel").click()
            row = page.locator("table.notify-channels tr[data-channel]").filter(has_text="noc hook")
            row.wait_for()
            assert receiver.url not in page.content()  # a webhook's URL is a secret
            row.get_by_role("button", name="Send a test through noc hook").click()
            poll(page, "(document.querySelector('table.notify-channels output.test-result') || {}).textContent"
                       " && document.querySelector('table.notify-channels output.test-result').textContent"
                       ".startsWith('sent')")
            assert wait_for(lambda: receiver.bodies(), what="the test")[0]["notices"][0]["kind"] == "test"
            delivery = page.locator("table.notify-deliveries tr[data-delivery]").first
            delivery.wait_for()  # the page's tables read again after the test
            assert delivery.get_attribute("data-state") == "sent" and "1 attempt" in delivery.inner_text()

            page.locator("details.new-rule > summary").click()
            page.locator("#new-rule-name").fill("critical to the noc")
            page.get_by_label("Least severity").select_option("critical")
            page.get_by_label("noc hook (webhook)").check()
            page.get_by_role("button", name="Create rule").click()
            rule = page.locator("table.notify-rules tr[data-rule]").filter(has_text="critical to the noc")
            rule.wait_for()
            rule.get_by_role("button", name="Disable rule critical to the noc").click()
            page.locator("table.notify-rules tr[data-rule]").filter(has_text="disabled").wait_for()

            page.locator("details.new-silence > summary").click()
            page.locator("#new-silence-switches").fill("leaf01, leaf02")
            page.locator("#new-silence-reason").fill("leaf firmware")
            page.get_by_role("button", name="Create silence").click()
            silence = page.locator("table.notify-silences tr[data-silence]").filter(has_text="leaf firmware")
            silence.wait_for()
            assert silence.get_attribute("data-state") == "active" and "op" in silence.inner_text()
            assert horizontal_overflow(page) == 0
            assert axe_violations(page) == []
            shot(page, "notifications.png", full_page=True)
            silence.get_by_role("button", name="Expire").click()
            poll(page, "document.querySelector('table.notify-silences tr[data-silence]').dataset.state === 'ended'")

            receiver.stop()  # the receiver down: the test says so
            page.locator("table.notify-channels tr[data-channel]").filter(has_text="noc hook").get_by_role(
                "button", name="Send a test through noc hook").click()
            poll(page, "(document.querySelector('table.notify-channels output.test-result') || {}).textContent"
                       " && document.querySelector('table.notify-channels output.test-result').textContent"
                       ".startsWith('failed')")
            assert page.errors == [] and page.console_errors == []
    finally:
        receiver.stop()


def test_silence_from_an_event_and_from_the_map(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "op")
        page.goto(server.url + "/fabrics/demo/events/?kind=link_down")
        row = page.locator("table.events tbody tr[data-event]").filter(has_text="leaf03 port 17")
        row.get_by_text("Silence…").click()
        form = row.locator("form.silence-form")
        form.wait_for()
        assert "ports: leaf03 port 17" in form.inner_text() and "kinds: link_down" in form.inner_text()
        form.get_by_label("reason").fill("cable reseated")
        form.get_by_role("button", name="Silence").click()
        poll(page, "(document.querySelector('form.silence-form output') || {}).textContent"
                   " && document.querySelector('form.silence-form output').textContent.startsWith('silenced until')")
        assert "by op" in form.locator("output").inner_text()
        assert page.errors == [] and page.console_errors == []

        page.goto(server.url + "/fabrics/demo/?focus=link:0")
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        buttons = page.locator(".ibweb-silence button")
        buttons.first.wait_for()
        labels = buttons.all_inner_texts()
        assert any(t.startswith("Silence port ") for t in labels) and any(t.startswith("Silence switch ")
                                                                          for t in labels)
        buttons.first.click()
        box = page.locator(".ibweb-silence form.silence-form")
        box.get_by_label("reason").fill("optics swap")
        box.get_by_label("reason").press("Enter")  # the panel's foot may lie under the side panels
        poll(page, "(document.querySelector('.ibweb-silence output') || {}).textContent"
                   " && document.querySelector('.ibweb-silence output').textContent.startsWith('silenced until')")
        assert page.errors == [] and page.console_errors == []
        page.goto(server.url + "/notifications/")
        reasons = page.locator("table.notify-silences").inner_text()
        assert "cable reseated" in reasons and "optics swap" in reasons


def test_a_tenant_user_sees_no_silence_action_and_only_its_rows(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "ann")
        page.goto(server.url + "/notifications/")
        text = page.locator("main").inner_text()
        assert "noc hook" not in text and "Silences and maintenance windows" not in text
        page.goto(server.url + "/fabrics/demo/events/")
        page.locator("table.events").wait_for()
        page.wait_for_timeout(500)  # the page asked whether it may silence
        assert page.get_by_text("Silence…").count() == 0
        assert page.errors == [] and page.console_errors == []


def test_an_events_silence_box_keeps_its_state_when_the_list_refreshes(server):
    """The events list refreshes itself (its rows replaced): an event's "Silence…" box stays as it was (open, what
    was chosen and typed, its answer), once, and the row's comment box is not opened in its place."""
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "op")
        page.goto(server.url + "/fabrics/demo/events/?kind=link_down")
        row = page.locator("table.events tbody tr[data-event]").filter(has_text="leaf03 port 17")
        summary = row.get_by_text("Silence…")
        summary.click()
        summary.click()  # closed and opened again before the draft came: one form
        summary.click()
        form = row.locator("form.silence-form")
        form.wait_for()
        form.get_by_label("for").select_option("8")
        form.get_by_label("reason").fill("optics on order")
        page.locator("h1").first.click()  # focus out of the table: nothing holds the refresh

        def refresh(n: int) -> None:
            page.evaluate("() => window.dispatchEvent(new Event('ibweb:refresh-events'))")
            poll(page, f"Number(document.querySelector('[data-page=events]').dataset.refreshed) >= {n}", 20)
            page.wait_for_timeout(200)  # the rows' boxes put back

        refresh(1)
        row = page.locator("table.events tbody tr[data-event]").filter(has_text="leaf03 port 17")
        assert row.locator("details.silence-action").count() == 1
        assert row.locator("details.silence-action[open]").count() == 1, "the silence box closed"
        assert row.locator("details:not(.silence-action)[open]").count() == 0, "the comment box opened instead"
        assert row.locator("form.silence-form").count() == 1
        form = row.locator("form.silence-form")
        assert form.get_by_label("for").input_value() == "8"
        assert form.get_by_label("reason").input_value() == "optics on order"
        form.get_by_role("button", name="Silence").click()
        poll(page, "(document.querySelector('form.silence-form output') || {}).textContent"
                   " && document.querySelector('form.silence-form output').textContent.startsWith('silenced until')")
        page.locator("h1").first.click()
        refresh(2)
        row = page.locator("table.events tbody tr[data-event]").filter(has_text="leaf03 port 17")
        assert row.locator("form.silence-form output").inner_text().startswith("silenced until")
        assert page.locator("table.events details.silence-action").count() == page.locator(
            "table.events tbody tr[data-event]").count()
        assert page.errors == [] and page.console_errors == []
