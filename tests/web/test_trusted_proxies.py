"""Forwarding headers are believed only from IBWEB_TRUSTED_PROXIES (issue 26).

uvicorn believed ``X-Forwarded-For`` from 127.0.0.1 by default, so any local process could pick the
address the sign-in throttle counts, a new one per attempt. Every launch goes through ``ibweb.serve``.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from ibweb.proxies import trusted_proxies
from ibweb.serve import uvicorn_arguments
from tests.server import running_server

ROOT = Path(__file__).resolve().parents[2]


def test_trusted_proxies_are_addresses_or_networks():
    assert trusted_proxies(["10.0.0.7", "10.1.0.0/16", "::1", "fd00::1/64"]) == [
        "10.0.0.7", "10.1.0.0/16", "::1", "fd00::/64"]
    with pytest.raises(ImproperlyConfigured, match="IBWEB_TRUSTED_PROXIES: 'proxy.example' is not"):
        trusted_proxies(["proxy.example"])


def test_uvicorn_is_told_exactly_the_trusted_proxies():
    args = ["ibweb.asgi:application", "--port", "8000"]
    assert uvicorn_arguments(args, []) == [*args, "--no-proxy-headers"]
    assert uvicorn_arguments(args, ["10.0.0.7", "10.1.0.0/16"]) == [
        *args, "--proxy-headers", "--forwarded-allow-ips", "10.0.0.7,10.1.0.0/16"]
    for decided in ("--proxy-headers", "--forwarded-allow-ips=*"):
        with pytest.raises(ValueError, match="IBWEB_TRUSTED_PROXIES"):
            uvicorn_arguments([*args, decided], [])


def test_every_launch_goes_through_ibweb_serve():
    for name in ("Makefile", "Dockerfile", "compose.yaml", "tests/server.py"):
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
