"""The webhook sender against a real HTTP receiver: the v1 schema, the HMAC signature, chat templates, outcomes."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from ibweb.notify.senders import ConfigError, sender
from ibweb.notify.senders.base import Notice
from ibweb.notify.senders.webhook import SCHEMA, payload, signature, verify
from tests.support.notify_servers import webhook_receiver  # noqa: F401 - fixture

SECRET = "0123456789abcdef-secret"


def notices(n: int = 2) -> list[Notice]:
    return [Notice(key=f"k{i}", state="firing", kind="link_down", severity="critical",
                   summary=f"lab: leaf01 port {i} down", body=f"leaf01 port {i} is down <&>",
                   labels={"fabric": "lab", "switch": "leaf01"}, starts_at=datetime(2026, 1, 1, tzinfo=UTC))
            for i in range(1, n + 1)]


def test_signed_v1_payload(webhook_receiver):  # noqa: F811
    hook = sender("webhook")
    config = hook.check_config({"url": webhook_receiver.url, "secret": SECRET})
    result = hook.send(notices(), {**config, "delivery_key": "abc123"})
    assert result.ok, result.detail
    [got] = webhook_receiver.received
    assert got.headers["idempotency-key"] == "abc123" and got.headers["x-ibweb-schema"] == SCHEMA
    assert verify(SECRET, got.headers["x-ibweb-signature"], got.body)
    assert not verify("another-secret-0123", got.headers["x-ibweb-signature"], got.body)
    assert not verify(SECRET, got.headers["x-ibweb-signature"], got.body + b" ")
    t = int(got.headers["x-ibweb-timestamp"])
    assert not verify(SECRET, signature(SECRET, got.body, t - 3600), got.body)  # too old: a replay
    body = got.json()
    assert body["schema"] == SCHEMA and body["id"] == "abc123" and body["status"] == "firing"
    assert [n["key"] for n in body["notices"]] == ["k1", "k2"]
    assert set(body["notices"][0]) == {"key", "state", "kind", "severity", "summary", "body", "labels", "starts_at",
                                       "ends_at", "url", "annotations"}


def test_chat_templates():
    slack = payload("slack", notices(), "k")
    assert slack["text"].startswith("[FIRING] critical: lab: leaf01 port 1 down (+1 more)")
    assert "&lt;&amp;&gt;" in slack["blocks"][1]["text"]["text"] and "<&>" not in json.dumps(slack["blocks"])
    teams = payload("teams", notices(), "k")
    card = teams["attachments"][0]
    assert teams["type"] == "message" and card["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert card["content"]["type"] == "AdaptiveCard" and len(card["content"]["body"]) == 3


def test_outcomes(webhook_receiver):  # noqa: F811
    hook = sender("webhook")
    config = hook.check_config({"url": webhook_receiver.url, "template": "slack"})
    webhook_receiver.status = 404
    refused = hook.send(notices(1), config)
    assert not refused.ok and not refused.retry and "404" in refused.detail
    webhook_receiver.status = 503
    assert hook.send(notices(1), config).retry
    webhook_receiver.stop()
    down = hook.send(notices(1), config)
    assert not down.ok and down.retry and "/hook" not in down.detail  # the URL's path (a chat token) never shown


@pytest.mark.parametrize(("config", "field"), [({"url": "x"}, "url"), ({"url": "http://h/", "template": "irc"},
                                                                        "template"),
                                                ({"url": "http://h/", "secret": "short"}, "secret")])
def test_config_errors_name_the_field(config, field):
    with pytest.raises(ConfigError) as err:
        sender("webhook").check_config(config)
    assert err.value.field == field
