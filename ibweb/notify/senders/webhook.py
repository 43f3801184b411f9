"""Webhooks: a JSON POST in ibweb's versioned schema, or the payload a chat tool's incoming webhook takes.

Templates (``template`` in the channel's configuration):

* ``ibweb`` (default): ``{"schema": "ibweb.notify.v1", "id": <idempotency key>, "status": "firing"|"resolved",
  "notices": [{"key", "state", "kind", "severity", "summary", "body", "labels", "starts_at", "ends_at", "url",
  "annotations"}, ...]}``. Fields are only ever added within ``v1``; a change of meaning is ``v2``.
* ``slack``: a Slack incoming webhook's ``{"text", "blocks"}`` (mrkdwn, ``&<>`` escaped).
* ``teams``: a Microsoft Teams incoming webhook's message with one Adaptive Card (``version`` 1.4).

Every POST carries ``Idempotency-Key`` (the delivery's key: the same message retried has the same key),
``X-Ibweb-Schema`` and, when the channel has a ``secret``, ``X-Ibweb-Signature: t=<unix time>,v1=<hex>``: the
HMAC-SHA256 of ``"<t>.<body>"`` under the secret. A receiver checks it with :func:`verify` (or the same
computation) and refuses a ``t`` too far from its clock, so a captured request cannot be replayed later.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .base import ConfigError, Notice, SendResult, check_url, notice_to_dict
from .http import post

__all__ = ["WebhookSender", "SENDER", "SCHEMA", "TEMPLATES", "payload", "signature", "verify"]

SCHEMA = "ibweb.notify.v1"
TEMPLATES = ("ibweb", "slack", "teams")
SIGNATURE_HEADER = "X-Ibweb-Signature"


def signature(secret: str, body: bytes, t: int) -> str:
    """The ``X-Ibweb-Signature`` value of ``body`` signed at unix time ``t``."""
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def verify(secret: str, header: str, body: bytes, tolerance_s: float = 300.0, now: float | None = None) -> bool:
    """Whether ``header`` signs ``body`` under ``secret`` within ``tolerance_s`` of ``now`` (constant-time)."""
    try:
        fields = dict(part.split("=", 1) for part in header.split(","))
        t = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - t) > tolerance_s:
        return False
    return hmac.compare_digest(signature(secret, body, t), f"t={t},v1={fields.get('v1', '')}")


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _title(notices: Sequence[Notice]) -> str:
    first = notices[0]
    state = "RESOLVED" if all(n.state == "resolved" for n in notices) else "FIRING"
    more = f" (+{len(notices) - 1} more)" if len(notices) > 1 else ""
    return f"[{state}] {first.severity}: {first.summary}{more}"


def payload(template: str, notices: Sequence[Notice], key: str) -> dict[str, Any]:
    """The JSON body of ``notices`` in ``template`` (:data:`TEMPLATES`), ``key`` the delivery's idempotency key."""
    if template == "slack":
        lines = [f"*{_slack_escape(n.severity)}* {_slack_escape(n.body)}"
                 + (f" <{n.url}|open>" if n.url else "") for n in notices[:20]]
        text = _slack_escape(_title(notices))
        return {"text": text, "blocks": [{"type": "header", "text": {"type": "plain_text", "text": text[:150]}},
                                         {"type": "section", "text": {"type": "mrkdwn",
                                                                      "text": "\n".join(lines)[:3000]}}]}
    if template == "teams":
        body = [{"type": "TextBlock", "text": _title(notices), "weight": "Bolder", "size": "Medium", "wrap": True}]
        body += [{"type": "TextBlock", "text": f"{n.severity}: {n.body}", "wrap": True} for n in notices[:20]]
        card = {"$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard",
                "version": "1.4", "body": body}
        if notices[0].url:
            card["actions"] = [{"type": "Action.OpenUrl", "title": "Open", "url": notices[0].url}]
        return {"type": "message", "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive",
                                                    "contentUrl": None, "content": card}]}
    status = "resolved" if all(n.state == "resolved" for n in notices) else "firing"
    return {"schema": SCHEMA, "id": key, "status": status, "notices": [notice_to_dict(n) for n in notices]}


class WebhookSender:
    """POSTs notices as JSON to ``url`` (see the module docstring)."""

    kind = "webhook"
    #: the URL too: a Slack or Teams incoming webhook's URL is its credential
    secret_fields = ("secret", "url")

    def check_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``url``, ``template`` (:data:`TEMPLATES`), ``timeout_s`` (1-60, 10), the secret ``secret`` (HMAC key)."""
        allowed = {"url", "template", "timeout_s", "secret"}
        unknown = sorted(set(config) - allowed)
        if unknown:
            raise ConfigError(unknown[0], f"not a field of a webhook channel ({', '.join(sorted(allowed))})")
        out: dict[str, Any] = {"url": check_url(config)}
        template = config.get("template", "ibweb")
        if template not in TEMPLATES:
            raise ConfigError("template", f"{template!r}: one of {', '.join(TEMPLATES)}")
        out["template"] = template
        timeout = config.get("timeout_s", 10)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 1 <= timeout <= 60:
            raise ConfigError("timeout_s", f"{timeout!r}: a number of seconds from 1 to 60")
        out["timeout_s"] = timeout
        if "secret" in config:
            if not isinstance(config["secret"], str) or len(config["secret"]) < 16:
                raise ConfigError("secret", "a string of 16 characters or more")
            out["secret"] = config["secret"]
        return out

    def send(self, notices: Sequence[Notice], config: Mapping[str, Any]) -> SendResult:
        """One POST; ``config["delivery_key"]`` (the queue's) is the idempotency key."""
        key = str(config.get("delivery_key") or (notices[0].key if notices else ""))
        body = json.dumps(payload(config.get("template", "ibweb"), notices, key), separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "Idempotency-Key": key, "X-Ibweb-Schema": SCHEMA}
        if config.get("secret"):
            t = int(time.time())
            headers["X-Ibweb-Timestamp"] = str(t)
            headers[SIGNATURE_HEADER] = signature(config["secret"], body, t)
        return post(check_url(config), body, headers, float(config.get("timeout_s", 10)))


SENDER = WebhookSender()
