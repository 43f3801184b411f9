"""Silences pushed to the operators' Alertmanager channels (``POST /api/v2/silences``), so that its users see the
maintenance windows ibweb holds; ibweb never posts a silenced event's alerts anyway (the dispatcher records them).

A silence's matchers become Alertmanager matchers on the labels ibweb's alerts carry: ``kinds`` on ``alertname``,
``fabrics``, ``clusters``, ``tenants``, ``switches`` and ``ports`` on their labels (globs as anchored regular
expressions, several values as alternatives). Hosts are no label of the alerts: a silence by host is not pushed
(``pushed`` says so). The Alertmanager ID per channel is kept in :attr:`Silence.pushed`; a change replaces the
silence there (Alertmanager expires the old one when it is posted again with its ID), a deletion expires it.
"""

from __future__ import annotations

import json
import logging
import re
import urllib.error
import urllib.request

from .models import Channel, Silence

__all__ = ["push", "expire", "matchers_of"]

log = logging.getLogger("ibweb.notify")
_LABELS = (("kinds", "alertname"), ("fabrics", "fabric"), ("clusters", "cluster"), ("tenants", "tenant"),
           ("switches", "switch"), ("ports", "port"))


def _glob(pattern: str) -> str:
    return "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)


def matchers_of(silence: Silence) -> list[dict] | None:
    """The Alertmanager matchers of ``silence``; ``None`` when they cannot say it (hosts)."""
    if silence.hosts:
        return None
    out = []
    for field, label in _LABELS:
        values = getattr(silence, field) or []
        if values:
            out.append({"name": label, "value": "|".join(_glob(str(v)) for v in values), "isRegex": True,
                        "isEqual": True})
    return out or None


def _channels():
    return Channel.objects.filter(kind="alertmanager", enabled=True, tenant__isnull=True)


def _call(channel: Channel, method: str, path: str, body: dict | None = None) -> dict:
    config = {**channel.config, **channel.secrets}
    headers = {"Content-Type": "application/json"}
    if config.get("bearer_token"):
        headers["Authorization"] = f"Bearer {config['bearer_token']}"
    request = urllib.request.Request(f"{config['url'].rstrip('/')}{path}", method=method, headers=headers,
                                     data=json.dumps(body).encode() if body is not None else None)
    with urllib.request.urlopen(request, timeout=float(config.get("timeout_s", 10))) as r:  # noqa: S310
        text = r.read()
    return json.loads(text) if text else {}


def push(silence: Silence) -> dict[str, str]:
    """Post ``silence`` to every operators' Alertmanager channel; ``{channel id: silence ID or "error: ..."}``."""
    matchers = matchers_of(silence)
    out: dict[str, str] = {}
    for channel in _channels():
        if matchers is None:
            out[str(channel.pk)] = "error: a silence by host is not pushed (no host label)"
            continue
        body = {"matchers": matchers, "startsAt": silence.starts_at.isoformat(), "endsAt": silence.ends_at.isoformat(),
                "createdBy": silence.author_name or "ibweb", "comment": f"ibweb silence {silence.pk}: {silence.reason}"}
        previous = (silence.pushed or {}).get(str(channel.pk), "")
        if previous and not previous.startswith("error"):
            body["id"] = previous
        try:
            out[str(channel.pk)] = str(_call(channel, "POST", "/api/v2/silences", body)["silenceID"])
        except (OSError, urllib.error.URLError, ValueError, KeyError) as exc:
            log.warning("silence %s: pushing to channel %s failed: %s", silence.pk, channel.pk, exc)
            out[str(channel.pk)] = f"error: {getattr(exc, 'reason', exc)}"[:200]
    Silence.objects.filter(pk=silence.pk).update(pushed=out)
    silence.pushed = out
    return out


def expire(silence: Silence) -> None:
    """Expire ``silence`` in the Alertmanagers it was pushed to (before it is deleted)."""
    for channel in _channels().filter(pk__in=[int(k) for k in silence.pushed or {}]):
        sid = silence.pushed[str(channel.pk)]
        if sid.startswith("error"):
            continue
        try:
            _call(channel, "DELETE", f"/api/v2/silence/{sid}")
        except (OSError, urllib.error.URLError, ValueError) as exc:
            log.warning("silence %s: expiring %s in channel %s failed: %s", silence.pk, sid, channel.pk, exc)
