"""A channel's "send a test": one notice naming nothing of the fabric, sent at once, kept as a delivery."""

from __future__ import annotations

import hashlib
import time
from datetime import datetime

from . import clock
from .models import Attempt, Channel, Delivery
from .queue import send_now
from .senders.base import Notice, notice_to_dict

__all__ = ["send_test", "test_notice"]


def test_notice(channel: Channel, who: str, now: datetime) -> Notice:
    """The test notice of ``channel`` asked for by ``who``."""
    return Notice(key=f"ibweb-test-{channel.pk}-{int(now.timestamp() * 1000)}", state="firing", kind="test",
                  severity="info", summary=f"ibweb test notification for channel {channel.name}",
                  body=f"A test of the ibweb notification channel {channel.name} ({channel.kind}), sent by {who}.",
                  labels={"kind": "test", "severity": "info"}, starts_at=now)


def send_test(channel: Channel, who: str) -> Delivery:
    """Send a test through ``channel`` now (not queued behind its messages, not retried); the delivery kept."""
    now = clock.now()
    notice = test_notice(channel, who, now)
    key = hashlib.sha256(f"{channel.pk}|test|{notice.key}|{time.monotonic_ns()}".encode()).hexdigest()[:40]
    result, ms = send_now(channel, [notice], key)
    delivery = Delivery.objects.create(channel=channel, key=key, status="firing", reason="test",
                                       state=Delivery.State.SENT if result.ok else Delivery.State.FAILED,
                                       group=f"test:{channel.pk}", notices=[notice_to_dict(notice)], attempts=1,
                                       detail=result.detail[:500], sent_at=now if result.ok else None)
    Attempt.objects.create(delivery=delivery, at=now, ok=result.ok, detail=result.detail[:500], duration_ms=ms)
    return delivery
