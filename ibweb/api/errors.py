"""API errors that are the client's conflict, not the server's failure: 409 instead of a 500.

Credentials that were sent and refused (a wrong token) answer 401 with ``WWW-Authenticate``
(see also :mod:`ibweb.auth.unknown_schemes`).

A unique constraint another writer won meanwhile (a unique ``IntegrityError`` after
validation passed) and a delete of a row others still use (``ProtectedError``, ``RestrictedError``)
answer ``409 Conflict`` with what clashed; everything else goes to DRF's handler.
"""

from __future__ import annotations

from django.db import IntegrityError
from django.db.models import ProtectedError, RestrictedError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

__all__ = ["exception_handler"]


def exception_handler(exc, context) -> Response | None:
    """DRF's handler, plus 409 for conflicts with the database's constraints and 401 for wrong credentials."""
    if isinstance(exc, exceptions.AuthenticationFailed):  # credentials sent and refused: 401 (DRF makes it a 403
        exc.status_code = status.HTTP_401_UNAUTHORIZED  # when the first authentication class is the session's)
        exc.auth_header = getattr(exc, "auth_header", None) or 'Token realm="api"'

    if isinstance(exc, ProtectedError | RestrictedError):
        users = sorted({str(o) for o in (exc.protected_objects if isinstance(exc, ProtectedError)
                                         else exc.restricted_objects)})
        more = f" and {len(users) - 5} more" if len(users) > 5 else ""
        return Response({"detail": f"still used by {', '.join(users[:5])}{more}: change or delete those first"},
                        status=status.HTTP_409_CONFLICT)
    if isinstance(exc, IntegrityError) and "unique" in str(exc).lower():  # others are defects: a 500
        return Response({"detail": "conflicts with a change saved meanwhile (a name, P_Key or member that must be "
                                   "unique): read it again and retry"}, status=status.HTTP_409_CONFLICT)
    return drf_exception_handler(exc, context)
