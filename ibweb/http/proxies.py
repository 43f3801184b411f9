"""Which reverse proxies' forwarding headers the server believes: ``IBWEB_TRUSTED_PROXIES`` (issues 26, 35).

``X-Forwarded-For``, ``-Proto`` and ``-Host`` pick the client address the sign-in throttle counts, whether a
request counts as HTTPS (the redirect to HTTPS, HSTS, secure cookies) and the host of absolute URLs. They are
believed only from a peer among ``IBWEB_TRUSTED_PROXIES`` (none by default), in production too:
:class:`ForwardedHeaders`, around the whole ASGI application, applies them to the scope (client, scheme, host)
for such a peer and removes them from every request, so nothing after it (Django's settings, a view) reads
one that nobody vouched for. uvicorn's own proxy-header handling is off (:mod:`ibweb.serve`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from django.core.exceptions import ImproperlyConfigured

__all__ = ["trusted_proxies", "forwarded", "ForwardedHeaders", "FORWARDING_HEADERS"]

#: The headers a proxy sets, believed from trusted peers only and removed from every request.
FORWARDING_HEADERS = (b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host")
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_proxies(values: list[str]) -> list[str]:
    """``values`` checked: each an IP address or a network in CIDR form, else ImproperlyConfigured naming it."""
    out = []
    for value in values:
        try:
            out.append(str(ipaddress.ip_network(value, strict=False)) if "/" in value
                       else str(ipaddress.ip_address(value)))
        except ValueError:
            raise ImproperlyConfigured(f"IBWEB_TRUSTED_PROXIES: {value!r} is not an IP address or CIDR network") \
                from None
    return out


def _networks(values: Sequence[str]) -> list[_Network]:
    return [ipaddress.ip_network(v, strict=False) for v in values]


def _trusted(address: str, networks: Sequence[_Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return False
    return any(ip in net for net in networks)


def _client(values: list[str], networks: Sequence[_Network]) -> str | None:
    """The client of an ``X-Forwarded-For`` chain: the nearest address that is not a trusted proxy."""
    hops = [h.strip() for v in values for h in v.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, networks):
            break
    else:
        hop = hops[0] if hops else ""
    try:
        return str(ipaddress.ip_address(hop.strip("[]")))
    except ValueError:
        return None


def forwarded(scope: dict, networks: Sequence[_Network]) -> dict:
    """``scope`` without its forwarding headers; from a trusted peer, with their client, scheme and host applied.

    ``-Proto`` and ``-Host`` count only as one value (``https``/``http``; a host); a malformed one is dropped.
    """
    headers = scope.get("headers") or []
    if not any(name in FORWARDING_HEADERS for name, _ in headers):
        return scope
    kept = [(n, v) for n, v in headers if n not in FORWARDING_HEADERS]
    scope = {**scope, "headers": kept}
    peer = scope.get("client")
    if not peer or not _trusted(str(peer[0]), networks):
        return scope
    sent = {name: [v.decode("latin-1") for n, v in headers if n == name] for name in FORWARDING_HEADERS}
    client = _client(sent[b"x-forwarded-for"], networks)
    if client is not None:
        scope["client"] = (client, 0)
    proto = sent[b"x-forwarded-proto"]
    if len(proto) == 1 and proto[0].strip().lower() in ("http", "https"):
        scheme = proto[0].strip().lower()
        scope["scheme"] = scheme.replace("http", "ws") if scope["type"] == "websocket" else scheme
    host = sent[b"x-forwarded-host"]
    if len(host) == 1 and host[0].strip() and "," not in host[0]:
        scope["headers"] = [(n, v) for n, v in kept if n != b"host"] + [(b"host", host[0].strip().encode("latin-1"))]
    return scope


class ForwardedHeaders:
    """ASGI middleware: :func:`forwarded` on every HTTP and websocket scope (``trusted``: addresses or CIDRs;
    default ``settings.IBWEB_TRUSTED_PROXIES``)."""

    def __init__(self, app, trusted: Sequence[str] | None = None) -> None:
        if trusted is None:
            from django.conf import settings

            trusted = settings.IBWEB_TRUSTED_PROXIES
        self.app, self.networks = app, _networks(trusted)

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            scope = forwarded(scope, self.networks)
        return await self.app(scope, receive, send)
