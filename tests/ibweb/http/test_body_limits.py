"""Issue 14: request bodies and websocket messages are capped before a view sees them (413 / close 1009)."""

from __future__ import annotations

import asyncio
import http.client
import json

import pytest
import websockets
from django.test import override_settings
from rest_framework.test import APIClient

from ibweb.asgi import application
from ibweb.http.body_limits import BODY_LIMITS, body_limit
from tests.support.server import running_server

SMALL = 64 << 10


def test_each_path_gets_its_cap():
    with override_settings(IBWEB_MAX_BODY_BYTES=1, IBWEB_MAX_UPLOAD_BYTES=2, IBWEB_MAX_PUSH_BYTES=3):
        assert body_limit("/api/telemetry/fabrics/lab/samples/") == 3
        assert body_limit("/api/fabrics/fabrics/") == body_limit("/api/fabrics/fabrics/lab/") == 2
        assert body_limit("/fabrics/add/") == body_limit("/tenancy/fabrics/lab/import/") == 2
        assert body_limit("/api/twin/fabrics/lab/jobs/") == body_limit("/api/twin/fabrics/lab/plan/") == 2
        assert body_limit("/api/tenancy/tenants/") == body_limit("/api/fabrics/fabrics/lab/analyses/") == 1
    assert len({pattern.pattern for pattern, _, _ in BODY_LIMITS}) == len(BODY_LIMITS)


def test_upload_and_push_caps_hold_the_largest_legitimate_inputs():
    """The ibnetdiscover of the largest radix-64 subnet is 24 MiB; its full counter push about 240 MB."""
    from django.conf import settings

    from ibweb.fabrics.uploads import MAX_UPLOAD_BYTES

    assert settings.IBWEB_MAX_UPLOAD_BYTES > MAX_UPLOAD_BYTES >= 2 * 24 << 20
    assert settings.IBWEB_MAX_PUSH_BYTES >= 240_000_000


async def _call(scope: dict, chunks: list[bytes]) -> tuple[list[dict], int]:
    """Run ``application`` on one HTTP request; the messages it sent and how many body chunks it read."""
    sent, read = [], 0

    async def receive():
        nonlocal read
        if read < len(chunks):
            read += 1
            return {"type": "http.request", "body": chunks[read - 1], "more_body": read < len(chunks)}
        await asyncio.sleep(3600)

    async def send(message):
        sent.append(message)

    await application(scope, receive, send)
    return sent, read


def _scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
            "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"), *headers],
            "client": ("127.0.0.1", 1), "server": ("testserver", 80)}


@pytest.mark.django_db(transaction=True)
@override_settings(IBWEB_MAX_BODY_BYTES=SMALL)
async def test_a_declared_length_over_the_cap_is_a_413_before_anything_is_read():
    sent, read = await _call(_scope("/api/tenancy/tenants/", [(b"content-length", str(10 << 30).encode())]), [])
    assert read == 0 and sent[0]["status"] == 413
    detail = json.loads(sent[1]["body"])["detail"]
    assert detail == "request body too large: 10,737,418,240 bytes; a request body here may have at most 65,536 bytes"


@pytest.mark.django_db(transaction=True)
@override_settings(IBWEB_MAX_BODY_BYTES=SMALL)
async def test_a_streamed_body_is_cut_off_at_the_cap():
    chunks = [b"x" * 16384] * 64  # 1 MiB without a Content-Length
    sent, read = await _call(_scope("/api/tenancy/tenants/", []), chunks)
    assert read == SMALL // 16384 + 1 and [m["status"] for m in sent if "status" in m] == [413]
    assert "more than 65,536 bytes" in json.loads(sent[-1]["body"])["detail"]


@pytest.mark.django_db
@override_settings(IBWEB_MAX_BODY_BYTES=SMALL)
def test_drf_parsers_refuse_an_oversized_json_body_with_413():
    """The same cap where no ASGI server is in front (test client, other servers)."""
    from django.contrib.auth.models import User

    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("root", password="pw"))
    body = {"name": "x" * (SMALL + 1), "slug": "big"}
    r = client.post("/api/tenancy/tenants/", body, format="json")
    assert r.status_code == 413 and "at most 65,536 bytes" in r.json()["detail"]
    r = client.post("/api/tenancy/tenants/", json.dumps(body), content_type="application/json",
                    HTTP_CONTENT_LENGTH="10")  # a lying Content-Length is caught while reading
    assert r.status_code in (400, 413)


@pytest.mark.django_db
@override_settings(IBWEB_MAX_BODY_BYTES=SMALL)
def test_a_body_of_many_small_objects_is_refused_before_it_is_parsed(monkeypatch):
    """``[{},{},...]`` costs twenty times its bytes once parsed: counted first, a 400 that says so."""
    from django.contrib.auth.models import User

    from ibweb.http import json_input

    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("root", password="pw"))
    parsed = []
    monkeypatch.setattr(json_input, "_decode", lambda text: parsed.append(1) or {})
    body = "[" + ",".join(["{}"] * 20_000) + "]"  # 60 kB, under the 64 KiB cap
    r = client.post("/api/tenancy/tenants/", body, content_type="application/json")
    assert r.status_code == 400 and r.json()["detail"] == "JSON body of 20,001 objects and arrays; at most 1,024 here"
    assert not parsed
    client.post("/api/tenancy/tenants/", json.dumps({"name": "Few {[", "slug": "few"}),
                content_type="application/json")
    assert parsed  # a body within the count is parsed


def test_the_container_cap_holds_a_full_counter_push():
    from django.conf import settings

    from ibweb.http.body_limits import max_json_containers
    from ibweb.telemetry.api.serializers import MAX_PUSH_SAMPLES

    # a sample is an object with a counters object; its iblinkinfo line has two bracketed port numbers
    assert max_json_containers(settings.IBWEB_MAX_PUSH_BYTES) >= 4 * MAX_PUSH_SAMPLES


@pytest.mark.services
def test_real_server_answers_413_and_closes_large_websocket_messages(tmp_path):
    env = {"IBWEB_MAX_BODY_BYTES": str(SMALL), "IBWEB_MAX_WS_MESSAGE_BYTES": "1024"}
    with running_server(tmp_path, extra_env=env) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.putrequest("POST", "/api/tenancy/tenants/")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(1 << 30))
        conn.endheaders()  # the gigabyte is never sent: the answer comes from the header alone
        r = conn.getresponse()
        assert r.status == 413 and b"at most 65,536 bytes" in r.read()
        conn.close()

        async def talk():
            async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/",
                                          additional_headers={"Origin": server.url, "Cookie": server.cookie},
                                          max_size=None) as ws:
                await ws.recv()  # the snapshot
                await ws.send(json.dumps({"type": "ping", "pad": "x" * 4096}))
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    for _ in range(100):
                        await asyncio.wait_for(ws.recv(), 30)
                return closed.value.rcvd.code

        assert asyncio.run(talk()) == 1009
