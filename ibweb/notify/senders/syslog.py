"""The syslog channel: each notice of a batch as one RFC 5424 message, over UDP (RFC 5426) or TCP (RFC 6587).

A channel's ``config``: ``host``, ``port`` (514), ``transport`` (``udp`` or ``tcp``), ``facility`` (a name of
RFC 5424 table 1 as syslog.conf spells it, ``local0`` by default, or its code), ``app_name`` (``ibweb``),
``hostname`` (this machine's), ``sd_id`` (the structured data's enterprise suffix, ``32473``: RFC 5612's number
for examples; a site with its own IANA enterprise number sets it), ``max_udp_bytes`` (2048: what RFC 5426
section 3.2 says receivers should take; longer MSGs are cut there), ``timeout_s`` (5).

A message (RFC 5424 section 6)::

    <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [labels@PEN fabric="..." ...][ibweb@PEN key="..." ...] BOM MSG

PRI is facility x 8 + severity; a notice's severity maps to crit (2), warning (4) or informational (6), and a
resolved notice is a notice (5): the condition cleared. TIMESTAMP is when the condition started (firing) or
cleared (resolved), MSGID the notice's kind; the ``ibweb@PEN`` element has the notice's ``key``, the queue's
``delivery`` key of the message (the same when an attempt is repeated), ``state`` and ``url``; MSG is the summary
and the body (UTF-8, after a BOM: section 6.4). Over TCP each message is sent with octet-counting framing
(RFC 6587 section 3.4.1: ``LENGTH SP MESSAGE``), so a body's line breaks stay in its message.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from datetime import UTC
from typing import Any

from .base import ConfigError, Notice, SendResult

__all__ = ["SyslogSender", "SENDER", "FACILITIES", "format_message", "escape_param"]

#: RFC 5424 table 1, as syslog.conf names them.
FACILITIES = {name: code for code, name in enumerate(
    ["kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv", "ftp", "ntp",
     "audit", "alert", "clock", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"])}
#: A notice's severity as RFC 5424 table 2's code.
SEVERITIES = {"critical": 2, "error": 3, "warning": 4, "info": 6}
RESOLVED_SEVERITY = 5  # notice: normal but significant (the condition cleared)
BOM = b"\xef\xbb\xbf"
_FIELDS = {"host", "port", "transport", "facility", "app_name", "hostname", "sd_id", "max_udp_bytes", "timeout_s"}


class SyslogSender:
    """Sends each notice of a batch as one RFC 5424 message to the channel's syslog receiver, in one attempt."""

    kind = "syslog"

    def check_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The fields of the module's docstring, checked, with their defaults filled in."""
        unknown = sorted(set(config) - _FIELDS)
        if unknown:
            raise ConfigError(unknown[0], f"not a field of a syslog channel ({', '.join(sorted(_FIELDS))})")
        host, port, transport, timeout_s, limit = _endpoint(config)
        out = {"host": host, "port": port, "transport": transport, "timeout_s": timeout_s, "max_udp_bytes": limit,
               "facility": config.get("facility", "local0"), "app_name": config.get("app_name", "ibweb"),
               "sd_id": str(config.get("sd_id", "32473"))}
        _facility(out["facility"])
        _sd_suffix(out["sd_id"])
        for field, most in (("app_name", 48), ("hostname", 255)):
            value = config.get(field, out.get(field))
            if value is None:
                continue
            if not isinstance(value, str) or _field(value, most) != value:
                raise ConfigError(field, f"{value!r}: printable ASCII without spaces, at most {most} characters")
            out[field] = value
        return out

    def send(self, notices: Sequence[Notice], config: Mapping[str, Any]) -> SendResult:
        """Each notice as one message; ``config["delivery_key"]`` (the queue's) goes in each as ``delivery``."""
        try:
            host, port, transport, timeout_s, limit = _endpoint(config)
            messages = [format_message(n, config) for n in notices]
        except ConfigError as exc:
            return SendResult(ok=False, detail=f"channel config: {exc}", retry=False)
        if not messages:
            return SendResult(ok=True, detail="nothing to send")
        try:
            if transport == "tcp":
                with socket.create_connection((host, port), timeout=timeout_s) as sock:
                    sock.sendall(b"".join(b"%d %s" % (len(m), m) for m in messages))
                    sock.shutdown(socket.SHUT_WR)
            else:
                messages = [_fit(m, limit) for m in messages]
                family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
                with socket.socket(family, kind, proto) as sock:
                    sock.settimeout(timeout_s)
                    sock.connect(address)  # a connected socket hears of a closed port (ICMP) on the next send
                    for m in messages:
                        sock.send(m)
        except ConfigError as exc:
            return SendResult(ok=False, detail=f"channel config: {exc}", retry=False)
        except OSError as exc:  # refused, reset, timed out, no route, name not resolved
            return SendResult(ok=False, detail=f"syslog {transport} {host}:{port} not reached: "
                                               f"{type(exc).__name__}: {exc}", retry=True)
        return SendResult(ok=True, detail=f"{len(messages)} message(s) sent over {transport} to {host}:{port}"
                                          + (" (UDP: not acknowledged)" if transport == "udp" else ""))


def format_message(notice: Notice, config: Mapping[str, Any]) -> bytes:
    """One RFC 5424 message of ``notice`` (without transport framing)."""
    code = _facility(config.get("facility", "local0"))
    severity = RESOLVED_SEVERITY if notice.state == "resolved" else SEVERITIES.get(notice.severity, 5)
    when = (notice.ends_at if notice.state == "resolved" and notice.ends_at else notice.starts_at)
    stamp = when.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    pen = _sd_suffix(config.get("sd_id", "32473"))
    labels = "".join(f' {_sd_name(k)}="{escape_param(v)}"' for k, v in sorted(notice.labels.items()))
    own = {"key": notice.key, "delivery": config.get("delivery_key", ""), "state": notice.state, "url": notice.url}
    if notice.ends_at:
        own["ends"] = notice.ends_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    ibweb = "".join(f' {k}="{escape_param(v)}"' for k, v in own.items() if v)
    sd = (f"[labels@{pen}{labels}]" if labels else "") + f"[ibweb@{pen}{ibweb}]"
    header = " ".join([f"<{code * 8 + severity}>1", stamp,
                       _field(config.get("hostname") or socket.gethostname(), 255),
                       _field(config.get("app_name", "ibweb"), 48), str(os.getpid()), _field(notice.kind, 32), sd])
    text = notice.summary if not notice.body or notice.body == notice.summary else f"{notice.summary}\n{notice.body}"
    return f"{header} ".encode() + BOM + text.encode()


def escape_param(value: Any) -> str:
    """A PARAM-VALUE: ``"``, ``\\`` and ``]`` escaped with a backslash (RFC 5424 section 6.3.3)."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("]", "\\]")


def _endpoint(config: Mapping[str, Any]) -> tuple[str, int, str, float, int]:
    host = config.get("host")
    if not host or not isinstance(host, str):
        raise ConfigError("host", f"{host!r}: the syslog receiver's host name or address")
    transport = str(config.get("transport", "udp")).lower()
    if transport not in ("udp", "tcp"):
        raise ConfigError("transport", f"{config.get('transport')!r}: udp or tcp")
    bounds = {"port": (514, 1, 65535), "timeout_s": (5, 0.1, 60),
              "max_udp_bytes": (2048, 480, 65507)}  # RFC 5426 section 3.2; a UDP datagram's payload
    got = {}
    for field, (default, low, high) in bounds.items():
        value = config.get(field, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high or \
                (field != "timeout_s" and value != int(value)):
            raise ConfigError(field, f"{value!r}: a number from {low} to {high}")
        got[field] = value
    return host, int(got["port"]), transport, float(got["timeout_s"]), int(got["max_udp_bytes"])


def _facility(facility: Any) -> int:
    code = FACILITIES.get(facility) if isinstance(facility, str) else facility
    if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code <= 23:
        raise ConfigError("facility", f"{facility!r}: one of {', '.join(FACILITIES)}, or 0-23")
    return code


def _fit(message: bytes, limit: int) -> bytes:
    """``message`` cut to ``limit`` bytes within its MSG, at a character boundary (RFC 5424 section 6.1)."""
    if len(message) <= limit:
        return message
    head = message.index(BOM) + len(BOM)
    if head > limit:
        raise ConfigError("max_udp_bytes", f"a message's header and structured data take {head} bytes, over "
                                           f"{limit}: use TCP")
    return message[:head] + message[head:limit].decode(errors="ignore").encode()


def _field(value: Any, most: int) -> str:
    """A header field: printable US-ASCII without spaces, at most ``most`` characters, ``-`` when empty."""
    out = "".join(c if 33 <= ord(c) <= 126 else "_" for c in str(value))[:most]
    return out or "-"


def _sd_name(name: str) -> str:
    """An SD-NAME: printable US-ASCII but ``=``, space, ``]`` and ``"``, at most 32 characters."""
    return "".join(c if 33 <= ord(c) <= 126 and c not in '= ]"' else "_" for c in name)[:32] or "_"


def _sd_suffix(pen: Any) -> str:
    text = str(pen)
    if not text or not all(c.isdigit() or c == "." for c in text):
        raise ConfigError("sd_id", f"{pen!r}: an enterprise number (digits and dots)")
    return text


SENDER = SyslogSender()
