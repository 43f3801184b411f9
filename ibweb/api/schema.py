"""How the OpenAPI schema (``/api/schema/``, drf-spectacular) describes the API's authentication classes.

Without these, every view's schema logged "could not resolve authenticator" (issue 35): the schema is generated
with no warning or error (``tests/ibweb/api/test_api_schema.py`` runs ``manage.py spectacular --fail-on-warn``).
Imported by :mod:`ibweb.urls`, next to the schema's route.
"""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """``Authorization: Token <key>`` (:class:`ibweb.accounts.authentication.ApiTokenAuthentication`)."""

    target_class = "ibweb.accounts.authentication.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema) -> dict:
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "`Token <key>`: an API token (issued in the admin)."}


class RouteBearerScheme(OpenApiAuthenticationExtension):
    """``Authorization: Bearer <key>`` of a push or job token, on the routes that take one
    (:class:`ibweb.auth.bearer.RouteBearerAuthentication`)."""

    target_class = "ibweb.auth.bearer.RouteBearerAuthentication"
    name = "bearerToken"

    def get_security_requirement(self, auto_schema):
        return {self.name: []} if getattr(auto_schema.view, "bearer_authentication", None) else None

    def get_security_definition(self, auto_schema) -> dict:
        return {"type": "http", "scheme": "bearer",
                "description": "A collector's push token or a job source's token, on its own routes only."}


class RefuseUnknownSchemesScheme(OpenApiAuthenticationExtension):
    """:class:`ibweb.auth.unknown_schemes.RefuseUnknownSchemes` admits nobody (it refuses unknown schemes)."""

    target_class = "ibweb.auth.unknown_schemes.RefuseUnknownSchemes"
    name: list[str] = []

    def get_security_requirement(self, auto_schema):
        return None

    def get_security_definition(self, auto_schema) -> list:
        return []
