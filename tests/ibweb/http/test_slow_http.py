"""Slow HTTP clients are cut off (issue 26): a request head trickled a byte at a time, a body trickled below the
least rate, each answered 408 and closed, while a client at normal speed and ``/healthz`` are served.

A real server (``python -m ibweb.serve``, :mod:`ibweb.http.timeouts`) with the deadlines shortened through the
environment: head 2 s, body grace 2 s and 4 KiB/s.
"""

from __future__ import annotations

import socket
import threading
import time
import urllib.request

import pytest

from tests.support.server import running_server

ENV = {"IBWEB_HEADER_TIMEOUT_S": "2", "IBWEB_BODY_TIMEOUT_S": "2", "IBWEB_BODY_MIN_RATE": "4096"}
#: Longest a test waits for the server to close a socket: well past every deadline above.
WAIT_S = 15


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("slowhttp"), extra_env=ENV) as s:
        yield s


def trickle(sock: socket.socket, data: bytes, every_s: float, step: int = 1) -> tuple[bytes, float]:
    """Send ``data`` ``step`` bytes every ``every_s`` until the server closes; ``(what it answered, when)``."""
    start = time.monotonic()
    sock.settimeout(every_s)
    answer = b""
    for i in range(0, len(data), step):
        try:
            sock.sendall(data[i:i + step])
        except (BrokenPipeError, ConnectionResetError):
            break
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except ConnectionResetError:
            break
        answer += chunk
        if not chunk:
            break
        if time.monotonic() - start > WAIT_S:
            break
    sock.settimeout(WAIT_S)
    try:
        while chunk := sock.recv(4096):
            answer += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return answer, time.monotonic() - start


def test_a_trickled_head_is_answered_408_and_closed(server):
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Padding: " + b"a" * 200 + b"\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        answer, took = trickle(sock, head, 0.2)
    assert answer.startswith(b"HTTP/1.1 408 ") and b"request head not complete within 2 s" in answer
    assert took < WAIT_S


def test_a_silent_connection_is_closed(server):
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.settimeout(WAIT_S)
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408 ")


def test_a_trickled_body_is_answered_408_and_closed(server):
    body = b"x" * 100_000
    head = (f"POST /api/tenancy/fabrics/demo/opensm/partitions.conf HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\nCookie: {server.cookie}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(head)
        answer, took = trickle(sock, body, 0.1, step=100)  # 1 KB/s: a quarter of the least rate
    assert answer.startswith(b"HTTP/1.1 408 ") and b"request body slower than 4,096 bytes/s" in answer
    assert took < WAIT_S


def test_normal_clients_and_healthz_are_served_beside_slow_ones(server):
    socks = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(20)]
    try:
        for s in socks:
            s.sendall(b"GET /healthz HTTP/1.1\r\n")  # and nothing more
        with urllib.request.urlopen(server.url + "/healthz", timeout=5) as r:
            assert r.status == 200 and r.read() == b'{"status": "ok"}'
        body = b"Default=0x7fff : ALL=full ;\n" * 2000  # 56 kB at full speed: well above the least rate
        req = urllib.request.Request(server.url + "/api/tenancy/fabrics/demo/opensm/partitions.conf", data=body,
                                     method="POST", headers={"Content-Type": "text/plain", "Cookie": server.cookie})
        try:
            urllib.request.urlopen(req, timeout=10)
        except urllib.error.HTTPError as exc:
            assert exc.code in (400, 403)  # answered by the app, not cut off
    finally:
        closed = []

        def wait(s: socket.socket) -> None:
            s.settimeout(WAIT_S)
            closed.append(s.recv(4096).startswith(b"HTTP/1.1 408 "))

        threads = [threading.Thread(target=wait, args=(s,)) for s in socks]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for s in socks:
            s.close()
    assert closed == [True] * len(socks)
