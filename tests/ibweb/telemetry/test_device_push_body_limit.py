"""Issue 38: the device push has its own body cap, fit for a whole-fabric ``ibdiagnet2.db_csv``; over it, a 413
naming the cap (``IBWEB_MAX_DEVICE_PUSH_BYTES``)."""

from __future__ import annotations

import asyncio
import json

import pytest
from django.conf import settings
from django.test import override_settings

from ibweb.asgi import application
from ibweb.http.body_limits import body_limit

PATH = "/api/telemetry/fabrics/lab/devices/"


def test_the_device_push_route_has_its_own_cap():
    with override_settings(IBWEB_MAX_BODY_BYTES=1, IBWEB_MAX_PUSH_BYTES=3, IBWEB_MAX_DEVICE_PUSH_BYTES=5):
        assert body_limit(PATH) == 5
        assert body_limit("/api/telemetry/fabrics/lab/devices/x/") == 1
    # the largest radix-64 subnet's db_csv: ~1.5 kB per cabled port x 273,152 ports, ~410 MB before JSON escapes
    assert settings.IBWEB_MAX_DEVICE_PUSH_BYTES >= 1.5e3 * 273_152 * 1.05
    assert settings.IBWEB_MAX_DEVICE_PUSH_BYTES > settings.IBWEB_MAX_PUSH_BYTES


async def _post(headers: list[tuple[bytes, bytes]], chunks: list[bytes]) -> list[dict]:
    sent, read = [], 0

    async def receive():
        nonlocal read
        if read < len(chunks):
            read += 1
            return {"type": "http.request", "body": chunks[read - 1], "more_body": read < len(chunks)}
        await asyncio.sleep(3600)

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": PATH, "raw_path": PATH.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"), *headers],
             "client": ("127.0.0.1", 1), "server": ("testserver", 80)}
    await application(scope, receive, send)
    return sent


@pytest.mark.django_db(transaction=True)
async def test_a_device_push_over_the_default_cap_is_a_413_naming_it():
    cap = settings.IBWEB_MAX_DEVICE_PUSH_BYTES
    sent = await _post([(b"content-length", str(cap + 1).encode())], [])
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["detail"] == (
        f"request body too large: {cap + 1:,} bytes; a device push here may have at most {cap:,} bytes")


@pytest.mark.django_db(transaction=True)
@override_settings(IBWEB_MAX_DEVICE_PUSH_BYTES=64 << 10)
async def test_a_streamed_device_push_is_cut_off_at_its_cap():
    sent = await _post([], [b"x" * 16384] * 8)  # 128 KiB, no Content-Length
    assert [m["status"] for m in sent if "status" in m] == [413]
    assert json.loads(sent[-1]["body"])["detail"] == (
        "request body too large: more than 65,536 bytes; a device push here may have at most 65,536 bytes")
