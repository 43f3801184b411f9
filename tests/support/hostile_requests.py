"""Helpers of the tests and the bench that send hostile requests to a real server (issue 26): a superuser session,
its CSRF headers, multipart bodies.

Used by ``tests/ibweb/http/test_decompression_bombs.py`` and ``tests/bench/bench_hostile_requests.py``.
"""

from __future__ import annotations

import urllib.request
import uuid

__all__ = ["SUPERUSER", "multipart", "csrf_headers"]

#: ``setup`` of :func:`tests.support.server.running_server`: the session's user ``operator`` is a superuser.
SUPERUSER = "from django.contrib.auth.models import User; User.objects.create_superuser('operator', password='pw-op')"


def multipart(fields: dict[str, str | tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body of ``{name: text or (file name, bytes)}`` and its content type."""
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        if isinstance(value, str):
            parts += [f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n".encode()]
            continue
        filename, data = value
        parts += [f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\n"
                  f"Content-Type: application/gzip\r\n\r\n".encode(), data, b"\r\n"]
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def csrf_headers(server) -> dict[str, str]:
    """Session and CSRF headers of the operator (a superuser here) for a POST."""
    request = urllib.request.Request(server.url + "/fabrics/add/", headers={"Cookie": server.cookie})
    with urllib.request.urlopen(request, timeout=30) as r:
        cookies = r.headers.get_all("Set-Cookie") or []
    token = next(c.split(";")[0].split("=", 1)[1] for c in cookies if c.startswith("csrftoken="))
    return {"Cookie": f"{server.cookie}; csrftoken={token}", "X-CSRFToken": token}
