"""What every notification channel's sender takes and returns.

A sender turns rendered notifications into what one kind of receiver takes (Alertmanager's v2 API, an e-mail,
a webhook POST, a syslog line) and sends them in one attempt; retries, ordering, rate limits and the record of
attempts are the delivery queue's, never the sender's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

__all__ = ["Notice", "SendResult", "Sender", "ConfigError", "notice_to_dict", "notice_from_dict", "check_url"]


@dataclass(frozen=True)
class Notice:
    """One notification as one channel's recipient may read it (already rendered for its access view)."""

    key: str  #: idempotency key: the same notice sent twice has the same key
    state: Literal["firing", "resolved"]
    kind: str  #: the event's kind (link_down, ber, errors, ...)
    severity: str  #: info, warning or critical
    summary: str  #: one line
    body: str  #: the rendered message, several lines allowed
    labels: Mapping[str, str]  #: fabric, cluster, kind, severity, switch, port, tenant (those that apply)
    starts_at: datetime
    ends_at: datetime | None = None  #: set when resolved
    url: str = ""  #: where the operator looks (absolute when the site's base URL is known)
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SendResult:
    """The outcome of one attempt: ``ok``, or why not and whether trying again may help."""

    ok: bool
    detail: str = ""  #: the receiver's status or the error, shown with the attempt
    retry: bool = True  #: False: the receiver refused for good (bad config, 4xx other than 408/429)


class ConfigError(ValueError):
    """A channel's configuration is wrong: ``field`` names what (shown by the API next to that field)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class Sender(Protocol):
    """One kind of channel: ``send`` delivers a batch (grouped notices) to the channel's receiver once.

    ``config`` holds the channel's configuration with its secret fields merged in. Optional attributes, read with
    ``getattr`` by the app: ``secret_fields`` (names of the configuration fields written but never shown, e.g.
    ``("password",)``), ``check_config(config) -> dict`` (the configuration checked and normalised; raises
    :class:`ConfigError` naming the field) and ``resend_s`` (seconds between re-posts of the active notices, for
    receivers that expire alerts not re-sent, as Alertmanager).
    """

    kind: str

    def send(self, notices: Sequence[Notice], config: Mapping[str, Any]) -> SendResult: ...


def notice_to_dict(notice: Notice) -> dict[str, Any]:
    """``notice`` as JSON data (how a delivery keeps it)."""
    return {"key": notice.key, "state": notice.state, "kind": notice.kind, "severity": notice.severity,
            "summary": notice.summary, "body": notice.body, "labels": dict(notice.labels),
            "starts_at": notice.starts_at.isoformat(),
            "ends_at": notice.ends_at.isoformat() if notice.ends_at else None,
            "url": notice.url, "annotations": dict(notice.annotations)}


def notice_from_dict(data: Mapping[str, Any]) -> Notice:
    """The :class:`Notice` :func:`notice_to_dict` wrote."""
    return Notice(key=data["key"], state=data["state"], kind=data["kind"], severity=data["severity"],
                  summary=data["summary"], body=data["body"], labels=dict(data.get("labels") or {}),
                  starts_at=datetime.fromisoformat(data["starts_at"]),
                  ends_at=datetime.fromisoformat(data["ends_at"]) if data.get("ends_at") else None,
                  url=data.get("url", ""), annotations=dict(data.get("annotations") or {}))


def check_url(config: Mapping[str, Any], field: str = "url") -> str:
    """``config[field]``, an ``http(s)://`` URL with a host, or :class:`ConfigError`."""
    from urllib.parse import urlsplit

    url = config.get(field)
    if not isinstance(url, str) or not url:
        raise ConfigError(field, "required: an http:// or https:// URL")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(field, f"{url!r} is not an http:// or https:// URL with a host")
    return url
