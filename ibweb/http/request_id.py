"""A request ID on every request, its response and its log lines, so a 500 can be found in the log.

:class:`RequestIdMiddleware` (first in ``MIDDLEWARE``) takes a sane incoming ``X-Request-ID``
(1 to 64 of ``A-Z a-z 0-9 . _ : -``; anything else is replaced, never echoed) or makes one
(32 hex digits), keeps it on ``request.request_id`` and in a context variable for the
request's log lines, and returns it in the response's ``X-Request-ID`` header.

Every response of 500 and above, a DRF view's or a plain view's, raised or returned, is logged
once by Django's ``django.request`` logger (with the traceback when it was raised);
``settings.LOGGING`` sends that logger to the console with :class:`RequestIdFilter`, which puts
the ID on the record (``%(request_id)s``) and adds it to the message.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse

__all__ = ["RequestIdMiddleware", "RequestIdFilter", "HEADER", "request_id_of", "current_request_id"]

#: The header read and written.
HEADER = "X-Request-ID"
_META = "HTTP_X_REQUEST_ID"
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_CURRENT: ContextVar[str] = ContextVar("ibweb_request_id", default="-")


def request_id_of(request: HttpRequest) -> str:
    """The request's ID: its ``X-Request-ID`` when sane, else a new one."""
    sent = request.META.get(_META, "")
    return sent if _SANE.fullmatch(sent) else uuid.uuid4().hex


def current_request_id() -> str:
    """The ID of the request being served in this context (``"-"`` outside a request)."""
    return _CURRENT.get()


class RequestIdMiddleware:
    """Gives each request its ID and returns it in ``X-Request-ID`` (sync and async)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest):
        if iscoroutinefunction(self):
            return self._acall(request)
        token = self._begin(request)
        try:
            return self._end(request, self.get_response(request))
        finally:
            _CURRENT.reset(token)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        token = self._begin(request)
        try:
            return self._end(request, await self.get_response(request))
        finally:
            _CURRENT.reset(token)

    @staticmethod
    def _begin(request: HttpRequest):
        request.request_id = request_id_of(request)
        return _CURRENT.set(request.request_id)

    @staticmethod
    def _end(request: HttpRequest, response: HttpResponse) -> HttpResponse:
        response[HEADER] = request.request_id
        return response


class RequestIdFilter(logging.Filter):
    """Puts the request ID on every record (``request_id``); a ``django.request`` record's message names it."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        rid = getattr(request, "request_id", None) or current_request_id()
        record.request_id = rid
        if request is not None and not getattr(record, "_ibweb_request_id", False):
            record.msg = f"{record.msg} [request {rid}]"
            record._ibweb_request_id = True
        return True
