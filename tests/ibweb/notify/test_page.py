"""The notifications page and the silences made where the thing is: who sees the page and its link, what it shows
(channels, a failing one first, rules, silences, deliveries with every attempt), the draft of an event's silence,
expiring a silence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client

from ibweb.events.models import Event
from ibweb.notify.models import Attempt, Delivery, Silence
from ibweb.tenancy.models import Tenant
from tests.support.access_fixtures import role_permissions

from .helpers import Ticks, channel, lab, port_down, rule

pytestmark = pytest.mark.django_db(transaction=True)


def signed_in(name: str, role: str | None, tenant: Tenant | None = None) -> Client:
    user = User.objects.create_user(name, password="pw-" + name)
    if role:
        user.user_permissions.add(*role_permissions(role))
    if tenant is not None:
        tenant.users.add(user)
    c = Client()
    c.force_login(user)
    return c


def test_page_by_role_and_its_link():
    acme = Tenant.objects.create(slug="acme", name="Acme Corp")
    ops = channel("webhook", {"url": "http://127.0.0.1:9/hook"}, name="ops-hook")
    channel("webhook", {"url": "http://127.0.0.1:9/acme"}, name="acme-hook", tenant=acme)
    op, admin = signed_in("op", "operator"), signed_in("aa", "tenant admin", acme)
    viewer = signed_in("v", "viewer")
    page = op.get("/notifications/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "ops-hook" in text and "acme-hook" in text and 'href="/notifications/" aria-current="page"' in text
    assert "Silences and maintenance windows" in text and "New silence" in text and "Send a test" in text
    mine = admin.get("/notifications/").content.decode()
    assert "acme-hook" in mine and "ops-hook" not in mine and "Silences and maintenance" not in mine
    assert "New channel" in mine  # a tenant's admin manages its channels
    assert viewer.get("/notifications/").status_code == 403
    assert 'href="/notifications/"' not in viewer.get("/").content.decode()  # no link for who may not see it
    assert 'href="/notifications/"' in op.get("/").content.decode()
    assert Client().get("/notifications/").status_code == 302
    assert op.post("/notifications/").status_code == 405
    assert "http://127.0.0.1:9/hook" not in text  # a webhook's URL is a secret
    assert ops.secrets["url"] == "http://127.0.0.1:9/hook"


def test_page_shows_a_failing_channel_and_every_attempt():
    fabric = lab()
    hook = channel("webhook", {"url": "http://127.0.0.1:9/hook"}, name="down-hook")
    rule(hook)
    Ticks(fabric).tick([port_down("leaf01", 1)])
    d = Delivery.objects.get(channel=hook)
    assert d.state == "queued" and d.attempts == 1
    text = signed_in("op", "operator").get("/notifications/").content.decode()
    assert "Failing channels" in text and 'data-failing="' in text and "down-hook" in text
    assert f'id="delivery-{d.pk}"' in text and "1 attempt" in text and "failed" in text
    attempt = Attempt.objects.get(delivery=d)
    assert attempt.detail[:20] in text
    only = signed_in("op2", "operator").get(f"/notifications/?channel={hook.pk}&state=sent").content.decode()
    assert f'id="delivery-{d.pk}"' not in only


def test_silence_draft_of_an_event_and_expire():
    fabric = lab()
    Ticks(fabric).tick([port_down("leaf01", 3)])
    event = Event.objects.get(kind="link_down")
    op, viewer = signed_in("op", "operator"), signed_in("v", "viewer")
    assert viewer.get("/api/notify/silences/draft/").json() == {"may_create": False}
    assert signed_in("pa", "policy admin").get("/api/notify/silences/draft/").json() == {"may_create": False}
    draft = op.get(f"/api/notify/silences/draft/?event={event.pk}").json()
    assert draft["may_create"] is True
    assert draft["matchers"] == {"fabrics": ["lab"], "kinds": ["link_down"], "ports": ["leaf01 port 3"]}
    assert op.get("/api/notify/silences/draft/?event=999999").status_code == 404
    assert op.get("/api/notify/silences/draft/?event=x").status_code == 400
    now = datetime.now(tz=UTC)
    made = op.post("/api/notify/silences/", {**draft["matchers"], "starts_at": now.isoformat(),
                                             "ends_at": (now + timedelta(hours=2)).isoformat(),
                                             "reason": "recabling"}, content_type="application/json")
    assert made.status_code == 201 and made.json()["author_name"] == "op"
    sid = made.json()["id"]
    assert viewer.post(f"/api/notify/silences/{sid}/expire/").status_code == 403
    ended = op.post(f"/api/notify/silences/{sid}/expire/")
    assert ended.status_code == 200
    s = Silence.objects.get(pk=sid)
    assert s.ends_at <= datetime.now(tz=UTC) and not Silence.objects.filter(ends_at__gt=datetime.now(tz=UTC))
    later = Silence.objects.create(switches=["leaf09"], starts_at=now + timedelta(days=1),
                                   ends_at=now + timedelta(days=2), reason="window", author_name="op")
    assert op.post(f"/api/notify/silences/{later.pk}/expire/").status_code == 200
    later.refresh_from_db()
    assert later.ends_at <= datetime.now(tz=UTC) and later.starts_at <= later.ends_at  # a window cancelled
    text = op.get("/notifications/").content.decode()
    assert f'id="silence-{sid}" data-silence="{sid}" data-state="ended"' in text


def test_expire_needs_change_silence_not_add():
    """Expiring is a POST but changes the silence: ``notify.add_silence`` alone may not end one (issue 39)."""
    from django.contrib.auth.models import Permission

    now = datetime.now(tz=UTC)
    silence = Silence.objects.create(switches=["leaf01"], starts_at=now - timedelta(hours=1),
                                     ends_at=now + timedelta(hours=1), reason="maintenance", author_name="op")
    adder = User.objects.create_user("adder", password="pw-adder")
    adder.user_permissions.add(Permission.objects.get(content_type__app_label="tenancy", codename="view_all_tenants"),
                               Permission.objects.get(content_type__app_label="notify", codename="add_silence"))
    c = Client()
    c.force_login(adder)
    assert c.post(f"/api/notify/silences/{silence.pk}/expire/").status_code == 403
    silence.refresh_from_db()
    assert silence.ends_at > datetime.now(tz=UTC)  # still on
    adder.user_permissions.add(Permission.objects.get(content_type__app_label="notify", codename="change_silence"))
    c.force_login(User.objects.get(pk=adder.pk))
    assert c.post(f"/api/notify/silences/{silence.pk}/expire/").status_code == 200
    silence.refresh_from_db()
    assert silence.ends_at <= datetime.now(tz=UTC)


def _page_queries(client: Client) -> tuple[int, str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        page = client.get("/notifications/")
    assert page.status_code == 200
    return len(ctx.captured_queries), page.content.decode()


def test_page_queries_do_not_grow_with_channels_and_attempts_are_the_newest():
    """Issue 39: each channel's last delivery is read in one query for them all, and a delivery's attempts listed are
    its newest ``ATTEMPTS_SHOWN`` (the page says how many there are)."""
    from ibweb.notify.views import ATTEMPTS_SHOWN

    def failing_channel(n: int):
        ch = channel("webhook", {"url": "http://127.0.0.1:9/hook"}, name=f"hook-{n}",
                     failing_since=datetime.now(tz=UTC))
        d = Delivery.objects.create(channel=ch, key=f"k-{n}", status="firing", reason="start", group="g",
                                    detail=f"refused-{n}")
        return ch, d

    op = signed_in("op", "operator")
    failing_channel(0)
    few, text = _page_queries(op)
    assert "refused-0" in text  # the failing channel's last delivery's detail
    for n in range(1, 6):
        failing_channel(n)
    many, text = _page_queries(op)
    assert many == few and all(f"refused-{n}" in text for n in range(6))
    _, d = failing_channel(9)
    t0 = datetime.now(tz=UTC) - timedelta(hours=1)
    Attempt.objects.bulk_create([Attempt(delivery=d, at=t0 + timedelta(seconds=i), ok=False, detail=f"try-{i:02d}")
                                 for i in range(ATTEMPTS_SHOWN + 5)])
    _, text = _page_queries(op)
    row = text[text.index(f'id="delivery-{d.pk}"'):]
    row = row[:row.index("</details>")]
    assert f"{ATTEMPTS_SHOWN + 5} attempts" in row and f"(the newest {ATTEMPTS_SHOWN} shown)" in row
    shown = sorted((row.index(f"try-{i:02d}"), i) for i in range(ATTEMPTS_SHOWN + 5) if f"try-{i:02d}" in row)
    assert [i for _, i in shown] == list(range(5, ATTEMPTS_SHOWN + 5))  # the newest, oldest of them first
