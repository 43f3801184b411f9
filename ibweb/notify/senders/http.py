"""One HTTP POST of a sender (standard library), its outcome as a :class:`~.base.SendResult`."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping

from .base import SendResult

__all__ = ["post"]

#: Statuses worth trying again: timeouts, throttling and the receiver's own errors (RFC 9110).
_RETRY = {408, 425, 429}


def post(url: str, body: bytes, headers: Mapping[str, str], timeout_s: float = 10.0) -> SendResult:
    """POST ``body`` to ``url``: ok on 2xx; a 4xx other than 408/425/429 is refused for good (``retry`` false)."""
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"User-Agent": "ibweb-notify/1", **headers})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 - http(s) checked
            return SendResult(True, f"HTTP {response.status}")
    except urllib.error.HTTPError as exc:
        text = exc.read(300).decode(errors="replace").strip()
        retry = exc.code >= 500 or exc.code in _RETRY
        return SendResult(False, f"HTTP {exc.code} {exc.reason}: {text}"[:480], retry=retry)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        host = urllib.parse.urlsplit(url).hostname or "?"  # never the whole URL: a chat webhook's path is its token
        return SendResult(False, f"{host}: {reason}"[:480], retry=True)
