"""The fabrics overview in Chromium: a card per fabric that follows its engine, axe, 1280 px (issue 18)."""

import json
import urllib.request

import pytest

from tests.e2e.pages import log_in, make_users, manage_shell, shot
from tests.support.browser import axe_violations, chromium_page, horizontal_overflow, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

SMALL = {"name": "Lab: 64-GPU fat tree", "slug": "lab", "spec": {"topology": {"generator": "fat_tree", "hosts": 64,
                                                                             "radix": 16}}}

TOKEN = """
from ibweb.accounts.models import ApiToken
from django.contrib.auth.models import User
print(ApiToken.issue(User.objects.get(username='root'), 'e2e')[1])
"""
#: Records every state a card shows (and its progress line while starting) from the moment the page loads.
WATCH = """() => { window.seen = []; const note = (card) => window.seen.push({slug: card.dataset.slug,
  state: card.dataset.state, progress: card.querySelector('[data-field=progress]').textContent,
  bar: !card.querySelector('.card-progress').hidden, t: Date.now()});
  document.querySelectorAll('.fabric-card').forEach(note);
  new MutationObserver((records) => records.forEach((r) => note(r.target.closest('.fabric-card'))))
    .observe(document.querySelector('.fabric-cards'), {attributes: true, subtree: true,
                                                       attributeFilter: ['data-state']}); }"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("overview")
    with running_server(tmp, fabrics=[SMALL]) as srv:
        make_users(tmp)
        srv.token = manage_shell(tmp, TOKEN).split()[-1]
        yield srv


def test_cards_follow_every_fabric_live(server):
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "op")
        cards = page.locator(".fabric-card")
        assert cards.count() == 2
        demo = page.locator(".fabric-card[data-slug=demo]")
        poll(page, "document.querySelector('.fabric-card[data-slug=demo]').dataset.state === 'live'", 60)
        seq = int(poll(page, "document.querySelector('.fabric-card[data-slug=demo]').dataset.seq"))
        poll(page, f"Number(document.querySelector('.fabric-card[data-slug=demo]').dataset.seq) > {seq}", 20)
        assert demo.locator("[data-field=throughput]").inner_text().endswith("b/s")
        # the card follows the engine's ticks: its throughput text changes as the jobs' phases do
        first = demo.locator("[data-field=throughput]").inner_text()
        changed = poll(page, "(() => { const t = document.querySelector('.fabric-card[data-slug=demo] "
                             f"[data-field=throughput]').textContent; return t !== {json.dumps(first)} && t; }})()",
                       30)
        assert changed.endswith("b/s") and int(demo.get_attribute("data-seq")) > seq
        assert " → " in demo.locator("[data-field=hottest]").inner_text()
        assert "520 hosts" in demo.locator("[data-field=size]").inner_text()
        poll(page, "document.querySelector('.fabric-card[data-slug=lab]').dataset.state === 'live'", 60)
        assert horizontal_overflow(page) == 0
        assert axe_violations(page) == []
        shot(page, "overview.png")
        demo.get_by_role("link", name="Events").click()
        page.wait_for_url("**/fabrics/demo/events/")
        assert page.errors == [] and page.console_errors == []


def test_a_new_fabric_card_shows_its_engine_starting_with_progress_then_live(server):
    # DFSSSP takes seconds on 2,048 hosts (minhop a tenth of one): the card shows the start between its refreshes
    body = {"name": "Lab: 2,048-GPU fat tree", "slug": "lab-2k", "routing_engine": "dfsssp",
            "spec": {"topology": {"generator": "fat_tree", "hosts": 2048, "radix": 64}}}
    request = urllib.request.Request(f"{server.url}/api/fabrics/fabrics/", data=json.dumps(body).encode(),
                                     method="POST", headers={"Authorization": f"Token {server.token}",
                                                             "Content-Type": "application/json"})
    with chromium_page({"width": 1280, "height": 900}) as page:
        log_in(page, server, "op")
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 201
        page.goto(server.url + "/")
        page.evaluate(WATCH)
        poll(page, "document.querySelector('.fabric-card[data-slug=lab-2k]').dataset.state === 'live'", 120)
        seen = [s for s in page.evaluate("window.seen") if s["slug"] == "lab-2k"]
        starting = [s for s in seen if s["state"] == "starting"]
        assert starting, f"the card never showed its engine starting: {seen}"
        assert all(s["bar"] for s in starting) and any(s["progress"] for s in starting), starting
        card = page.locator(".fabric-card[data-slug=lab-2k]")
        assert card.locator(".card-progress").is_hidden() and "2,048 hosts" in card.inner_text()
        assert page.errors == [] and page.console_errors == []
