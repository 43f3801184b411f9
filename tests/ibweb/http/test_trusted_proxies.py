"""Forwarding headers are believed only from IBWEB_TRUSTED_PROXIES (issues 26, 35).

uvicorn believed ``X-Forwarded-For`` from 127.0.0.1 by default, so any local process could pick the
address the sign-in throttle counts, a new one per attempt. Every launch goes through ``ibweb.serve``.
Production believed ``X-Forwarded-Proto`` from anyone (``SECURE_PROXY_SSL_HEADER``): a plain-HTTP request
claiming HTTPS got 200 with HSTS instead of the redirect. ``ibweb.http.proxies.ForwardedHeaders`` decides all three.
"""

from __future__ import annotations

import asyncio
import http.client
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from ibweb.http.proxies import ForwardedHeaders, trusted_proxies
from ibweb.serve import uvicorn_arguments
from tests.support.server import running_server

ROOT = Path(__file__).resolve().parents[3]


def test_trusted_proxies_are_addresses_or_networks():
    assert trusted_proxies(["10.0.0.7", "10.1.0.0/16", "::1", "fd00::1/64"]) == [
        "10.0.0.7", "10.1.0.0/16", "::1", "fd00::/64"]
    with pytest.raises(ImproperlyConfigured, match="IBWEB_TRUSTED_PROXIES: 'proxy.example' is not"):
        trusted_proxies(["proxy.example"])


def test_uvicorn_believes_no_proxy_header_itself():
    args = ["ibweb.asgi:application", "--port", "8000"]
    assert uvicorn_arguments(args) == [*args, "--no-proxy-headers"]
    for decided in ("--proxy-headers", "--forwarded-allow-ips=*"):
        with pytest.raises(ValueError, match="IBWEB_TRUSTED_PROXIES"):
            uvicorn_arguments([*args, decided])


def _seen(peer: str, headers: dict[str, str], kind: str = "http") -> dict:
    """The scope the application behind :class:`ForwardedHeaders` (trusting 10.0.0.7 and 10.1.0.0/16) gets."""
    got = {}

    async def app(scope, receive, send):
        got.update(scope)

    scope = {"type": kind, "scheme": "ws" if kind == "websocket" else "http", "client": (peer, 5000),
             "headers": [(b"host", b"ibweb.local")] + [(k.lower().encode(), v.encode()) for k, v in headers.items()]}
    asyncio.run(ForwardedHeaders(app, ["10.0.0.7", "10.1.0.0/16"])(scope, None, None))
    return {"client": got["client"][0], "scheme": got["scheme"], "host": dict(got["headers"])[b"host"].decode(),
            "forwarding": sorted(k.decode() for k, _ in got["headers"] if k.startswith(b"x-forwarded"))}


CLAIMS = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}


@pytest.mark.parametrize("header", sorted(CLAIMS))
@pytest.mark.parametrize("kind", ["http", "websocket"])
def test_each_forwarding_header_counts_from_a_trusted_proxy_only_and_reaches_nothing_after(header, kind):
    untrusted = _seen("198.51.100.4", {header: CLAIMS[header]}, kind)
    assert untrusted == {"client": "198.51.100.4", "scheme": "ws" if kind == "websocket" else "http",
                         "host": "ibweb.local", "forwarding": []}
    trusted = _seen("10.1.2.3", {header: CLAIMS[header]}, kind)
    field = {"X-Forwarded-For": "client", "X-Forwarded-Proto": "scheme", "X-Forwarded-Host": "host"}[header]
    claim = "wss" if (header, kind) == ("X-Forwarded-Proto", "websocket") else CLAIMS[header]
    assert trusted[field] == claim and trusted["forwarding"] == []


def test_a_chain_of_proxies_names_the_first_untrusted_hop_and_odd_values_are_ignored():
    chain = {"X-Forwarded-For": "198.51.100.1, 203.0.113.9, 10.1.0.5"}  # client-claimed, real client, our proxy
    assert _seen("10.0.0.7", chain)["client"] == "203.0.113.9"
    odd = {"X-Forwarded-For": "not-an-address", "X-Forwarded-Proto": "https, http", "X-Forwarded-Host": "a, b"}
    assert _seen("10.0.0.7", odd) == {"client": "10.0.0.7", "scheme": "http", "host": "ibweb.local",
                                      "forwarding": []}


def test_every_launch_goes_through_ibweb_serve():
    for name in ("Makefile", "Dockerfile", "compose.yaml", "tests/support/server.py"):
        text = (ROOT / name).read_text()
        assert "ibweb.serve" in text and not re.search(r"uvicorn[\"']?,? +[\"']?ibweb\.asgi", text), name


def _attempts(server, count: int) -> list[int]:
    """``count`` failed sign-ins from 127.0.0.1, each claiming another address in ``X-Forwarded-For``."""
    page = urllib.request.urlopen(server.url + "/accounts/login/", timeout=10)
    csrf = re.search(r"csrftoken=([^;]+)", page.headers["Set-Cookie"]).group(1)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode()).group(1)
    codes = []
    for i in range(count):
        body = f"csrfmiddlewaretoken={token}&username=user{i}&password=wrong".encode()
        request = urllib.request.Request(server.url + "/accounts/login/", data=body, headers={
            "Cookie": f"csrftoken={csrf}", "Content-Type": "application/x-www-form-urlencoded",
            "X-Forwarded-For": f"203.0.113.{i + 1}"})
        try:
            codes.append(urllib.request.urlopen(request, timeout=10).status)
        except urllib.error.HTTPError as exc:
            codes.append(exc.code)
    return codes


def test_a_local_process_cannot_choose_the_address_the_throttle_counts(tmp_path):
    with running_server(tmp_path) as server:
        assert _attempts(server, 11) == [200] * 10 + [429]  # all counted against 127.0.0.1


def test_a_configured_proxy_is_believed(tmp_path):
    with running_server(tmp_path, extra_env={"IBWEB_TRUSTED_PROXIES": "127.0.0.1"}) as server:
        assert _attempts(server, 11) == [200] * 11  # each claimed address is counted apart


def _get(server, path: str, source: str, headers: dict[str, str]) -> http.client.HTTPResponse:
    """``GET path`` over plain HTTP from the local address ``source`` (127.0.0.1 or another loopback address)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10, source_address=(source, 0))
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


def test_production_believes_forwarding_headers_from_its_trusted_proxy_only(tmp_path):
    """127.0.0.2 is the configured proxy; 127.0.0.1 is any other peer (both loopback, one server)."""
    env = {"IBWEB_ENV": "production", "SECRET_KEY": "x" * 50, "ALLOWED_HOSTS": "127.0.0.1,ibweb.example",
           "IBWEB_TRUSTED_PROXIES": "127.0.0.2", "IBWEB_ENGINE_EMBEDDED": "0"}
    with running_server(tmp_path, extra_env=env, ready="/healthz") as server:
        page, here = "/accounts/login/", f"127.0.0.1:{server.port}"
        r = _get(server, page, "127.0.0.1", {"X-Forwarded-Proto": "https"})
        assert r.status == 301 and r.headers["Location"] == f"https://{here}{page}"
        assert "Strict-Transport-Security" not in r.headers
        r = _get(server, page, "127.0.0.1", {"X-Forwarded-Host": "ibweb.example"})
        assert r.status == 301 and r.headers["Location"] == f"https://{here}{page}"
        r = _get(server, page, "127.0.0.2", {"X-Forwarded-Proto": "https"})
        assert r.status == 200 and r.headers["Strict-Transport-Security"].startswith("max-age=31536000")
        r = _get(server, page, "127.0.0.2", {"X-Forwarded-Host": "ibweb.example"})
        assert r.status == 301 and r.headers["Location"] == f"https://ibweb.example{page}"
