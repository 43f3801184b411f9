"""Which reverse proxies' forwarding headers the server believes: ``IBWEB_TRUSTED_PROXIES`` (issue 26).

uvicorn believes ``X-Forwarded-For`` and ``-Proto`` from 127.0.0.1 unless told otherwise, so any local
process (a sidecar, a compromised collector) could pick the client address the sign-in throttle
counts. ibweb starts it through :mod:`ibweb.serve`, which passes exactly these addresses (none by default).
"""

from __future__ import annotations

import ipaddress

from django.core.exceptions import ImproperlyConfigured

__all__ = ["trusted_proxies"]


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
