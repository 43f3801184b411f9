"""Liveness endpoint for load balancers and compose health checks.

``/healthz`` must answer within 100 ms while other requests do heavy work (issue 26: an upload held it 8.9 s).
The heavy work is bounded where it is done (:mod:`ibweb.http.inflate`, the bulk partitions import, the collector's
frozen start-up objects in :mod:`ibweb.asgi`); besides, :class:`HealthFirst` answers ``/healthz`` in front of
Django: through Django a request passes the middleware chain, every synchronous hook a hop between the event
loop and a thread, and each hop waits for the GIL while another request computes. Beside a 1.6 s preview
(``tests/bench/bench_hostile_requests.py``) a light Django view took 51 ms median, 167 ms max; ``/healthz``
answered here 19 ms median, 63 ms max. The database check runs on a thread of its own with its own connection.
The Django view :func:`healthz` answers the same for clients that bypass the ASGI app (the test client).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

from django.db import close_old_connections, connection
from django.http import HttpRequest, JsonResponse

__all__ = ["PATH", "check", "healthz", "HealthFirst"]

PATH = "/healthz"


def check() -> tuple[int, dict]:
    """``(200, {"status": "ok"})`` when the database answers, else ``(503, {"status": "unavailable", ...})``."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any database failure makes the instance unhealthy
        return 503, {"status": "unavailable", "database": str(exc)}
    return 200, {"status": "ok"}


def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the process serves and its database answers, 503 otherwise."""
    status, body = check()
    return JsonResponse(body, status=status)


#: The thread the checks of :class:`HealthFirst` run on, with its own database connection, kept between checks
#: (renewed as Django renews a request's: ``CONN_MAX_AGE``, health checks).
_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="healthz")


def _check_on_own_thread() -> tuple[int, dict]:
    close_old_connections()
    return check()


class HealthFirst:
    """ASGI middleware: ``GET``/``HEAD /healthz`` answered here (the check on a pool thread), the rest by ``app``."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("path") != PATH or scope.get("method") not in ("GET", "HEAD"):
            return await self.app(scope, receive, send)
        status, body = await asyncio.get_running_loop().run_in_executor(_THREAD, _check_on_own_thread)
        payload = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                                (b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff")]})
        await send({"type": "http.response.body", "body": payload if scope["method"] == "GET" else b""})
