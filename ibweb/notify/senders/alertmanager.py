"""Alertmanager: each notice is an alert posted to its v2 API (``POST /api/v2/alerts``).

An alert is identified by its labels (``alertname`` = the event's kind, ``fabric``, ``cluster``, ``severity``,
``switch``, ``port``, ``tenant``, ``event_id``: those that apply); annotations carry the summary, the rendered
message and the link. While its events are active, the queue re-posts the firing alerts every ``resend_s``
(:attr:`AlertmanagerSender.resend_s`, 60 s by default) with ``endsAt`` four intervals ahead, as Prometheus does
(``rules/alerting.go``, ``sendAlerts``: ``ValidUntil = ts + 4 * max(interval, resendDelay)``, "allow for two Eval or
Alertmanager send failures"; ``--rules.alert.resend-delay`` 1m): an alert ibweb stops re-posting (the server is
gone) resolves by itself there. Alertmanager's ``resolve_timeout`` (5m) only applies to alerts posted without
``endsAt``, which ibweb never does. A clear posts the alert with ``endsAt`` = when it cleared.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from .base import ConfigError, Notice, SendResult, check_url
from .http import post

__all__ = ["AlertmanagerSender", "SENDER", "alerts_of"]

_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def alerts_of(notices: Sequence[Notice], resend_s: float, now: datetime | None = None,
              extra_labels: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The v2 alerts of ``notices``: firing ones valid for four re-send intervals, resolved ones ended."""
    now = now or datetime.now(tz=UTC)
    out = []
    for n in notices:
        labels = {"alertname": n.kind, **{k: str(v) for k, v in n.labels.items() if v not in (None, "")},
                  **dict(extra_labels or {})}
        ends = n.ends_at if n.state == "resolved" and n.ends_at else now + timedelta(seconds=4 * resend_s)
        if n.state == "resolved" and ends > now:
            ends = now
        annotations = {"summary": n.summary, "description": n.body, **{k: str(v) for k, v in n.annotations.items()}}
        alert = {"labels": labels, "annotations": annotations, "startsAt": _iso(n.starts_at), "endsAt": _iso(ends)}
        if n.url:
            alert["generatorURL"] = n.url
        out.append(alert)
    return out


class AlertmanagerSender:
    """Posts notices to an Alertmanager (``url``: its base URL, e.g. ``http://alertmanager:9093``)."""

    kind = "alertmanager"
    secret_fields = ("password", "bearer_token")
    resend_s = 60.0

    def check_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``url``, optional ``username`` (with the secret ``password``) or secret ``bearer_token``,
        ``timeout_s`` (1-60, 10), ``resend_s`` (10-3600, 60) and ``labels`` (added to every alert)."""
        out = {"url": check_url(config).rstrip("/")}
        allowed = {"url", "username", "password", "bearer_token", "timeout_s", "resend_s", "labels"}
        unknown = sorted(set(config) - allowed)
        if unknown:
            raise ConfigError(unknown[0], f"not a field of an alertmanager channel ({', '.join(sorted(allowed))})")
        for field, default, low, high in (("timeout_s", 10, 1, 60), ("resend_s", self.resend_s, 10, 3600)):
            value = config.get(field, default)
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
                raise ConfigError(field, f"{value!r}: a number of seconds from {low} to {high}")
            out[field] = value
        labels = config.get("labels", {})
        if not isinstance(labels, dict) or not all(isinstance(k, str) and _LABEL.fullmatch(k) and isinstance(v, str)
                                                   for k, v in labels.items()):
            raise ConfigError("labels", "an object of label names ([a-zA-Z_][a-zA-Z0-9_]*) to strings")
        out["labels"] = labels
        for field in ("username", "password", "bearer_token"):
            if field in config:
                if not isinstance(config[field], str):
                    raise ConfigError(field, "a string")
                out[field] = config[field]
        return out

    def send(self, notices: Sequence[Notice], config: Mapping[str, Any]) -> SendResult:
        """One POST of every notice (an empty batch sends nothing)."""
        if not notices:
            return SendResult(True, "nothing to post")
        resend = float(config.get("resend_s", self.resend_s))
        body = json.dumps(alerts_of(notices, resend, extra_labels=config.get("labels"))).encode()
        headers = {"Content-Type": "application/json"}
        if config.get("bearer_token"):
            headers["Authorization"] = f"Bearer {config['bearer_token']}"
        elif config.get("username"):
            pair = f"{config['username']}:{config.get('password', '')}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        return post(f"{str(config['url']).rstrip('/')}/api/v2/alerts", body, headers,
                    float(config.get("timeout_s", 10)))


SENDER = AlertmanagerSender()
