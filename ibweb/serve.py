"""``python -m ibweb.serve [uvicorn arguments]``: uvicorn, believing forwarding headers only from trusted proxies.

Every launch (``make run``, compose, the Dockerfile, the tests' server) goes through here: the
arguments are passed on to uvicorn with ``--no-proxy-headers``: the application itself applies the
forwarding headers of ``IBWEB_TRUSTED_PROXIES`` (``X-Forwarded-For``, ``-Proto`` and ``-Host``, which
uvicorn does not handle) and drops everyone else's (:class:`ibweb.http.proxies.ForwardedHeaders`), so the
client address a view sees (``REMOTE_ADDR``) is the peer's unless the peer is a configured proxy.
Arguments that would choose otherwise are refused.
"""

from __future__ import annotations

import os
import sys

__all__ = ["uvicorn_arguments", "main"]

#: uvicorn options that this launcher decides.
DECIDED = ("--proxy-headers", "--no-proxy-headers", "--forwarded-allow-ips")
#: The HTTP protocol every launch serves: uvicorn's, with deadlines for slow clients (ibweb.http.timeouts).
HTTP_PROTOCOL = "ibweb.http.timeouts:HttpProtocol"


def uvicorn_arguments(args: list[str]) -> list[str]:
    """``args`` with uvicorn's proxy headers off (the application decides); ValueError on a decided option."""
    for arg in args:
        if arg.split("=", 1)[0] in DECIDED:
            raise ValueError(f"{arg.split('=', 1)[0]}: set IBWEB_TRUSTED_PROXIES instead")
    return [*args, "--no-proxy-headers"]


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")
    try:
        args = uvicorn_arguments(list(sys.argv[1:] if argv is None else argv))
        args += ["--http", HTTP_PROTOCOL]
    except ValueError as exc:
        sys.exit(f"ibweb.serve: {exc}")
    import uvicorn

    uvicorn.main.main(args=args, prog_name="python -m ibweb.serve")


if __name__ == "__main__":
    main()
