"""``python -m ibweb.serve [uvicorn arguments]``: uvicorn, believing forwarding headers only from trusted proxies.

Every launch (``make run``, compose, the Dockerfile, the tests' server) goes through here: the
arguments are passed on to uvicorn with ``--forwarded-allow-ips`` set to ``IBWEB_TRUSTED_PROXIES``, or
``--no-proxy-headers`` when it is empty (the default), so the client address a view sees
(``REMOTE_ADDR``) is the peer's unless the peer is a configured proxy. Arguments that would choose
otherwise are refused.
"""

from __future__ import annotations

import os
import sys

__all__ = ["uvicorn_arguments", "main"]

#: uvicorn options that this launcher decides.
DECIDED = ("--proxy-headers", "--no-proxy-headers", "--forwarded-allow-ips")
#: The HTTP protocol every launch serves: uvicorn's, with deadlines for slow clients (ibweb.http_timeouts).
HTTP_PROTOCOL = "ibweb.http_timeouts:HttpProtocol"


def uvicorn_arguments(args: list[str], trusted: list[str]) -> list[str]:
    """``args`` plus the proxy options for ``trusted`` (addresses or CIDRs); ValueError on a decided option."""
    for arg in args:
        if arg.split("=", 1)[0] in DECIDED:
            raise ValueError(f"{arg.split('=', 1)[0]}: set IBWEB_TRUSTED_PROXIES instead")
    if not trusted:
        return [*args, "--no-proxy-headers"]
    return [*args, "--proxy-headers", "--forwarded-allow-ips", ",".join(trusted)]


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")
    from django.conf import settings

    try:
        args = uvicorn_arguments(list(sys.argv[1:] if argv is None else argv), settings.IBWEB_TRUSTED_PROXIES)
        args += ["--http", HTTP_PROTOCOL]
    except ValueError as exc:
        sys.exit(f"ibweb.serve: {exc}")
    import uvicorn

    uvicorn.main.main(args=args, prog_name="python -m ibweb.serve")


if __name__ == "__main__":
    main()
