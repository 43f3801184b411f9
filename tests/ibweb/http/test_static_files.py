"""Static files from the real ASGI server: the same bytes, and no warning about synchronous iterators."""

from __future__ import annotations

import http.client
from pathlib import Path

import pytest

from tests.support.server import running_server

DIST = Path(__file__).resolve().parents[3] / "frontend" / "dist"


@pytest.mark.services
def test_static_files_stream_asynchronously_under_asgi(tmp_path):
    with running_server(tmp_path) as server:
        for _ in range(3):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            conn.request("GET", "/static/ibweb/ibweb.js")
            r = conn.getresponse()
            assert r.status == 200 and r.read() == (DIST / "ibweb.js").read_bytes()
            conn.request("HEAD", "/static/ibweb/ibweb.css")
            r = conn.getresponse()
            assert r.status == 200 and r.read() == b"" and int(r.getheader("Content-Length")) > 0
            conn.close()
        log = server.log.read_text()
    assert "StreamingHttpResponse" not in log, log
