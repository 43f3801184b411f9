"""``/healthz`` is answered in front of Django (issue 26): the database checked on the health thread, the rest of
the request never reaching the app; every other request passes through untouched."""

from __future__ import annotations

import asyncio
import json

import pytest

from ibweb.asgi import application
from ibweb.http import health


@pytest.fixture(autouse=True)
def _close_health_connection():
    """The health thread keeps its connection: closed after each test, so the test database can be dropped."""
    yield
    from django.db import connections

    health._THREAD.submit(connections.close_all).result()


class Inner:
    """An ASGI app that records what reached it and answers 204."""

    def __init__(self) -> None:
        self.paths: list[tuple[str, str]] = []

    async def __call__(self, scope, receive, send):
        self.paths.append((scope["method"], scope["path"]))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def call(app, path: str, method: str = "GET") -> tuple[int, dict, bytes]:
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "headers": [], "query_string": b""}
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.django_db(transaction=True)
def test_healthz_is_answered_before_the_app():
    inner = Inner()
    app = health.HealthFirst(inner)
    status, headers, body = call(app, "/healthz")
    assert (status, json.loads(body)) == (200, {"status": "ok"}) and headers[b"cache-control"] == b"no-store"
    assert call(app, "/healthz", "HEAD")[:1] == (200,) and call(app, "/healthz", "HEAD")[2] == b""
    assert not inner.paths
    assert call(app, "/healthz", "POST")[0] == 204 and call(app, "/healthz/")[0] == 204 and call(app, "/x")[0] == 204
    assert inner.paths == [("POST", "/healthz"), ("GET", "/healthz/"), ("GET", "/x")]


@pytest.mark.django_db(transaction=True)
def test_healthz_says_503_when_the_database_fails(monkeypatch):
    from django.db import connections

    def broken_cursor(self):
        raise RuntimeError("database down")

    monkeypatch.setattr(type(connections["default"]), "cursor", broken_cursor)  # every thread's connection
    status, _, body = call(health.HealthFirst(Inner()), "/healthz")
    assert status == 503 and json.loads(body) == {"status": "unavailable", "database": "database down"}


def test_the_served_application_answers_healthz_first():
    from ibweb.http.proxies import ForwardedHeaders

    assert isinstance(application, ForwardedHeaders)  # forwarding headers are settled before anything else
    assert isinstance(application.app.application_mapping["http"], health.HealthFirst)
