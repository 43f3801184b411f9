"""The notifications API: operators manage everything, a tenant's admins their tenant's channels and rules only,
secrets never read back, silences with their author, the "send a test" action through a real receiver."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from ibweb.notify.models import Channel, Delivery
from ibweb.tenancy.models import Tenant
from tests.support.access_fixtures import role_permissions

from .helpers import SECRET, channel

pytestmark = pytest.mark.django_db(transaction=True)


def client(name: str, role: str | None, tenant: Tenant | None = None) -> APIClient:
    user = User.objects.create_user(name, password="pw-" + name)
    if role:
        user.user_permissions.add(*role_permissions(role))
    if tenant is not None:
        tenant.users.add(user)
    c = APIClient()
    c.force_authenticate(User.objects.get(pk=user.pk))
    return c


@pytest.fixture
def people():
    acme = Tenant.objects.create(slug="acme", name="Acme Corp")
    globex = Tenant.objects.create(slug="globex", name="Globex Inc")
    return {"operator": client("op", "operator"), "acme-admin": client("aa", "tenant admin", acme),
            "acme-viewer": client("av", "viewer", acme), "acme": acme, "globex": globex}


def test_channels_by_role(people, webhook_receiver):
    op, admin, viewer = people["operator"], people["acme-admin"], people["acme-viewer"]
    body = {"name": "ops hook", "kind": "webhook", "config": {"url": webhook_receiver.url, "template": "slack"},
            "secrets": {"secret": SECRET}}
    r = op.post("/api/notify/channels/", body, format="json")
    assert r.status_code == 201, r.content
    text = r.content.decode()
    assert "secrets" not in r.json() and SECRET not in text and webhook_receiver.url not in text
    assert r.json()["secrets_set"] == ["secret", "url"] and r.json()["config"] == {"template": "slack", "timeout_s": 10}
    ops_id = r.json()["id"]
    # a change that does not repeat the secrets keeps them
    r = op.patch(f"/api/notify/channels/{ops_id}/", {"config": {"template": "teams"}}, format="json")
    assert r.status_code == 200, r.content
    ch = Channel.objects.get(pk=ops_id)
    assert ch.secrets == {"secret": SECRET, "url": webhook_receiver.url} and ch.config["template"] == "teams"
    r = op.post("/api/notify/channels/", {**body, "name": "bad", "config": {"url": "ftp://x"}}, format="json")
    assert r.status_code == 400 and "url" in r.json()
    # a tenant's admin: its tenant's channels only
    mine = {**body, "name": "acme hook", "tenant": "acme"}
    assert admin.post("/api/notify/channels/", mine, format="json").status_code == 201
    assert admin.post("/api/notify/channels/", {**mine, "tenant": "globex"}, format="json").status_code == 403
    assert admin.post("/api/notify/channels/", {**mine, "name": "x", "tenant": None}, format="json").status_code == 403
    assert [c["name"] for c in admin.get("/api/notify/channels/").json()["results"]] == ["acme hook"]
    assert admin.get(f"/api/notify/channels/{ops_id}/").status_code == 404
    assert admin.patch(f"/api/notify/channels/{ops_id}/", {"enabled": False}, format="json").status_code == 404
    acme_id = Channel.objects.get(name="acme hook").pk
    assert admin.patch(f"/api/notify/channels/{acme_id}/", {"tenant": "globex"}, format="json").status_code == 403
    # its users read them, write nothing
    assert [c["name"] for c in viewer.get("/api/notify/channels/").json()["results"]] == ["acme hook"]
    assert viewer.post("/api/notify/channels/", mine, format="json").status_code == 403
    assert viewer.delete(f"/api/notify/channels/{acme_id}/").status_code == 403
    # rules: a tenant's rule names its channels only
    rule = {"name": "r", "tenant": "acme", "min_severity": "critical", "kinds": ["link_down"], "channels": [acme_id]}
    assert admin.post("/api/notify/rules/", rule, format="json").status_code == 201
    r = admin.post("/api/notify/rules/", {**rule, "channels": [ops_id]}, format="json")
    assert r.status_code == 400 and "channels" in r.json()
    r = op.post("/api/notify/rules/", {**rule, "channels": [ops_id]}, format="json")
    assert r.status_code == 400 and "channels" in r.json()  # an operator too: a tenant's rule, its channels


def test_send_a_test_and_deliveries(people, webhook_receiver):
    op, admin = people["operator"], people["acme-admin"]
    ops = channel("webhook", {"url": webhook_receiver.url})
    acme = channel("webhook", {"url": webhook_receiver.url}, name="acme", tenant=people["acme"])
    r = op.post(f"/api/notify/channels/{ops.pk}/test/")
    assert r.status_code == 200 and r.json()["state"] == "sent", r.content
    assert r.json()["attempts_made"][0]["ok"] is True
    [got] = webhook_receiver.bodies()
    assert got["notices"][0]["kind"] == "test" and got["id"] == r.json()["key"]
    assert admin.post(f"/api/notify/channels/{ops.pk}/test/").status_code == 404
    assert admin.post(f"/api/notify/channels/{acme.pk}/test/").status_code == 200
    webhook_receiver.stop()
    r = op.post(f"/api/notify/channels/{ops.pk}/test/")
    assert r.json()["state"] == "failed" and "127.0.0.1" in r.json()["detail"]
    assert Delivery.objects.filter(reason="test").count() == 3
    listed = admin.get("/api/notify/deliveries/").json()["results"]
    assert [d["channel"] for d in listed] == [acme.pk]
    assert len(op.get(f"/api/notify/deliveries/?channel={ops.pk}").json()["results"]) == 2


def test_silences_are_operators(people):
    op, admin = people["operator"], people["acme-admin"]
    window = {"switches": ["leaf01"], "starts_at": "2030-01-01T10:00:00Z", "ends_at": "2030-01-01T18:00:00Z",
              "reason": "maintenance of leaf01"}
    r = op.post("/api/notify/silences/", window, format="json")
    assert r.status_code == 201 and r.json()["author_name"] == "op", r.content
    assert op.post("/api/notify/silences/", {**window, "ends_at": "2030-01-01T09:00:00Z"},
                   format="json").status_code == 400
    assert op.post("/api/notify/silences/", {**window, "switches": []}, format="json").status_code == 400
    assert admin.post("/api/notify/silences/", window, format="json").status_code == 403
    assert admin.get("/api/notify/silences/").json()["results"] == []


def test_silences_are_pushed_to_alertmanager(people, alertmanager):
    import json
    import urllib.request

    op = people["operator"]
    am = channel("alertmanager", {"url": alertmanager.url})
    window = {"switches": ["leaf0*"], "kinds": ["link_down", "errors"], "fabrics": ["lab"],
              "starts_at": "2030-01-01T10:00:00Z", "ends_at": "2030-01-01T18:00:00Z", "reason": "leaf firmware"}
    r = op.post("/api/notify/silences/", window, format="json")
    assert r.status_code == 201, r.content
    sid = r.json()["pushed"][str(am.pk)]

    def silences() -> list[dict]:
        with urllib.request.urlopen(f"{alertmanager.url}/api/v2/silences", timeout=5) as resp:
            return json.loads(resp.read())

    [pushed] = silences()
    assert pushed["id"] == sid and pushed["status"]["state"] == "pending" and pushed["createdBy"] == "op"
    assert {(m["name"], m["value"], m["isRegex"]) for m in pushed["matchers"]} == {
        ("alertname", "link_down|errors", True), ("fabric", "lab", True), ("switch", "leaf0.*", True)}
    by_host = op.post("/api/notify/silences/", {**window, "hosts": ["gpu0001"]}, format="json").json()
    assert by_host["pushed"][str(am.pk)].startswith("error: a silence by host")
    assert op.delete(f"/api/notify/silences/{r.json()['id']}/").status_code == 204
    assert [s["status"]["state"] for s in silences()] == ["expired"]


def test_deliveries_list_the_newest_attempts_in_queries_that_do_not_grow(people):
    """A list of deliveries gives each its newest ``ATTEMPTS_SHOWN`` attempts, picked by the database (no query
    loads a delivery's other attempts, and the queries do not grow with deliveries or attempts); one delivery all."""
    from datetime import UTC, datetime, timedelta

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ibweb.notify.models import Attempt
    from ibweb.notify.views import ATTEMPTS_SHOWN

    op = people["operator"]
    ops = channel("webhook", {"url": "http://127.0.0.1:9/hook"})
    t0 = datetime.now(tz=UTC) - timedelta(hours=1)

    def delivery(n: int, attempts: int) -> Delivery:
        d = Delivery.objects.create(channel=ops, key=f"k-{n}", status="firing", reason="start", group="g")
        Attempt.objects.bulk_create([Attempt(delivery=d, at=t0 + timedelta(seconds=i), ok=False,
                                             detail=f"d{n}-try-{i:02d}") for i in range(attempts)])
        return d

    def listed() -> tuple[int, list[dict], str]:
        with CaptureQueriesContext(connection) as ctx:
            r = op.get(f"/api/notify/deliveries/?channel={ops.pk}")
        assert r.status_code == 200, r.content
        return len(ctx.captured_queries), r.json()["results"], "\n".join(q["sql"] for q in ctx.captured_queries)

    delivery(0, 3)
    listed()  # the user's permissions read once
    few, _, _ = listed()
    big = delivery(1, ATTEMPTS_SHOWN + 25)
    for n in range(2, 6):
        delivery(n, ATTEMPTS_SHOWN + 3)
    many, rows, sql = listed()
    assert many == few, sql
    assert "ROW_NUMBER" in sql.upper()  # the newest per delivery chosen by the database, not in Python
    got = {d["id"]: d for d in rows}[big.pk]
    assert [a["detail"] for a in got["attempts_made"]] == [f"d1-try-{i:02d}" for i in range(25, ATTEMPTS_SHOWN + 25)]
    assert got["attempts_total"] == ATTEMPTS_SHOWN + 25
    assert all(len(d["attempts_made"]) <= ATTEMPTS_SHOWN for d in rows)
    one = op.get(f"/api/notify/deliveries/{big.pk}/").json()
    assert len(one["attempts_made"]) == one["attempts_total"] == ATTEMPTS_SHOWN + 25
