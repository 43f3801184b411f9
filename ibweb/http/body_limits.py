"""How large a request body or websocket message may be, enforced before any view sees it (issue 14).

Django's ASGI handler reads a whole request body (spooling it to disk) before the
view runs, and DRF parses JSON from the stream without
``DATA_UPLOAD_MAX_MEMORY_SIZE``; so the cap is applied twice:

* :class:`BodyLimitMiddleware`, an ASGI wrapper around the HTTP and websocket apps,
  answers ``413`` from the ``Content-Length`` header alone, or stops reading (and
  answers ``413``) as soon as a streamed body passes the cap; it closes a websocket
  with ``1009`` (message too big) on a larger message.
* :class:`JSONParser`, :class:`FormParser` and :class:`MultiPartParser`, the DRF
  parsers, check the same cap (for servers and test clients that bypass the ASGI app).
  The JSON parser then reads through :func:`ibweb.http.json_input.loads` (issue 26): a body nested
  deeper than 64 levels, or of more objects and arrays than :func:`max_json_containers` or
  more values than :func:`max_json_values` allow, is a 400 before it is parsed.

The cap of a path is the first of :data:`BODY_LIMITS` whose pattern matches, else
``settings.IBWEB_MAX_BODY_BYTES``. Sizes, all from the environment:

===============================  =========  ====================================================
setting                          default    what needs it
===============================  =========  ====================================================
``IBWEB_MAX_BODY_BYTES``         8 MiB      any other body: a P_Key with all 49,151 GUIDs of a
                                            subnet is about 1.2 MB of JSON
``IBWEB_MAX_UPLOAD_BYTES``       65 MiB     topology, partitions.conf, cabling plan, job pushes:
                                            the 64 MiB file limit plus the form around it; the
                                            ibnetdiscover file of the largest radix-64 subnet
                                            (45,248 hosts, 3,878 switches) is 24 MiB
``IBWEB_MAX_PUSH_BYTES``         256 MiB    a counter push of every cabled port of that subnet
                                            (273,152 ports, 22 counters each, ~716 bytes) with
                                            its iblinkinfo: about 240 MB
``IBWEB_MAX_DEVICE_PUSH_BYTES``  512 MiB    a device push with a whole-fabric ``ibdiagnet2.db_csv``
                                            of that subnet: about 1.5 kB per cabled port in its
                                            PORTS (189 B), PM_INFO (547 B), CABLE_INFO (369 B),
                                            PHY_DB16 (152 B) and LINKS (42 B) rows (widths of the
                                            fixtures in tests/data), ~410 MB, plus JSON escapes
``IBWEB_MAX_WS_MESSAGE_BYTES``   64 KiB     a browser sends only small control messages
===============================  =========  ====================================================

Why hand-written (a functional reason, not a measured one): none of the servers and frameworks in
``requirements.lock`` caps a request body. uvicorn (0.55) has ``--ws-max-size`` for websocket
messages and nothing for HTTP bodies (``uvicorn --help``); Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE``
excludes file uploads and is checked only when ``request.body`` or ``request.POST`` is read, after
its ASGI handler has already read and spooled the whole body; DRF's parsers read the stream with no
cap. The caps also differ per path (a counter push may be 32 times the default), which only an
application-level rule knows. The ASGI wrapper and the three parser subclasses above are that rule.
"""

from __future__ import annotations

import codecs
import re

from django.conf import settings
from rest_framework import exceptions, parsers

from .json_input import JSONInputError, loads

__all__ = ["BODY_LIMITS", "body_limit", "too_large_message", "BodyLimitMiddleware", "PayloadTooLarge",
           "JSONParser", "FormParser", "MultiPartParser", "max_json_containers", "max_json_values"]

#: (path pattern, setting that holds its cap, what it is for); first match wins.
BODY_LIMITS: tuple[tuple[re.Pattern, str, str], ...] = (
    (re.compile(r"^/api/telemetry/fabrics/[^/]+/samples/$"), "IBWEB_MAX_PUSH_BYTES", "a counter push"),
    (re.compile(r"^/api/telemetry/fabrics/[^/]+/health/$"), "IBWEB_MAX_PUSH_BYTES", "a link health push"),
    (re.compile(r"^/api/telemetry/fabrics/[^/]+/devices/$"), "IBWEB_MAX_DEVICE_PUSH_BYTES", "a device push"),
    (re.compile(r"^/api/fabrics/fabrics/(?:[^/]+/)?$"), "IBWEB_MAX_UPLOAD_BYTES", "a fabric with its topology"),
    (re.compile(r"^/fabrics/(?:add|[^/]+/edit|[^/]+/plan)/$"), "IBWEB_MAX_UPLOAD_BYTES", "an uploaded file"),
    (re.compile(r"^/tenancy/fabrics/[^/]+/import/$"), "IBWEB_MAX_UPLOAD_BYTES", "an uploaded partitions.conf"),
    (re.compile(r"^/api/tenancy/fabrics/[^/]+/opensm/[^/]+$"), "IBWEB_MAX_UPLOAD_BYTES", "an OpenSM file"),
    (re.compile(r"^/api/twin/fabrics/[^/]+/(?:plan|jobs)/$"), "IBWEB_MAX_UPLOAD_BYTES", "a plan or job push"),
)


def body_limit(path: str) -> int:
    """The largest request body, in bytes, accepted for ``path``."""
    for pattern, setting, _ in BODY_LIMITS:
        if pattern.match(path):
            return getattr(settings, setting)
    return settings.IBWEB_MAX_BODY_BYTES


def too_large_message(path: str, size: int | None) -> str:
    """The text of a 413 for ``path`` (``size``: the body's length when known)."""
    limit = body_limit(path)
    what = next((why for pattern, _, why in BODY_LIMITS if pattern.match(path)), "a request body")
    got = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
    return f"request body too large: {got}; {what} here may have at most {limit:,} bytes"


class PayloadTooLarge(exceptions.APIException):
    status_code = 413
    default_detail = "request body too large"
    default_code = "payload_too_large"


def _content_length(headers) -> int | None:
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyLimitMiddleware:
    """ASGI middleware: 413 for HTTP bodies above :func:`body_limit`, close 1009 for large websocket messages."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            return await self._http(scope, receive, send)
        if scope["type"] == "websocket":
            return await self._websocket(scope, receive, send)
        return await self.app(scope, receive, send)

    async def _http(self, scope, receive, send):
        path = scope.get("path", "")
        limit = body_limit(path)
        declared = _content_length(scope.get("headers", ()))
        if declared is not None and declared > limit:
            return await _answer_413(send, too_large_message(path, declared))
        state = {"read": 0, "over": False, "started": False}

        async def bounded_receive():
            message = await receive()
            if message["type"] == "http.request":
                state["read"] += len(message.get("body", b""))
                if state["read"] > limit:
                    state["over"] = True
                    return {"type": "http.disconnect"}  # Django stops reading and answers nothing
            return message

        async def tracked_send(message):
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await self.app(scope, bounded_receive, tracked_send)
        if state["over"] and not state["started"]:
            await _answer_413(send, too_large_message(path, None))

    async def _websocket(self, scope, receive, send):
        limit = settings.IBWEB_MAX_WS_MESSAGE_BYTES

        async def bounded_receive():
            message = await receive()
            if message["type"] == "websocket.receive":
                size = len(message.get("bytes") or b"") + len((message.get("text") or "").encode())
                if size > limit:
                    await send({"type": "websocket.close", "code": 1009,
                                "reason": f"message of {size:,} bytes; at most {limit:,}"[:120]})
                    return {"type": "websocket.disconnect", "code": 1009}
            return message

        return await self.app(scope, bounded_receive, send)


async def _answer_413(send, text: str) -> None:
    import json

    body = json.dumps({"detail": text}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def _check(parser_context: dict | None, stream=None) -> int:
    """The cap for the request in ``parser_context``; raises :class:`PayloadTooLarge` when its declared size is over."""
    request = (parser_context or {}).get("request")
    path = getattr(request, "path", "") if request is not None else ""
    limit = body_limit(path)
    meta = getattr(request, "META", {}) if request is not None else {}
    try:
        declared = int(meta.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:
        raise PayloadTooLarge(too_large_message(path, declared))
    return limit


class _Capped:
    """A read-only stream that raises :class:`PayloadTooLarge` past ``limit`` bytes."""

    def __init__(self, stream, limit: int, path: str) -> None:
        self.stream, self.limit, self.path, self.read_so_far = stream, limit, path, 0

    def read(self, size: int = -1) -> bytes:
        want = self.limit + 1 - self.read_so_far if size is None or size < 0 else min(size, self.limit + 1)
        data = self.stream.read(want)
        self.read_so_far += len(data)
        if self.read_so_far > self.limit:
            raise PayloadTooLarge(too_large_message(self.path, None))
        return data


#: Bytes of a path's cap per JSON object or array it may hold: Python spends 50-200 bytes on each
#: (an empty dict 64), so a body of ``[{},{},...]`` would cost twenty times its size parsed.
#: 64 keeps the largest legitimate bodies (a full counter push: about 1.1 M objects and arrays
#: in 240 MB; a 49,151-member P_Key) well inside.
BYTES_PER_CONTAINER = 64


def max_json_containers(limit: int) -> int:
    """The most JSON objects and arrays a body under a cap of ``limit`` bytes may hold."""
    return max(1024, limit // BYTES_PER_CONTAINER)


#: Bytes of an upload's or push's cap per JSON value it may hold: a value is two bytes of JSON at least, and
#: 8 (a pointer) to 32 (a float) once parsed. A full counter push (1,048,576 samples of about 28 values)
#: needs 29 M of the 33.5 M its 256 MiB allow.
BYTES_PER_VALUE = 8


def max_json_values(limit: int) -> int:
    """The most JSON values a body under a cap of ``limit`` bytes may hold: ``settings.IBWEB_MAX_JSON_VALUES``
    (1,000,000), or one per :data:`BYTES_PER_VALUE` of a cap above ``IBWEB_MAX_BODY_BYTES`` (uploads, pushes)."""
    if limit <= settings.IBWEB_MAX_BODY_BYTES:
        return settings.IBWEB_MAX_JSON_VALUES
    return max(settings.IBWEB_MAX_JSON_VALUES, limit // BYTES_PER_VALUE)


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser through :func:`ibweb.http.json_input.loads`: bodies above the path's cap are a 413; bodies
    nested deeper than 64 levels, of more objects and arrays than :func:`max_json_containers` or more values
    than :func:`max_json_values` a 400, all before anything is parsed."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = _check(parser_context)
        request = (parser_context or {}).get("request")
        body = _Capped(stream, limit, getattr(request, "path", "")).read()
        encoding = (parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET
        try:
            if codecs.lookup(encoding).name != "utf-8":  # the scan reads UTF-8
                body = body.decode(encoding).encode("utf-8", "surrogatepass")
            return loads(body, max_values=max_json_values(limit), max_containers=max_json_containers(limit),
                         what="JSON body")
        except (LookupError, UnicodeError) as exc:
            raise exceptions.ParseError(f"JSON body not in its charset {encoding[:40]!r}: "
                                        f"{exc.__class__.__name__}") from None
        except JSONInputError as exc:
            raise exceptions.ParseError(str(exc)) from None


class FormParser(parsers.FormParser):
    """DRF's form parser with the path's cap (Django also applies ``DATA_UPLOAD_MAX_*``)."""

    def parse(self, stream, media_type=None, parser_context=None):
        _check(parser_context)
        return super().parse(stream, media_type, parser_context)


class MultiPartParser(parsers.MultiPartParser):
    """DRF's multipart parser with the path's cap on the declared length (files spool to disk beyond that)."""

    def parse(self, stream, media_type=None, parser_context=None):
        _check(parser_context)
        return super().parse(stream, media_type, parser_context)
