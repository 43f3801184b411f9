"""Every 500 is logged once with its traceback and request ID, and the response names the ID (issue 26)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

from __future__ import annotations

import io
import logging
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from ibweb.http import request_id
from tests.support.tenancy_fixtures import fabric  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def log_lines():
    """What the configured ``django.request`` console handler writes, as text."""
    [handler] = [h for h in logging.getLogger("django.request").handlers if type(h) is logging.StreamHandler]
    out = io.StringIO()
    before = handler.setStream(out)
    yield out
    handler.setStream(before)


@pytest.fixture
def operator(db) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(User.objects.create_superuser("olga", password="pw-olga-0123"))
    return client


def boom(*args, **kwargs):
    raise RuntimeError("boom from a broken view")


@pytest.mark.parametrize(("target", "url"), [("ibweb.events.api.summary", "/api/fabrics/fabrics/tiny/events/summary/"),
                                             ("ibweb.events.views.visible_events", "/fabrics/tiny/events/")],
                         ids=["drf-view", "plain-view"])
def test_a_500_is_logged_once_with_its_traceback_and_request_id(operator, fabric, log_lines, monkeypatch, target,
                                                                 url):
    monkeypatch.setattr(target, boom)
    r = operator.get(url)
    assert r.status_code == 500
    rid = r[request_id.HEADER]
    assert re.fullmatch(r"[0-9a-f]{32}", rid)
    text = log_lines.getvalue()
    assert text.count("Internal Server Error") == 1, text
    assert f"Internal Server Error: {url} [request {rid}]" in text
    assert "Traceback (most recent call last)" in text and "RuntimeError: boom from a broken view" in text


def test_a_sane_incoming_request_id_is_kept_and_an_insane_one_replaced(operator, fabric, log_lines, monkeypatch):
    monkeypatch.setattr("ibweb.events.api.summary", boom)
    r = operator.get("/api/fabrics/fabrics/tiny/events/summary/", HTTP_X_REQUEST_ID="lb-7f3a:42")
    assert r[request_id.HEADER] == "lb-7f3a:42" and "[request lb-7f3a:42]" in log_lines.getvalue()
    for bad in ("two words", "x" * 65, "<script>", "id%s"):
        r = operator.get("/healthz", HTTP_X_REQUEST_ID=bad)
        assert r.status_code == 200 and re.fullmatch(r"[0-9a-f]{32}", r[request_id.HEADER]), bad


def test_responses_below_500_are_not_logged(operator, fabric, log_lines):
    assert operator.get("/api/fabrics/fabrics/nowhere/events/").status_code == 404
    assert operator.get("/healthz")[request_id.HEADER]
    assert log_lines.getvalue() == ""


def test_log_lines_of_a_request_carry_its_id():
    record = logging.LogRecord("ibweb.x", logging.INFO, __file__, 1, "hello", (), None)
    token = request_id._CURRENT.set("abc")
    try:
        assert request_id.RequestIdFilter().filter(record) and record.request_id == "abc"
    finally:
        request_id._CURRENT.reset(token)
    assert record.getMessage() == "hello"  # a record without a request keeps its message


@pytest.mark.django_db(transaction=True)
async def test_under_asgi_too(log_lines, monkeypatch):
    """The ASGI handler (uvicorn's path) logs the same line and returns the same header."""
    from asgiref.sync import sync_to_async
    from django.test import AsyncClient

    from ibweb.fabrics.models import Fabric

    await sync_to_async(Fabric.objects.create)(name="Tiny", slug="tiny", spec={"topology": {
        "generator": "fat_tree", "hosts": 8, "radix": 4, "name": "tiny"}})
    user = await sync_to_async(User.objects.create_superuser)("olga", password="pw-olga-0123")
    client = AsyncClient(raise_request_exception=False)
    await client.aforce_login(user)
    monkeypatch.setattr("ibweb.events.api.summary", boom)
    r = await client.get("/api/fabrics/fabrics/tiny/events/summary/", headers={"X-Request-ID": "asgi-1"})
    assert r.status_code == 500 and r[request_id.HEADER] == "asgi-1"
    text = log_lines.getvalue()
    assert text.count("[request asgi-1]") == 1 and "RuntimeError: boom from a broken view" in text
