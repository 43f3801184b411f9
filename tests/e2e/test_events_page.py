"""The events and alerts page in Chromium: filter, acknowledge, comment, open on the map, tenant rules, axe
(issue 18)."""

from datetime import UTC, datetime

import pytest

from tests.e2e.pages import log_in, make_users, manage_shell, shot, tab_to
from tests.support.browser import axe_violations, chromium_page, horizontal_overflow, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

#: Alerts recorded as the runner's signal records them: a port error on a host of globex (not acme) raised for
#: three ticks, an isolation of acme's llama-70b, a switch cable down, and failed sweeps; prints the host and link.
SEED = """
from datetime import UTC, datetime, timedelta
from django.db import transaction
from fabric_engine.scenario import build_fabric
from ibweb.events.recorder import EventRecorder
from ibweb.fabrics.models import Fabric
from ibweb.tenancy.models import PartitionMember
demo = Fabric.objects.get(slug='demo')
f = build_fabric(demo.spec['topology'])
acme = set(PartitionMember.objects.filter(partition__name='acme-jobs').values_list('guid', flat=True))
guid = PartitionMember.objects.filter(partition__name='globex-jobs').exclude(guid__in=acme).first().guid
node = f.node(int(guid, 16))
host, link = str(f.node_name[node]), int(f.out_link(node, 1))
now = datetime.now(tz=UTC) - timedelta(minutes=5)
print(host, link, int(now.timestamp()))
alerts = [
    {'kind': 'errors', 'severity': 'critical', 'counter': 'SymbolErrorCounter', 'link': link, 'port': f'{host} port 1',
     'rate_per_min': 140.0, 'message': f'{host} port 1: SymbolErrorCounter at 140.0/min (threshold 10/min)'},
    {'kind': 'isolation', 'job': 'llama-70b', 'partition': 'acme-jobs', 'reason': 'not-in-partition', 'flows': 12},
    {'kind': 'link_down', 'severity': 'critical', 'a': 'leaf02 port 40', 'b': 'spine08 port 2', 'link': -1,
     'message': 'leaf02 port 40 - spine08 port 2 down'},
    {'kind': 'sweep_failures', 'severity': 'warning', 'count': 2, 'message': '2 perfquery calls failed'},
]
jobs = [{'id': 'llama-70b', 'tenant': 'acme'}, {'id': 'vit-huge', 'tenant': 'globex'}]
rec = EventRecorder(demo.pk)
with transaction.atomic():  # all or nothing: manage_shell runs it again if the server held the lock
    rec.apply(alerts, [], seq=100, t=now.timestamp(), fabric=f, jobs=jobs)
    rec.apply([], alerts[:1], seq=103, t=(now + timedelta(seconds=3)).timestamp(), fabric=f, jobs=jobs)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("events")
    with running_server(tmp) as srv:
        make_users(tmp)
        host, link, seeded = manage_shell(tmp, SEED).split()[-3:]
        srv.host, srv.link, srv.seeded = host, int(link), int(seeded)
        yield srv


def test_operator_filters_acknowledges_comments_and_opens_the_map(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "op")
        page.goto(server.url + "/fabrics/demo/events/")
        rows = page.locator("table.events tbody tr[data-event]")
        assert rows.filter(has_text="SymbolErrorCounter").count() == 1
        lasted = rows.filter(has_text="SymbolErrorCounter").locator("td.num")
        assert lasted.inner_text() == "3 s" and lasted.get_attribute("title") == "3 ticks", "three ticks, one row"
        assert rows.filter(has_text="SymbolErrorCounter").get_by_text("cleared").count() == 1
        page.get_by_label("Critical").check()
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url("**severity=critical**")
        assert rows.count() == 3 and rows.filter(has_text="sweep").count() == 0
        assert horizontal_overflow(page) == 0
        assert axe_violations(page) == []
        shot(page, "events.png")

        row = rows.filter(has_text="SymbolErrorCounter")
        row.get_by_role("button", name="Acknowledge").click()
        page.wait_for_url("**severity=critical**")
        assert "acknowledged" in page.locator("ul.messages").inner_text()
        row = rows.filter(has_text="SymbolErrorCounter")
        assert "op," in row.inner_text() and row.get_by_role("button", name="Reopen").count() == 1
        assert row.locator("details[open]").count() == 1, "back at the event, its comments open"
        row.get_by_label("Comment on event").fill("reseated the cable")
        row.get_by_role("button", name="Add comment").click()
        page.wait_for_url("**severity=critical*#event-*")
        assert "reseated the cable" in rows.filter(has_text="SymbolErrorCounter").inner_text(), "its comments open"
        assert page.errors == [] and page.console_errors == []

        rows.filter(has_text="SymbolErrorCounter").get_by_role("link", name="on the live map").click()
        page.wait_for_url(f"**/fabrics/demo/?focus=link:{server.link}")
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        cable = server.link % 1072  # the demo's cables
        assert poll(page, f"window.ibweb.detail.cable === {cable} && window.ibweb.highlight")["kind"] == "focus"
        assert page.errors == [] and page.console_errors == []


def test_operator_filters_by_kind_tenant_and_time_and_a_bad_time_is_named(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "op")
        page.goto(server.url + "/fabrics/demo/events/")
        rows = page.locator("table.events tbody tr[data-event]")
        page.get_by_label("Kind").select_option("isolation")
        page.get_by_label("Tenant").select_option("acme")
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url("**kind=isolation**")
        assert "tenant=acme" in page.url and rows.count() >= 1
        assert all("llama-70b" in text for text in rows.all_inner_texts())

        # first seen before a minute after the seeded events: those four only, none the running server raised
        until = datetime.fromtimestamp(server.seeded + 60, tz=UTC).strftime("%Y-%m-%dT%H:%MZ")
        page.goto(server.url + "/fabrics/demo/events/")
        page.get_by_label("First seen before").fill(until)
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url("**until=**")
        assert rows.count() == 4 and rows.filter(has_text="sweep").count() == 1
        page.get_by_label("Seen since").fill("last tuesday")
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url("**since=last**")
        assert "neither a date-time" in page.locator("#since-error").inner_text()
        assert page.get_by_label("Seen since").get_attribute("aria-invalid") == "true"
        assert axe_violations(page) == [] and horizontal_overflow(page) == 0
        assert page.errors == [] and page.console_errors == []


def test_keyboard_alone_acknowledges_and_comments(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "op")
        page.goto(server.url + "/fabrics/demo/events/?kind=link_down")
        pk = page.locator("table.events tbody tr[data-event]").filter(has_text="leaf02 port 40").get_attribute(
            "data-event")
        row = f'table.events tr[data-event="{pk}"]'
        tab_to(page, f"{row} button[aria-label^=Acknowledge]", 300)
        page.keyboard.press("Enter")
        page.wait_for_url(f"**#event-{pk}")
        assert "acknowledged" in page.locator("ul.messages").inner_text()
        assert "op," in page.locator(row).inner_text()
        assert page.locator(f"{row} details[open]").count() == 1, "back at the event, its comments open"
        tab_to(page, f"{row} summary", 300)
        page.keyboard.press("Enter")  # closes them, and Enter again opens them
        assert page.locator(f"{row} details[open]").count() == 0
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == f"comment-{pk}"
        page.keyboard.type("spine08 port 2 replaced")
        page.keyboard.press("Tab")
        with page.expect_navigation():  # the URL already ends in #event-pk: wait for the post's page itself
            page.keyboard.press("Enter")
        assert "spine08 port 2 replaced" in page.locator(row).inner_text()
        assert page.errors == [] and page.console_errors == []


def test_the_page_refreshes_itself_and_keeps_an_open_comment_box(server):
    with chromium_page({"width": 1600, "height": 1000}) as page:
        log_in(page, server, "op")
        page.goto(server.url + "/fabrics/demo/events/")
        page.locator("table.events tbody tr[data-event] summary").first.click()
        page.evaluate("() => window.dispatchEvent(new Event('ibweb:refresh-events'))")
        poll(page, "document.querySelector('[data-page=events]').dataset.refreshed >= 1", 20)
        assert page.locator("table.events details[open]").count() == 1
        # a comment typed and not sent, focus on its button: the refresh waits (it would drop the text)
        box = page.locator("table.events details[open] textarea")
        box.fill("half a sentence")
        box.press("Tab")
        started = page.evaluate("""() => {
            window.dispatchEvent(new Event('ibweb:refresh-events'));
            return document.querySelector('#event-table').getAttribute('aria-busy');
        }""")
        assert started != "true" and box.input_value() == "half a sentence"
        page.locator("h1").first.click()  # focus out of the table: the draft alone still holds the refresh
        assert page.evaluate("""() => {
            window.dispatchEvent(new Event('ibweb:refresh-events'));
            return document.querySelector('#event-table').getAttribute('aria-busy');
        }""") != "true"
        box.fill("")
        assert page.evaluate("""() => {
            document.activeElement.blur();
            window.dispatchEvent(new Event('ibweb:refresh-events'));
            return document.querySelector('#event-table').getAttribute('aria-busy');
        }""") == "true", "nothing typed, no focus in the table: it refreshes"
        assert page.errors == [] and page.console_errors == []


def test_tenant_user_sees_their_events_and_no_other_tenant(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "ann")
        page.goto(server.url + "/fabrics/demo/events/")
        text = page.locator("main").inner_text()
        assert "llama-70b" in text and "leaf02 port 40" in text
        assert server.host not in text and "host-" in text, "a host of globex only: its name is hidden"
        assert "vit-huge" not in text and "globex" not in text.lower()
        assert page.get_by_role("button", name="Acknowledge").count() == 0
        assert axe_violations(page) == [] and horizontal_overflow(page) == 0
        assert page.errors == [] and page.console_errors == []
