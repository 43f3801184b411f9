"""Credentials the API does not take are refused (401), never ignored.

DRF skips an ``Authorization`` header whose scheme no authentication class knows, so
``curl -u user:pass`` (``Basic``) would be served as an anonymous visitor: a script then reads
what anonymous visitors see and believes it is signed in. :class:`RefuseUnknownSchemes`, last of
the API's authentication classes, answers such a request 401 naming the schemes that work.
"""

from __future__ import annotations

from rest_framework import authentication, exceptions, status

__all__ = ["RefuseUnknownSchemes", "UnsupportedScheme"]


class UnsupportedScheme(exceptions.APIException):
    """401 for an ``Authorization`` scheme the endpoint does not take (with ``WWW-Authenticate: Token``)."""

    status_code = status.HTTP_401_UNAUTHORIZED
    default_code = "unsupported_authorization"

    def __init__(self, scheme: str) -> None:
        super().__init__(f"Authorization scheme {scheme[:20]!r} is not supported here: sign in (session) or send "
                         "'Authorization: Token <key>'")
        self.auth_header = 'Token realm="api"'


class RefuseUnknownSchemes(authentication.BaseAuthentication):
    """Reached only when no earlier class authenticated: any ``Authorization`` header left is refused."""

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if header:
            raise UnsupportedScheme(header[0].decode(errors="replace"))
        return None
